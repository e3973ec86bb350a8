"""Agents as tools (#22): `run(on_waiting=...)` follows the child run a call starts, so each approval the child asks
calls `on_waiting` with the top run (`PendingApproval`, the child's approval naming the child and its agent),
answered from there; the run returns at the top run's end. Without following the child it waited forever: the
parent's stream has no event while its child waits for a person. The first approval takes longer than the server's
keep-alive (every second here, MT_STREAM_KEEPALIVE_MS), which the SDK's stream reader took for an event without data and failed on."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from typing import Any

from maitento import AsyncMaitento, Maitento, Run

from .conftest import Stack

MESSAGE = {"message": "My lamp arrived broken"}
# Long enough for a loaded machine; a run() that does not follow the child never returns.
LIMIT = 90.0
# The stack's servers write `: keep-alive` on a stream silent this long (MT_STREAM_KEEPALIVE_MS in stack.py).
KEEP_ALIVE = 1.0


def _seen(run: Run, stack: Stack, since: int) -> dict[str, Any]:
    approval = run.pending_approval
    assert approval is not None
    return {
        "run": run.id,
        "status": run.status,
        "asker": approval.run_id,
        "agent": approval.agent_name,
        "amount": json.loads(approval.arguments_json)["request"]["amount"],
        "made": len(stack.upstream.refunds(since)),
    }


def _child_of(mt: Maitento, run_id: str) -> Run:
    children = [r for r in mt.interaction_runs.list(limit=200) if r.parent_run_id == run_id]
    assert len(children) == 1
    return mt.interaction_runs.get(children[0].id)


def _check(stack: Stack, mt: Maitento, done: Run, seen: list[dict[str, Any]], since: int) -> None:
    assert done.status == "Completed" and done.result == "Billing did both." and done.parent_run_id is None
    child = _child_of(mt, done.id)
    assert child.status == "Completed" and child.agent == "billing-twice"
    # Asked once per approval, in order, with the top run, each naming the child that asks; a refund is made only
    # once approved.
    asked = {"run": done.id, "status": "PendingApproval", "asker": child.id, "agent": "billing-twice"}
    assert seen == [{**asked, "amount": 40, "made": 0}, {**asked, "amount": 7, "made": 1}]
    assert [r["amount"] for r in stack.upstream.refunds(since)] == [40, 7]


def test_sync_run_follows_the_childs_two_approvals(stack: Stack, mt: Maitento) -> None:
    since = len(stack.upstream.requests)
    seen: list[dict[str, Any]] = []

    def approve(waiting: Run) -> None:
        seen.append(_seen(waiting, stack, since))
        assert waiting.pending_approval is not None
        if len(seen) == 1:
            # A person takes their time: both streams followed (the top run's, the child's) stay silent past the
            # server's keep-alive, which the SDK must skip.
            time.sleep(KEEP_ALIVE + 1)
        mt.interaction_runs.approve(waiting.id, approval_id=waiting.pending_approval.id)

    returned: list[Run] = []
    raised: list[BaseException] = []

    def follow() -> None:
        try:
            returned.append(mt.interaction_runs.run("triage-twice", inputs=MESSAGE, on_waiting=approve))
        except BaseException as error:
            raised.append(error)

    # In a thread, so a run() that waits forever fails the test instead of hanging it.
    worker = threading.Thread(target=follow, daemon=True)
    worker.start()
    worker.join(LIMIT)
    if raised:
        raise raised[0]
    assert returned, f"run() did not return in {LIMIT} s; on_waiting saw {seen}"
    _check(stack, mt, returned[0], seen, since)


def test_async_run_follows_the_childs_two_approvals(stack: Stack, mt: Maitento) -> None:
    since = len(stack.upstream.requests)
    seen: list[dict[str, Any]] = []

    async def main() -> Run:
        async with AsyncMaitento(stack.url, stack.key) as amt:

            async def approve(waiting: Run) -> None:
                seen.append(_seen(waiting, stack, since))
                assert waiting.pending_approval is not None
                await amt.interaction_runs.approve(waiting.id, approval_id=waiting.pending_approval.id)

            run = amt.interaction_runs.run("triage-twice", inputs=MESSAGE, on_waiting=approve)
            return await asyncio.wait_for(run, LIMIT)

    _check(stack, mt, asyncio.run(main()), seen, since)
