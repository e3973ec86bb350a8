"""Usage figures and quotas through the Python SDK (issue #46), on the real mt serve (PostgreSQL and PGlite):
`usage.get(by="tool")` counts a run's calls by tool, `namespaces.set_quotas`/`get_quotas` (the operator) and
`usage.quotas()` (the namespace's admin) show the same quotas and figures. The refusals over a quota are tested with
real processes in test/e2e/quotas.test.ts."""

from __future__ import annotations

import asyncio
import secrets

from maitento import AsyncMaitento, Maitento, Run

from .conftest import Stack


def calls_by_tool(mt: Maitento) -> dict[str, int]:
    report = mt.usage.get(by="tool")
    assert report.by == "tool"
    return {g.key or "": g.tool_calls for g in report.groups}


def test_usage_by_tool_counts_the_calls_of_a_run(mt: Maitento) -> None:
    before = calls_by_tool(mt)
    def approve(run: Run) -> None:
        assert run.pending_approval is not None
        mt.interaction_runs.approve(run.id, approval_id=run.pending_approval.id)

    done = mt.interaction_runs.run("approve-flow", inputs={"message": "My kettle arrived cracked."}, on_waiting=approve)
    assert done.status == "Completed"
    after = calls_by_tool(mt)
    assert after.get("get-order", 0) - before.get("get-order", 0) == 1
    assert after.get("refund-order", 0) - before.get("refund-order", 0) == 1
    whole = mt.usage.get()
    assert whole.by == "namespace" and whole.groups[0].runs >= 1


def test_quotas_set_by_the_operator_and_read_by_the_namespace(mt: Maitento, stack: Stack) -> None:
    name = "py-quota-" + secrets.token_hex(4)
    created = mt.namespaces.create(name=name)
    standing = mt.namespaces.set_quotas(name, runs_per_day=3, tokens_per_month=50_000)
    assert standing.namespace == name
    assert standing.quotas.runs_per_day == 3
    assert standing.quotas.tool_calls_per_day is None
    assert standing.quotas.tokens_per_month == 50_000
    assert standing.used.runs_today == 0
    assert mt.namespaces.get_quotas(name).quotas == standing.quotas

    async def own() -> tuple[int | None, str]:
        async with AsyncMaitento(stack.url, created.key.key) as amt:
            mine = await amt.usage.quotas()
            return mine.quotas.runs_per_day, mine.month_ends_at

    runs_per_day, month_end = asyncio.run(own())
    assert runs_per_day == 3
    assert month_end == standing.month_ends_at
