"""Test 3: the error codes the API documents for runs and approvals reach Python as the right class with their
code; a start retried after the server's answer was lost starts one run (one Idempotency-Key)."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from maitento import (
    APIConnectionError,
    APIStatusError,
    AsyncMaitento,
    AuthenticationError,
    ConflictError,
    InvalidArgumentError,
    Maitento,
    MaitentoError,
    NotFoundError,
    RateLimitError,
    UnprocessableEntityError,
)

from .conftest import Stack
from .stack import Proxy

MESSAGE = {"message": "Where is my order?"}


def _raises(cls: type[MaitentoError], code: str, status: int, call: object) -> MaitentoError:
    assert callable(call)
    with pytest.raises(cls) as caught:
        call()
    error = caught.value
    assert type(error) is cls, f"{type(error).__name__} is not {cls.__name__}"
    assert (error.code, error.status) == (code, status)
    assert error.message and code in str(error)
    return error


def _finished(mt: Maitento, interaction: str) -> str:
    return mt.interaction_runs.run(interaction, inputs=MESSAGE).id


def test_run_errors_by_class_and_code(mt: Maitento) -> None:
    runs = mt.interaction_runs
    _raises(NotFoundError, "api:runs:not-found", 404, lambda: runs.get("no-such-run"))
    _raises(NotFoundError, "api:runs:not-found", 404, lambda: runs.cancel("no-such-run"))
    done = _finished(mt, "quick")
    _raises(ConflictError, "api:runs:already-ended", 409, lambda: runs.cancel(done))
    _raises(ConflictError, "api:runs:not-waiting", 409, lambda: runs.approve(done))
    _raises(UnprocessableEntityError, "api:runs:invalid-cursor", 422, lambda: runs.list(cursor="not-a-cursor"))
    huge = {"message": "x" * 300_000}
    too_large = _raises(APIStatusError, "api:runs:input-too-large", 413, lambda: runs.start("quick", inputs=huge))
    assert isinstance(too_large.details, dict)
    _raises(NotFoundError, "api:interactions:not-found", 404, lambda: runs.start("no-such-interaction"))


def test_approval_errors_by_class_and_code(mt: Maitento) -> None:
    runs = mt.interaction_runs
    _raises(NotFoundError, "api:approvals:not-found", 404, lambda: mt.approvals.get("no-such-approval"))
    waiting = runs.start("approve-flow", inputs=MESSAGE)
    pending = None
    for event in runs.events(waiting.id):
        if event.type == "run-waiting":
            pending = runs.get(waiting.id).pending_approval
            break
    assert pending is not None
    # A rejection needs a reason: sent without one, straight through the client's request.
    _raises(
        UnprocessableEntityError, "api:approvals:reason-required", 422,
        lambda: mt.request("POST", f"/v1/runs/{waiting.id}/reject", {}),
    )
    other = runs.start("approve-flow", inputs=MESSAGE)
    _raises(
        ConflictError, "api:approvals:not-pending-for-run", 409,
        lambda: runs.approve(other.id, approval_id=pending.id),
    )
    mt.approvals.approve(pending.id)
    _raises(ConflictError, "api:approvals:already-answered", 409, lambda: mt.approvals.approve(pending.id))
    _raises(ConflictError, "api:approvals:already-answered", 409, lambda: runs.approve(waiting.id, approval_id=pending.id))
    runs.cancel(other.id)


def test_stream_limit_is_a_rate_limit_error(stack: Stack, mt: Maitento) -> None:
    run = mt.interaction_runs.start("approve-flow", inputs=MESSAGE)
    headers = {"authorization": f"Bearer {stack.key}", "accept": "text/event-stream"}
    url = f"{stack.url}/v1/runs/{run.id}/stream"
    with httpx.Client(timeout=30) as raw:
        opened = [raw.stream("GET", url, headers=headers) for _ in range(4)]
        responses = [o.__enter__() for o in opened]
        try:
            assert all(r.status_code == 200 for r in responses)
            _raises(
                RateLimitError, "api:runs:too-many-streams", 429,
                lambda: next(iter(mt.interaction_runs.events(run.id, max_reconnects=0))),
            )
        finally:
            for o in opened:
                o.__exit__(None, None, None)
    mt.interaction_runs.cancel(run.id)


def test_client_side_errors(stack: Stack) -> None:
    with Maitento(stack.url, "mt_wrong_key_" + "0" * 24) as wrong:
        _raises(AuthenticationError, "api:auth:invalid-key", 401, lambda: wrong.interactions.list())
    with Maitento(stack.url, "") as keyless:
        _raises(AuthenticationError, "api:auth:missing-key", 401, lambda: keyless.interactions.list())
    with Maitento(stack.url, stack.key) as mt:
        _raises(InvalidArgumentError, "api:sdk:invalid-argument", 400, lambda: mt.interaction_runs.get(".."))
    with Maitento("http://127.0.0.1:9", stack.key, max_retries=1) as nowhere:
        _raises(APIConnectionError, "api:sdk:connection-failed", 503, lambda: nowhere.interactions.list())


def test_retried_start_after_a_lost_answer_starts_one_run(stack: Stack, mt: Maitento) -> None:
    before = {r.id for r in mt.interaction_runs.list(interaction="quick")}
    proxy = Proxy(stack.url, drop_first_post=True)
    try:
        with Maitento(proxy.url, stack.key, max_retries=2) as dropping:
            run = dropping.interaction_runs.start("quick", inputs=MESSAGE)
        assert proxy.dropped == 1
        posts = [h for h in proxy.heads if h.startswith("POST ")]
        assert len(posts) == 2
        keys = {line.split(":", 1)[1].strip() for h in posts for line in h.split("\r\n")
                if line.lower().startswith("idempotency-key:")}
        assert len(keys) == 1
        after = {r.id for r in mt.interaction_runs.list(interaction="quick")}
        assert after - before == {run.id}
    finally:
        proxy.close()


def test_async_errors_and_retried_start(stack: Stack, mt: Maitento) -> None:
    before = {r.id for r in mt.interaction_runs.list(interaction="quick")}
    proxy = Proxy(stack.url, drop_first_post=True)

    async def main() -> str:
        async with AsyncMaitento(stack.url, stack.key) as amt:
            with pytest.raises(NotFoundError) as caught:
                await amt.interaction_runs.get("no-such-run")
            assert caught.value.code == "api:runs:not-found"
        async with AsyncMaitento(proxy.url, stack.key) as dropping:
            return (await dropping.interaction_runs.start("quick", inputs=MESSAGE)).id

    try:
        run_id = asyncio.run(main())
        assert proxy.dropped == 1
        after = {r.id for r in mt.interaction_runs.list(interaction="quick")}
        assert after - before == {run_id}
    finally:
        proxy.close()
