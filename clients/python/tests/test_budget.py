"""Budgets through the Python SDK (issue #46): `extend_budget` posts to the run's budget route, and a run that is not
waiting for its budget is refused with the server's code. On the real mt serve (PostgreSQL and PGlite). The scripted
model reports no tokens, so a run reaching its budget is tested in test/e2e/usage-budgets.test.ts with a fake model."""

from __future__ import annotations

import asyncio

import pytest

from maitento import AsyncMaitento, ConflictError, Maitento

from .conftest import Stack


def test_extending_a_run_that_does_not_wait_for_its_budget_is_refused(mt: Maitento) -> None:
    run = mt.interaction_runs.run("chat-flow", inputs={"message": "My kettle"})
    assert run.status == "WaitingForInput"
    assert run.usage is not None and run.usage.input_tokens == 0
    with pytest.raises(ConflictError) as refused:
        mt.interaction_runs.extend_budget(run.id, tokens=1000)
    assert refused.value.code == "api:runs:not-waiting-for-budget"
    mt.interaction_runs.cancel(run.id)


def test_the_async_client_posts_the_same(stack: Stack) -> None:
    async def main() -> str:
        async with AsyncMaitento(stack.url, stack.key) as amt:
            run = await amt.interaction_runs.run("chat-flow", inputs={"message": "My kettle"})
            try:
                with pytest.raises(ConflictError) as refused:
                    await amt.interaction_runs.extend_budget(run.id, cost_usd=1.5, on_exceeded="fail")
                return refused.value.code
            finally:
                await amt.interaction_runs.cancel(run.id)

    assert asyncio.run(main()) == "api:runs:not-waiting-for-budget"
