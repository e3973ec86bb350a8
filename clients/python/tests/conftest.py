"""Fixtures: one real `mt serve` per backend (PostgreSQL and PGlite) for the session, with the orders API
upstream, the scripted model and the test repo deployed through the SDK itself."""

from __future__ import annotations

import json
import secrets
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from maitento import Maitento

from .stack import OWN_SCRIPTS, SCRIPTS, Serve, Upstream, start_serve, write_repo


@dataclass
class Stack:
    serve: Serve
    upstream: Upstream
    backend: str

    @property
    def url(self) -> str:
        return self.serve.url

    @property
    def key(self) -> str:
        return self.serve.admin_key


@pytest.fixture(scope="session", params=["postgres", "pglite"])
def stack(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    backend: str = request.param
    work = tmp_path_factory.mktemp(f"mt-{backend}")
    scripts = work / "scripted-models"
    scripts.mkdir()
    for name, turns in {**SCRIPTS, **OWN_SCRIPTS}.items():
        (scripts / f"{name}.json").write_text(json.dumps(turns))
    home = work / "home"
    home.mkdir()
    upstream = Upstream(shop_key="shop-" + secrets.token_hex(8)).start()
    # Few streams per key, so the test of api:runs:too-many-streams need not open twenty.
    serve = start_serve(home, backend, scripts, {"MT_RUN_STREAMS_PER_KEY": "4"})
    try:
        with Maitento(serve.url, serve.admin_key) as mt:
            mt.secrets.create(name="orders-key", value=upstream.shop_key)
            plan = mt.deploy.folder(write_repo(work / "repo", upstream.origin))
            assert plan.applied
        yield Stack(serve, upstream, backend)
    finally:
        serve.stop()
        upstream.close()


@pytest.fixture
def mt(stack: Stack) -> Iterator[Maitento]:
    with Maitento(stack.url, stack.key) as client:
        yield client


@pytest.fixture
def repo_root() -> Path:
    return Path(__file__).resolve().parents[3]
