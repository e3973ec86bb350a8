"""Test 2: the live event iterator across a connection the test cuts: every event once, in order, resumed
with Last-Event-ID."""

from __future__ import annotations

import asyncio

from maitento import AsyncMaitento, Maitento, RunEvent

from .conftest import Stack
from .stack import Proxy

MESSAGE = {"message": "My kettle arrived with a cracked lid."}


def _stream_heads(proxy: Proxy) -> list[str]:
    return [h for h in proxy.heads if h.startswith("GET ") and "/stream" in h.split("\r\n", 1)[0]]


def _last_event_id(head: str) -> str | None:
    for line in head.split("\r\n")[1:]:
        name, _, value = line.partition(":")
        if name.strip().lower() == "last-event-id":
            return value.strip()
    return None


def test_sync_events_survive_a_cut_connection(stack: Stack, mt: Maitento) -> None:
    proxy = Proxy(stack.url)
    try:
        with Maitento(proxy.url, stack.key) as through_proxy:
            run = mt.interaction_runs.start("approve-flow", inputs=MESSAGE)
            seen: list[RunEvent] = []
            cut_after: int | None = None
            for event in through_proxy.interaction_runs.events(run.id):
                seen.append(event)
                if event.type == "run-waiting" and cut_after is None:
                    # The connection dies; the run goes on without the reader while it is away.
                    proxy.cut()
                    cut_after = event.seq
                    mt.interaction_runs.approve(run.id)
        stored = mt.interaction_runs.list_events(run.id, limit=1000)
        assert [e.seq for e in seen] == [e.seq for e in stored] == list(range(1, len(stored) + 1))
        assert [e.type for e in seen] == [e.type for e in stored]
        assert seen[-1].type == "run-completed"
        heads = _stream_heads(proxy)
        assert len(heads) >= 2
        assert _last_event_id(heads[0]) == "0"
        assert _last_event_id(heads[1]) == str(cut_after)
    finally:
        proxy.close()


def test_async_events_survive_a_cut_connection(stack: Stack, mt: Maitento) -> None:
    proxy = Proxy(stack.url)

    async def main() -> tuple[str, list[RunEvent], int | None]:
        async with AsyncMaitento(proxy.url, stack.key) as through_proxy:
            run = mt.interaction_runs.start("approve-flow", inputs=MESSAGE)
            seen: list[RunEvent] = []
            cut_after: int | None = None
            async for event in through_proxy.interaction_runs.events(run.id):
                seen.append(event)
                if event.type == "run-waiting" and cut_after is None:
                    proxy.cut()
                    cut_after = event.seq
                    mt.interaction_runs.approve(run.id)
            return run.id, seen, cut_after

    try:
        run_id, seen, cut_after = asyncio.run(main())
        stored = mt.interaction_runs.list_events(run_id, limit=1000)
        assert [e.seq for e in seen] == [e.seq for e in stored] == list(range(1, len(stored) + 1))
        assert seen[-1].type == "run-completed"
        heads = _stream_heads(proxy)
        assert len(heads) >= 2 and _last_event_id(heads[1]) == str(cut_after)
    finally:
        proxy.close()
