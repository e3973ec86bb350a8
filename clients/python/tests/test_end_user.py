"""Runs acting for an end user through the Python SDK (docs/connections.md), sync and async, against the real
`mt serve` and a real OAuth 2 authorization server (oidc-provider, tests/authorization_server.mjs): a run started with
`end_user` whose person has no connection waits `PendingAuthorization`; `run(on_waiting=...)` is called once with the
connect link, the person connects (login and consent at the authorization server, then Maitento's callback) and the
run goes on by itself, its call carrying the person's access token as a Bearer. Connect links, connections and auth
providers through their namespaces."""

from __future__ import annotations

import asyncio
import secrets
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import pytest

from maitento import AsyncMaitento, ConflictError, Maitento
from maitento.models import Run

from .conftest import Stack
from .stack import AuthorizationServer, authorize, start_authorization_server


@dataclass
class Setup:
    key: str
    issuer: str
    callback: str
    bearers: list[str]


@pytest.fixture(scope="module")
def setup(stack: Stack) -> Iterator[Setup]:
    """An authorization server whose client's redirect URI is this server's callback, an upstream that records the
    Authorization header it is sent, and a namespace with an auth provider, an OAuth2 connector and its tool."""
    callback = f"{stack.url}/v1/connections/callback"
    server: AuthorizationServer = start_authorization_server(callback)
    bearers: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            pass

        def do_GET(self) -> None:  # noqa: N802
            bearers.append(self.headers.get("authorization") or "")
            data = b'{"seen": true}'
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    upstream = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=upstream.serve_forever, daemon=True).start()
    try:
        with Maitento(stack.url, stack.key) as admin:
            created = admin.namespaces.create(name="end-user-" + secrets.token_hex(4))
        with Maitento(stack.url, created.key.key) as ns:
            ns.secrets.create(name="local-as-client-secret", value=server.client_secret)
            files = {
                "auth-providers/local-as.mtr": (
                    f'issuer = "{server.issuer}"\nclientId = "{server.client_id}"\n'
                    'clientSecret = @ref("local-as-client-secret")\nscopes = ["openid", "offline_access"]\n'
                    'authorizationParams = { prompt = "consent" }\n'
                ),
                "connectors/open-api/me.mtr": (
                    f'method = "GET"\nurl = "http://127.0.0.1:{upstream.server_address[1]}/me"\n'
                    'description = "Who the signed-in person is."\nauth = "OAuth2"\nprovider = @ref("local-as")\n'
                    'scopes = ["calendar.read"]\n'
                ),
                "external-operations/open-api/whoami.mtr": 'connector = @ref("me")\nguidance = "Who am I."\n',
                "agents/me-agent.mtr": (
                    'model = "scripted:whoami"\ninstructions = "Act for the signed-in person."\n'
                    'summary = "Looks the signed-in person up"\nfunctions = [ { ref = @ref("whoami") } ]\n'
                ),
                "interactions/one-shot/me.mtr": 'agent = { name = "Helper" agent = @ref("me-agent") }\ntask = "Do it."\n',
                "agents/delegate-agent.mtr": (
                    'model = "scripted:delegate"\ninstructions = "Hand the look-up on."\n'
                    'functions = [ { agent = @ref("me-agent") } ]\n'
                ),
                "interactions/one-shot/delegate.mtr": (
                    'agent = { name = "Desk" agent = @ref("delegate-agent") }\ntask = "Do it."\n'
                ),
            }
            plan = ns.deploy.create(files=[{"path": p, "content": c} for p, c in files.items()])
            assert ("auth-provider", "local-as", "create") in [(c.kind, c.name, c.action) for c in plan.changes]
        yield Setup(created.key.key, server.issuer, callback, bearers)
    finally:
        upstream.shutdown()
        upstream.server_close()
        server.stop()


def connect(url: str, account: str, callback: str) -> None:
    """The person opens the connect link: login and consent at the authorization server, then Maitento's callback."""
    back = authorize(url, account, callback)
    done = httpx.get(back, timeout=15)
    assert done.status_code == 200, done.text


def test_run_waits_for_its_end_user_and_goes_on_once_they_connect(stack: Stack, setup: Setup) -> None:
    told: list[Run] = []
    with Maitento(stack.url, setup.key) as ns:

        def on_waiting(waiting: Run) -> None:
            told.append(waiting)
            assert waiting.pending_authorization is not None
            connect(waiting.pending_authorization.url, "frank-sub", setup.callback)

        before = len(setup.bearers)
        run = ns.interaction_runs.run("me", end_user="frank", on_waiting=on_waiting)
        assert [t.status for t in told] == ["PendingAuthorization"]
        pending = told[0].pending_authorization
        assert pending is not None
        assert (pending.provider, pending.end_user, pending.reason) == ("local-as", "frank", "not connected")
        assert pending.scopes == ["openid", "offline_access", "calendar.read"]
        assert pending.url.startswith(f"{setup.issuer}/auth?")
        assert (run.status, run.end_user, run.pending_authorization) == ("Completed", "frank", None)
        # The call was made once, after the person connected, with their access token.
        sent = setup.bearers[before:]
        assert len(sent) == 1 and sent[0].startswith("Bearer ") and len(sent[0]) > len("Bearer ") + 20
        types = [e.type for e in ns.interaction_runs.list_events(run.id)]
        assert {"authorization-requested", "run-waiting", "authorization-completed"} <= set(types)
        # No token in what the run shows.
        token = sent[0].removeprefix("Bearer ")
        assert token not in ns.interaction_runs.get(run.id).model_dump_json()
        assert all(token not in e.model_dump_json() for e in ns.interaction_runs.list_events(run.id))

        [connection] = ns.connections.list(end_user="frank")
        assert (connection.provider, connection.status) == ("local-as", "Active")
        assert "calendar.read" in connection.scopes
        assert ns.connections.get(connection.id).end_user == "frank"
        assert [p.name for p in ns.auth_providers.list()] == ["local-as"]
        provider = ns.auth_providers.get("local-as")
        assert provider.version == 1 and provider.resource.issuer == setup.issuer
        assert [v.version for v in ns.auth_providers.versions("local-as")] == [1]

        # Connected now: the next run of frank's makes its call at once, without waiting.
        again: list[Run] = []
        second = ns.interaction_runs.run("me", end_user="frank", on_waiting=again.append)
        assert (second.status, again) == ("Completed", [])


def test_a_child_runs_wait_for_the_end_user_is_passed_to_on_waiting(stack: Stack, setup: Setup) -> None:
    told: list[Run] = []
    with Maitento(stack.url, setup.key) as ns:

        def on_waiting(waiting: Run) -> None:
            told.append(waiting)
            assert waiting.pending_authorization is not None
            connect(waiting.pending_authorization.url, "kate-sub", setup.callback)

        finished = ns.interaction_runs.run("delegate", end_user="kate", on_waiting=on_waiting)
        # The child run waits (its parent stays Running): on_waiting is given the child, once.
        assert [(t.status, t.parent_run_id, t.agent) for t in told] == [("PendingAuthorization", finished.id, "me-agent")]
        pending = told[0].pending_authorization
        assert pending is not None and pending.end_user == "kate"
        assert (finished.status, finished.result) == ("Completed", "Done.")
        assert ns.interaction_runs.get(told[0].id).status == "Completed"


def test_async_run_waits_for_its_end_user(stack: Stack, setup: Setup) -> None:
    async def scenario() -> tuple[list[str], Run, str]:
        told: list[str] = []
        async with AsyncMaitento(stack.url, setup.key) as ns:

            async def on_waiting(waiting: Run) -> None:
                assert waiting.pending_authorization is not None
                told.append(waiting.status)
                url = waiting.pending_authorization.url
                # The browser's part, off the event loop (it is synchronous).
                await asyncio.to_thread(connect, url, "gina-sub", setup.callback)

            run = await ns.interaction_runs.run("me", end_user="gina", on_waiting=on_waiting)
            [connection] = await ns.connections.list(provider="local-as", end_user="gina")
            return told, run, connection.status

    told, run, status = asyncio.run(scenario())
    assert told == ["PendingAuthorization"]
    assert (run.status, run.end_user, status) == ("Completed", "gina", "Active")


def test_a_waiting_run_carries_its_link_and_connections_are_made_by_links(stack: Stack, setup: Setup) -> None:
    with Maitento(stack.url, setup.key) as ns:
        started = ns.interaction_runs.start("me", end_user="henry")
        assert started.end_user == "henry"
        deadline = time.monotonic() + 30
        waiting = ns.interaction_runs.get(started.id)
        while waiting.status != "PendingAuthorization":
            assert time.monotonic() < deadline, waiting.status
            time.sleep(0.2)
            waiting = ns.interaction_runs.get(started.id)
        assert waiting.pending_authorization is not None
        assert waiting.pending_authorization.end_user == "henry"
        assert waiting.pending_authorization.url.startswith(f"{setup.issuer}/auth?")
        assert started.id in [r.id for r in ns.interaction_runs.list(status="PendingAuthorization").runs]
        assert ns.interaction_runs.cancel(started.id).status == "Cancelled"

        # A connect link made ahead of any run, then the connection it made, then deleted.
        link = ns.connections.create_link(provider="local-as", end_user="erin", scopes=["calendar.read"])
        assert (link.provider, link.end_user) == ("local-as", "erin") and link.url.startswith(f"{setup.issuer}/auth?")
        connect(link.url, "erin-sub", setup.callback)
        [connection] = ns.connections.list(end_user="erin")
        assert connection.status == "Active" and "calendar.read" in connection.scopes
        assert ns.connections.delete(connection.id).id == connection.id
        assert ns.connections.list(end_user="erin") == []

    async def async_link() -> str:
        async with AsyncMaitento(stack.url, setup.key) as ans:
            made = await ans.connections.create_link(provider="local-as", end_user="ivan")
            return made.url

    assert asyncio.run(async_link()).startswith(f"{setup.issuer}/auth?")


def test_a_direct_tool_call_for_an_end_user_answers_their_connect_link(stack: Stack, setup: Setup) -> None:
    """`extops.call(end_user=...)`: a person not connected is a ConflictError carrying their connect link (no run
    exists to wait); once they have connected through it, the same call is made with their access token."""
    with Maitento(stack.url, setup.key) as ns:
        before = len(setup.bearers)
        with pytest.raises(ConflictError) as refused:
            ns.extops.call("whoami", arguments={}, end_user="lena")
        assert refused.value.code == "api:connections:authorization-required"
        link = refused.value.details["authorization"]
        assert (link["provider"], link["endUser"], link["reason"]) == ("local-as", "lena", "not connected")
        assert link["url"].startswith(f"{setup.issuer}/auth?")
        assert len(setup.bearers) == before
        connect(link["url"], "lena-sub", setup.callback)
        made = ns.extops.call("whoami", arguments={}, end_user="lena")
        assert (made.ok, made.status) == (True, 200)
        assert len(setup.bearers) == before + 1 and setup.bearers[-1].startswith("Bearer ")

    async def async_refused() -> str:
        async with AsyncMaitento(stack.url, setup.key) as ans:
            try:
                await ans.extops.call("whoami", arguments={}, end_user="mona")
            except ConflictError as error:
                return str(error.details["authorization"]["endUser"])
            return "made"

    assert asyncio.run(async_refused()) == "mona"
