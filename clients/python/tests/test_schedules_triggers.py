"""Schedules and triggers through the Python SDK (docs/schedules-and-triggers.md), sync and async, against the real
`mt serve`: a schedule of every second deployed from a config repo folder ticks, is listed with its next tick,
paused, resumed and shown in its history; a trigger's deliveries (started, replayed, refused) are in its log, the
deliveries refused before anything was stored counted by reason. And a deploy's warnings come back in its plan."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import secrets
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import httpx
import pytest

from maitento import AsyncMaitento, Maitento, NotFoundError
from maitento.models import ScheduleState

from .conftest import Stack

T = TypeVar("T")

AGENT = 'model = "scripted:quick"\ninstructions = "Say done."\n'
INTERACTION = (
    'agent = { name = "Ticker" agent = @ref("ticker") }\ntask = "Tick %%label%%"\n'
    'inputs.prompts = [ { name = "label" required = true } ]\n'
)
SCHEDULE = 'interaction = @ref("tick")\ninputs = { label = "nightly" }\ncron = "* * * * * *"\noverlap = "allow"\n'
TRIGGER = (
    'interaction = @ref("tick")\ninputs = { label = { pointer = "/issue/title" } }\n'
    'verify = { style = "github" secret = @ref("github-hook") }\n'
)


def write(folder: Path, files: dict[str, str]) -> Path:
    for relative, text in files.items():
        target = folder / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    return folder


def wait_for(what: str, read: Callable[[], T], done: Callable[[T], bool], timeout: float = 30) -> T:
    deadline = time.monotonic() + timeout
    while True:
        value = read()
        if done(value):
            return value
        assert time.monotonic() < deadline, f"{what} in {timeout} s: {value!r}"
        time.sleep(0.2)


def test_a_schedule_is_listed_paused_resumed_and_shows_its_ticks(stack: Stack, mt: Maitento, tmp_path: Path) -> None:
    created = mt.namespaces.create(name="sched-" + secrets.token_hex(4))
    repo = write(
        tmp_path,
        {
            "agents/ticker.mtr": AGENT,
            "interactions/one-shot/tick.mtr": INTERACTION,
            "schedules/every-second.mtr": SCHEDULE,
        },
    )
    with Maitento(stack.url, created.key.key) as ns:
        # `deploy.folder` reads schedules/ as `mt deploy` does.
        plan = ns.deploy.folder(repo)
        assert plan.applied
        assert ("schedule", "every-second", "create") in [(c.kind, c.name, c.action) for c in plan.changes]
        try:
            [listed] = ns.schedules.list()
            assert (listed.name, listed.version, listed.interaction) == ("every-second", 1, "tick")
            assert (listed.cron, listed.timezone, listed.overlap, listed.missed) == ("* * * * * *", "UTC", "allow", "skip")
            assert listed.enabled and not listed.paused and listed.next_tick is not None

            ticks = wait_for("2 started ticks", lambda: ns.schedules.ticks("every-second"),
                             lambda rows: sum(r.status == "started" for r in rows) >= 2)
            started = next(t for t in ticks if t.status == "started")
            assert started.version == 1 and started.run_id is not None
            # A tick's run is an app run of the interaction, with the schedule's inputs.
            run = ns.interaction_runs.get(started.run_id)
            assert (run.interaction.name, run.interactive, run.inputs) == ("tick", False, {"label": "nightly"})
            assert ns.schedules.get("every-second").last_tick is not None

            paused = ns.schedules.pause("every-second", reason="maintenance window")
            assert paused.paused and paused.next_tick is None
            assert ns.schedules.get("every-second").paused
            resumed = ns.schedules.resume("every-second", reason="done")
            assert not resumed.paused and resumed.next_tick is not None
            actions = [e.action for e in ns.audit.list(action="schedule").entries]
            assert {"schedule.paused", "schedule.resumed"} <= set(actions)

            latest = ns.schedules.ticks("every-second", limit=2)
            assert len(latest) == 2 and latest[0].tick > latest[1].tick  # newest first (ISO 8601, one zone)

            with pytest.raises(NotFoundError) as unknown:
                ns.schedules.get("every-secnd")
            assert unknown.value.code == "api:schedules:not-found"

            async def the_same_async() -> tuple[list[ScheduleState], ScheduleState, ScheduleState, int]:
                async with AsyncMaitento(stack.url, created.key.key) as ans:
                    listed = await ans.schedules.list()
                    paused = await ans.schedules.pause("every-second")
                    resumed = await ans.schedules.resume("every-second")
                    return listed, paused, resumed, len(await ans.schedules.ticks("every-second", limit=1))

            alisted, apaused, aresumed, count = asyncio.run(the_same_async())
            assert [s.name for s in alisted] == ["every-second"]
            assert apaused.paused and apaused.next_tick is None
            assert not aresumed.paused and aresumed.next_tick is not None
            assert count == 1
        finally:
            # Quiet for the session's other tests: no run a second from here on.
            ns.schedules.pause("every-second", reason="test over")


def github_signature(secret: str, body: bytes) -> str:
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def test_a_triggers_delivery_log(stack: Stack, mt: Maitento, tmp_path: Path) -> None:
    name = "hooks-" + secrets.token_hex(4)
    created = mt.namespaces.create(name=name)
    secret = "gh-" + secrets.token_hex(16)
    repo = write(
        tmp_path,
        {"agents/ticker.mtr": AGENT, "interactions/one-shot/tick.mtr": INTERACTION, "triggers/issues.mtr": TRIGGER},
    )
    url = f"{stack.url}/v1/hooks/{name}/issues"

    def deliver(payload: object, *, delivery: str | None = None, sign_with: str = secret) -> httpx.Response:
        body = json.dumps(payload).encode()
        headers = {
            "content-type": "application/json",
            "x-hub-signature-256": github_signature(sign_with, body),
            "x-github-delivery": delivery or str(uuid.uuid4()),
        }
        return httpx.post(url, content=body, headers=headers, timeout=30)

    with Maitento(stack.url, created.key.key) as ns:
        ns.secrets.create(name="github-hook", value=secret)
        plan = ns.deploy.folder(repo)
        assert ("trigger", "issues", "create") in [(c.kind, c.name, c.action) for c in plan.changes]

        first = str(uuid.uuid4())
        accepted = deliver({"issue": {"title": "broken lid"}}, delivery=first)
        assert accepted.status_code == 202, accepted.text
        run_id = accepted.json()["runId"]
        replayed = deliver({"issue": {"title": "broken lid"}}, delivery=first)
        assert replayed.status_code == 202 and replayed.json()["runId"] == run_id
        assert replayed.headers["webhook-replayed"] == "true"
        forged = deliver({"issue": {"title": "x"}}, sign_with="not-the-secret")
        assert (forged.status_code, forged.json()["code"]) == (401, "api:hooks:signature-invalid")
        refused = deliver({"issue": {}})
        assert (refused.status_code, refused.json()["code"]) == (422, "api:hooks:inputs-refused")

        log = ns.triggers.deliveries("issues")
        # Newest first: the refused delivery, then the one that started a run (its replay started nothing more).
        assert [(d.status, d.answer_status) for d in log.deliveries] == [("refused", 422), ("started", 202)]
        assert log.deliveries[1].event_id == first and log.deliveries[1].run_id == run_id
        assert log.deliveries[0].run_id is None and log.deliveries[0].detail
        assert log.rejected == {"signature": 1}
        assert ns.interaction_runs.get(run_id).inputs == {"label": "broken lid"}
        assert len(ns.triggers.deliveries("issues", limit=1).deliveries) == 1

        async def the_same_async() -> tuple[list[str], dict[str, int]]:
            async with AsyncMaitento(stack.url, created.key.key) as ans:
                got = await ans.triggers.deliveries("issues")
                return [d.event_id for d in got.deliveries], got.rejected

        assert asyncio.run(the_same_async()) == ([d.event_id for d in log.deliveries], {"signature": 1})
        with pytest.raises(NotFoundError):
            ns.triggers.deliveries("isues")


def test_a_deploys_warnings_are_in_its_plan(stack: Stack, mt: Maitento) -> None:
    created = mt.namespaces.create(name="warn-" + secrets.token_hex(4))
    # The server has no OPENAI_API_KEY: the agent deploys, with a warning, instead of its runs failing later.
    files = [{"path": "agents/helper.mtr", "content": '// On OpenAI.\nmodel = "openai:gpt-4o-mini"\ninstructions = "Help."\n'}]
    with Maitento(stack.url, created.key.key) as ns:
        plan = ns.deploy.create(files=files, dry_run=True)
        assert not plan.applied and plan.warnings is not None
        [warning] = plan.warnings
        assert (warning.code, warning.severity, warning.file, warning.line) == (
            "api:deploy:model-not-configured", "warning", "agents/helper.mtr", 2,
        )
        assert "OPENAI_API_KEY" in warning.message

    async def applied_async() -> tuple[bool, list[str]]:
        async with AsyncMaitento(stack.url, created.key.key) as ans:
            plan = await ans.deploy.create(files=files)
            return plan.applied, [w.code for w in plan.warnings or []]

    assert asyncio.run(applied_async()) == (True, ["api:deploy:model-not-configured"])
