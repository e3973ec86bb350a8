"""Test 4: auto-paging over 250 runs (sync and async), and `deploy` of the repository's example config repo,
a dry run first."""

from __future__ import annotations

import asyncio
import secrets
from pathlib import Path

import pytest

from maitento import AsyncMaitento, Maitento, UnprocessableEntityError, read_config_repo

from .conftest import Stack
from .stack import write_repo

RUNS = 250
# The example repo's `auth = "Maitento"` connectors call `mt serve`'s default address; the test's server is elsewhere.
EXAMPLE_PLATFORM = "http://127.0.0.1:8080"


def test_paging_over_250_runs(stack: Stack, mt: Maitento, tmp_path: Path) -> None:
    # Runs of their own namespace, so the other tests' runs do not mix in.
    created = mt.namespaces.create(name="paging-" + secrets.token_hex(4))
    with Maitento(stack.url, created.key.key) as ns:
        ns.secrets.create(name="orders-key", value=stack.upstream.shop_key)
        ns.deploy.folder(write_repo(tmp_path, stack.upstream.origin))
        started = [ns.interaction_runs.start("quick", inputs={"message": str(i)}, interactive=False).id
                   for i in range(RUNS)]
        page = ns.interaction_runs.list(limit=100)
        assert len(page.runs) == 100 and page.has_next_page()
        pages = list(page.iter_pages())
        assert [len(p.runs) for p in pages] == [100, 100, 50]
        listed = [r.id for r in page]
        # Every run once, newest first.
        assert listed == list(reversed(started))

        async def all_async() -> list[str]:
            async with AsyncMaitento(stack.url, created.key.key) as ans:
                return [r.id async for r in await ans.interaction_runs.list(limit=70)]

        assert asyncio.run(all_async()) == listed


def test_deploy_the_example_repo_dry_run_first(stack: Stack, repo_root: Path) -> None:
    with Maitento(stack.url, stack.key) as admin:
        created = admin.namespaces.create(name="example-" + secrets.token_hex(4))
    files = [{**f, "content": f["content"].replace(EXAMPLE_PLATFORM, stack.url)} for f in read_config_repo(repo_root)]
    assert "interactions/one-shot/support-any-shop.mtr" in [f["path"] for f in files]
    with Maitento(stack.url, created.key.key) as mt:
        # The example repo's tools name secrets that must exist first; without them the deploy is refused.
        with pytest.raises(UnprocessableEntityError) as refused:
            mt.deploy.create(files=files, dry_run=True)
        assert refused.value.diagnostics
        diagnostics = refused.value.diagnostics
        assert diagnostics and {d["code"] for d in diagnostics} == {"api:secrets:not-found"}
        assert {d["file"] for d in diagnostics} == {
            "external-operations/open-api/get-order.mtr",
            "external-operations/open-api/refund-order.mtr",
        }
        mt.secrets.create(name="orders-api-key", value="example-" + secrets.token_hex(8))
        plan = mt.deploy.create(files=files, dry_run=True)
        assert plan.applied is False
        assert plan.changes and all(c.action == "create" for c in plan.changes)
        assert mt.interactions.list() == []
        applied = mt.deploy.create(files=files)
        assert applied.applied is True
        assert [(c.kind, c.name) for c in applied.changes] == [(c.kind, c.name) for c in plan.changes]
        assert {i.name for i in mt.interactions.list()} >= {"support-any-shop", "weather", "ask-handbook"}
        again = mt.deploy.create(files=files, dry_run=True)
        assert all(c.action == "unchanged" for c in again.changes)
