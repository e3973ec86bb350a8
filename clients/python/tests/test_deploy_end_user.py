"""`deploy` naming an end user (decision 0390), sync and async, against the real `mt serve`: the person's connection
lists the servers of the repo's OAuth2 MCP connectors. A deploy naming no one warns that the tool's schema was not
read; naming a person with no connection is refused with 409 `api:deploy:mcp-not-connected` before anything is sent
(the MCP server's address answers nothing) and deploys nothing. The listing itself is tested in
test/e2e/mcp-oauth2-schema.test.ts."""

from __future__ import annotations

import asyncio
import secrets

import pytest

from maitento import AsyncMaitento, ConflictError, Maitento

from .conftest import Stack

FILES = [
    {
        "path": "auth-providers/calendar-as.mtr",
        "content": 'authorizationUrl = "http://127.0.0.1:9/auth"\ntokenUrl = "http://127.0.0.1:9/token"\n'
        'clientId = "maitento"\ntokenAuthMethod = "none"\n',
    },
    {
        "path": "connectors/mcp/calendar.mtr",
        "content": 'url = "http://127.0.0.1:9/mcp"\ntool = "next_meeting"\ndescription = "The next meeting."\n'
        'auth = "OAuth2"\nprovider = @ref("calendar-as")\n',
    },
    {
        "path": "external-operations/open-api/meeting.mtr",
        "content": 'connector = @ref("calendar")\nguidance = "The next meeting."\n',
    },
]


def test_deploy_for_an_end_user(stack: Stack, mt: Maitento) -> None:
    created = mt.namespaces.create(name="deploy-user-" + secrets.token_hex(4))
    with Maitento(stack.url, created.key.key) as ns:
        plan = ns.deploy.create(files=FILES)
        assert plan.applied
        assert [w.code for w in plan.warnings or []] == ["api:deploy:mcp-schema-unread"]
        version = ns.connectors.get("calendar").version
        with pytest.raises(ConflictError) as refused:
            ns.deploy.create(files=FILES, end_user="nobody")
        assert refused.value.code == "api:deploy:mcp-not-connected"
        assert "nobody" in refused.value.message and "not connected" in refused.value.message
        assert ns.connectors.get("calendar").version == version

        async def refused_async() -> str:
            async with AsyncMaitento(stack.url, created.key.key) as ans:
                try:
                    await ans.deploy.create(files=FILES, end_user="nobody")
                except ConflictError as error:
                    return error.code
                return "deployed"

        assert asyncio.run(refused_async()) == "api:deploy:mcp-not-connected"
