"""The audit log through the Python SDK: a namespace's changes as rows, paged and filtered, and the JSON Lines
export that parses back to the same rows, with no secret value in it (docs/audit.md)."""

from __future__ import annotations

import asyncio
import json
import secrets

from maitento import AsyncMaitento, Maitento

from .conftest import Stack


def test_audit_list_and_export(stack: Stack, mt: Maitento) -> None:
    created = mt.namespaces.create(name="audit-" + secrets.token_hex(4))
    canary = "canary-" + secrets.token_hex(12)
    with Maitento(stack.url, created.key.key) as ns:
        secret = ns.secrets.create(name="orders-key", value=canary)
        ns.secrets.rotate(secret.id, value=canary + "-rotated")
        key = ns.keys.create(role="user", name="desk")
        ns.keys.delete(key.id)
        page = ns.audit.list(limit=2)
        assert [e.action for e in page.entries] == ["key.deleted", "key.created"]
        assert page.entries[0].actor.id == created.key.id and page.entries[0].actor.role == "admin"
        rest = ns.audit.list(cursor=page.next_cursor)
        assert [e.action for e in rest.entries] == ["secret.rotated", "secret.created"]
        assert rest.next_cursor is None
        assert [e.action for e in ns.audit.list(action="secret").entries] == ["secret.rotated", "secret.created"]
        exported = ns.audit.export_jsonl()
        assert canary not in exported
        rows = [json.loads(line) for line in exported.splitlines()]
        listed = [e.model_dump(by_alias=True) for e in reversed(page.entries + rest.entries)]
        assert rows == listed

        async def async_actions() -> list[str]:
            async with AsyncMaitento(stack.url, created.key.key) as ans:
                return [e.action for e in (await ans.audit.list(action="key")).entries]

        assert asyncio.run(async_actions()) == ["key.deleted", "key.created"]
