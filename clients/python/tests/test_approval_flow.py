"""Test 1: the contract's approval flow, sync and async: `on_waiting` approves; a second run rejects with a
reason, the redraft comes back to `on_waiting` with a new approval id and is approved; the upstream sees exactly
the approved calls."""

from __future__ import annotations

import asyncio

from maitento import AsyncMaitento, Maitento, Run

from .conftest import Stack

MESSAGE = {"message": "My kettle arrived with a cracked lid."}


def test_sync_approve_then_reject_and_redraft(stack: Stack, mt: Maitento) -> None:
    since = len(stack.upstream.requests)
    asked: list[Run] = []

    def approve(run: Run) -> None:
        asked.append(run)
        assert run.pending_approval is not None
        mt.interaction_runs.approve(run.id, approval_id=run.pending_approval.id)

    done = mt.interaction_runs.run("approve-flow", inputs=MESSAGE, on_waiting=approve)
    assert done.status == "Completed"
    assert done.result == "Refunded 15.00 EUR."
    assert len(asked) == 1
    assert asked[0].pending_approval is not None and asked[0].pending_approval.function_name == "refund-order"

    waits: list[Run] = []

    def reject_then_approve(run: Run) -> None:
        waits.append(run)
        pending = run.pending_approval
        assert pending is not None
        if len(waits) == 1:
            assert '"amount":49.9' in pending.arguments_json.replace(" ", "")
            mt.interaction_runs.reject(run.id, approval_id=pending.id, reason="Refund the lid only")
        else:
            mt.interaction_runs.approve(run.id, approval_id=pending.id)

    redrafted = mt.interaction_runs.run("redraft-flow", inputs=MESSAGE, on_waiting=reject_then_approve)
    assert redrafted.status == "Completed"
    assert redrafted.result == "Refunded 15.00 EUR after the redraft."
    ids = [w.pending_approval.id for w in waits if w.pending_approval is not None]
    assert len(ids) == 2 and ids[0] != ids[1]
    rejected = mt.approvals.get(ids[0])
    assert rejected.status == "Rejected" and rejected.reason == "Refund the lid only"
    assert mt.approvals.get(ids[1]).status == "Approved"
    # Exactly the two approved refunds of 15 reached the orders API; the rejected 49.90 never did.
    assert [r["amount"] for r in stack.upstream.refunds(since)] == [15, 15]


def test_async_approve_then_reject_and_redraft(stack: Stack) -> None:
    since = len(stack.upstream.requests)

    async def main() -> tuple[Run, Run, list[str], list[str]]:
        async with AsyncMaitento(stack.url, stack.key) as amt:
            first: list[str] = []

            async def approve(run: Run) -> None:
                assert run.pending_approval is not None
                first.append(run.pending_approval.id)
                await amt.interaction_runs.approve(run.id, approval_id=run.pending_approval.id)

            done = await amt.interaction_runs.run("approve-flow", inputs=MESSAGE, on_waiting=approve)
            second: list[str] = []

            async def reject_then_approve(run: Run) -> None:
                assert run.pending_approval is not None
                second.append(run.pending_approval.id)
                if len(second) == 1:
                    await amt.interaction_runs.reject(
                        run.id, approval_id=run.pending_approval.id, reason="Refund the lid only"
                    )
                else:
                    await amt.interaction_runs.approve(run.id, approval_id=run.pending_approval.id)

            redrafted = await amt.interaction_runs.run("redraft-flow", inputs=MESSAGE, on_waiting=reject_then_approve)
            return done, redrafted, first, second

    done, redrafted, first, second = asyncio.run(main())
    assert done.status == "Completed" and len(first) == 1
    assert redrafted.status == "Completed" and redrafted.result == "Refunded 15.00 EUR after the redraft."
    assert len(second) == 2 and second[0] != second[1]
    assert [r["amount"] for r in stack.upstream.refunds(since)] == [15, 15]
