"""Outbound webhooks through the Python SDK (docs/notifications.md): an endpoint made, tested, logged, rotated and
deleted; the receiver checks each delivery's Standard Webhooks signature with the secret shown once."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import secrets
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from maitento import AsyncMaitento, Maitento

from .conftest import Stack


def signed_by(secret: str, headers: dict[str, str], body: bytes) -> bool:
    """Whether one of the `v1,` signatures of `webhook-signature` is `secret`'s HMAC of `id.timestamp.body`."""
    key = base64.b64decode(secret.removeprefix("whsec_"))
    content = f"{headers['webhook-id']}.{headers['webhook-timestamp']}.".encode() + body
    expected = base64.b64encode(hmac.new(key, content, hashlib.sha256).digest()).decode()
    return any(sig == f"v1,{expected}" for sig in headers["webhook-signature"].split(" "))


@pytest.fixture
def receiver() -> Iterator[tuple[str, list[tuple[dict[str, str], bytes]]]]:
    got: list[tuple[dict[str, str], bytes]] = []

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            pass

        def do_POST(self) -> None:  # noqa: N802
            body = self.rfile.read(int(self.headers["content-length"]))
            got.append(({k.lower(): v for k, v in self.headers.items()}, body))
            self.send_response(204)
            self.end_headers()

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/hook", got
    finally:
        server.shutdown()


def wait_for(got: list[Any], count: int) -> None:
    deadline = time.monotonic() + 20
    while len(got) < count:
        assert time.monotonic() < deadline, f"{len(got)} deliveries of {count}"
        time.sleep(0.05)


def test_webhooks(stack: Stack, mt: Maitento, receiver: tuple[str, list[tuple[dict[str, str], bytes]]]) -> None:
    url, got = receiver
    created = mt.namespaces.create(name="hooks-" + secrets.token_hex(4))
    with Maitento(stack.url, created.key.key) as ns:
        made = ns.webhooks.create(url=url, events=["approval.requested"], description="approvals")
        assert made.secret.startswith("whsec_")
        assert made.endpoint.events == ["approval.requested"] and made.endpoint.enabled
        assert [e.id for e in ns.webhooks.list()] == [made.endpoint.id]
        assert made.secret not in ns.webhooks.get(made.endpoint.id).model_dump_json()

        delivery = ns.webhooks.test(made.endpoint.id)
        assert delivery.event_type == "webhook.test" and delivery.status == "Pending"
        wait_for(got, 1)
        headers, body = got[0]
        assert headers["webhook-id"] == delivery.message_id
        assert signed_by(made.secret, headers, body)

        rotated = ns.webhooks.rotate_secret(made.endpoint.id, grace_seconds=600)
        assert rotated.endpoint.previous_secret_until is not None
        ns.webhooks.test(made.endpoint.id)
        wait_for(got, 2)
        assert signed_by(made.secret, *got[1]) and signed_by(rotated.secret, *got[1])

        changed = ns.webhooks.update(made.endpoint.id, enabled=False)
        assert not changed.enabled

        async def async_log() -> list[str]:
            async with AsyncMaitento(stack.url, created.key.key) as ans:
                deadline = time.monotonic() + 20
                # The log says Delivered once the answer's outcome is stored, just after the receiver got it.
                while len(log := await ans.webhooks.deliveries(made.endpoint.id, status="Delivered")) < 2:
                    assert time.monotonic() < deadline, log
                    await asyncio.sleep(0.05)
                await ans.webhooks.delete(made.endpoint.id)
                assert await ans.webhooks.list() == []
                return [d.status for d in log]

        assert asyncio.run(async_log()) == ["Delivered", "Delivered"]
