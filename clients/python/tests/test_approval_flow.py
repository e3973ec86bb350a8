"""Test 1: the contract's approval flow, sync and async: `on_waiting` approves; a second run rejects with a
reason, the redraft comes back to `on_waiting` with a new approval id and is approved; the upstream sees exactly
the approved calls."""

from __future__ import annotations

import asyncio
import json

from maitento import APIStatusError, Approval, AsyncMaitento, Maitento, Run

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
    # Both runs called refund-order: the runs list filtered by that tool holds them; by a tool never called, none.
    called = [r.id for r in mt.interaction_runs.list(tool="refund-order", limit=200).runs]
    assert done.id in called and redrafted.id in called
    assert mt.interaction_runs.list(tool="no-such-tool").runs == []


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


EDITED = {"request": {"amount": 9.5, "reason": "the lid only"}, "additionalInputs": {"path.orderId": "A-1001"}}


def test_sync_edit_then_approve(stack: Stack, mt: Maitento) -> None:
    """Edit, then approve (docs/roles.md): the upstream receives exactly the edited body, once."""
    since = len(stack.upstream.requests)
    shown: list[Approval] = []

    def edit(run: Run) -> None:
        pending = run.pending_approval
        assert pending is not None
        answered = mt.approvals.approve(pending.id, arguments=EDITED, request_hash=pending.request_hash)
        shown.append(answered)

    done = mt.interaction_runs.run("approve-flow", inputs=MESSAGE, on_waiting=edit)
    assert done.status == "Completed"
    assert shown[0].edited is not None and shown[0].request_hash != ""
    assert json.loads(shown[0].arguments_json) == EDITED
    assert stack.upstream.refunds(since) == [{"amount": 9.5, "reason": "the lid only"}]


def test_async_edit_then_approve_and_refusal(stack: Stack) -> None:
    """The async client: an edit that sets the credential's header is refused with a code; the run's edit goes."""
    since = len(stack.upstream.requests)
    codes: list[str] = []

    async def main() -> Run:
        async with AsyncMaitento(stack.url, stack.key) as amt:

            async def edit(run: Run) -> None:
                pending = run.pending_approval
                assert pending is not None
                secret = {**EDITED, "additionalInputs": {"path.orderId": "A-1001", "header.X-Api-Key": "mine"}}
                try:
                    await amt.approvals.approve(pending.id, arguments=secret, request_hash=pending.request_hash)
                except APIStatusError as error:
                    codes.append(error.code)
                await amt.interaction_runs.approve(
                    run.id, approval_id=pending.id, arguments=EDITED, request_hash=pending.request_hash
                )

            return await amt.interaction_runs.run("approve-flow", inputs=MESSAGE, on_waiting=edit)

    done = asyncio.run(main())
    assert done.status == "Completed"
    assert codes == ["api:approvals:edit-not-allowed"]
    assert stack.upstream.refunds(since) == [{"amount": 9.5, "reason": "the lid only"}]
