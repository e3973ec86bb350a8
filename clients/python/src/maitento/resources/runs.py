"""`mt.interaction_runs`: start runs, follow them (paging, the live event stream), cancel them, answer approvals."""

from __future__ import annotations

import builtins

import asyncio
import inspect
import json
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import TYPE_CHECKING, Any, Literal

import httpx_sse

from .._base import path, with_query, without_none
from .._errors import APIConnectionError, APIStatusError, MaitentoError, error_from_body
from .._retry import retry_delay
from ..models import Run, RunEvent, RunPage, RunSummary

if TYPE_CHECKING:
    from .._client import AsyncAPIClient, SyncAPIClient

RunStatus = Literal[
    "Running",
    "PendingApproval",
    "PendingAuthorization",
    "PendingBudget",
    "PendingLimit",
    "WaitingForInput",
    "Completed",
    "Failed",
    "Cancelled",
]
TERMINAL_EVENTS = frozenset({"run-completed", "conversation-ended", "run-failed", "run-cancelled"})


def _start_body(
    inputs: dict[str, Any] | None, interactive: bool | None, version: int | None, end_user: str | None
) -> dict[str, Any]:
    return without_none({"inputs": inputs, "interactive": interactive, "version": version, "endUser": end_user})


def _answer_body(
    approval_id: str | None,
    reason: str | None,
    arguments: dict[str, Any] | None = None,
    request_hash: str | None = None,
) -> dict[str, Any]:
    return without_none(
        {"approvalId": approval_id, "reason": reason, "arguments": arguments, "requestHash": request_hash}
    )


def _reconnectable(error: MaitentoError) -> bool:
    if isinstance(error, APIStatusError):
        return error.status in (408, 429) or error.status >= 500
    return isinstance(error, APIConnectionError)


def _stream_error(data: str, route: str) -> APIStatusError:
    """An `event: error` of the stream, as the error class of its status."""
    try:
        body: Any = json.loads(data)
    except ValueError:
        body = {"error": data, "code": "api:sdk:unexpected-response"}
    status = body.get("status") if isinstance(body, dict) else None
    return error_from_body(status if isinstance(status, int) else 502, body, "GET", route, None)


class _EventCursor:
    """What the live stream has handed out: the last seq, and failures in a row without a new event."""

    def __init__(self, after: int, max_reconnects: int) -> None:
        self.after = after
        self.failures = 0
        self.max_reconnects = max_reconnects
        self.last_error: MaitentoError | None = None

    def accept(self, sse: httpx_sse.ServerSentEvent, route: str) -> RunEvent | None:
        if sse.event == "error":
            raise _stream_error(sse.data, route)
        # The server's `: keep-alive` comment (after 15 s without an event) comes out of httpx-sse as an event
        # without data (it keeps the last id); the SSE spec dispatches nothing there, so neither do we.
        if not sse.data:
            return None
        event = RunEvent.model_validate_json(sse.data)
        if event.seq <= self.after:
            return None
        self.after = event.seq
        self.failures = 0
        return event

    def failed(self, error: MaitentoError | None, url: str) -> float:
        """Counts a dropped connection; raises when too many came in a row, else says how long to wait."""
        if error is not None:
            self.last_error = error
        self.failures += 1
        if self.failures > self.max_reconnects:
            raise self.last_error or APIConnectionError(url, "the stream ended before the run did")
        return retry_delay(self.failures)


class RunsPage:
    """One page of runs (`runs`, `next_cursor`); iterating it goes on through every following page."""

    def __init__(self, page: RunPage, fetch: Callable[[str | None], RunPage]) -> None:
        self.runs: builtins.list[RunSummary] = page.runs
        self.next_cursor: str | None = page.next_cursor
        self._first = page
        self._fetch = fetch

    def has_next_page(self) -> bool:
        return self.next_cursor is not None

    def iter_pages(self) -> Iterator[RunPage]:
        page = self._first
        while True:
            yield page
            if page.next_cursor is None:
                return
            page = self._fetch(page.next_cursor)

    def __iter__(self) -> Iterator[RunSummary]:
        for page in self.iter_pages():
            yield from page.runs


class AsyncRunsPage:
    """One page of runs (`runs`, `next_cursor`); `async for` goes on through every following page."""

    def __init__(self, page: RunPage, fetch: Callable[[str | None], Awaitable[RunPage]]) -> None:
        self.runs: builtins.list[RunSummary] = page.runs
        self.next_cursor: str | None = page.next_cursor
        self._first = page
        self._fetch = fetch

    def has_next_page(self) -> bool:
        return self.next_cursor is not None

    async def iter_pages(self) -> AsyncIterator[RunPage]:
        page = self._first
        while True:
            yield page
            if page.next_cursor is None:
                return
            page = await self._fetch(page.next_cursor)

    async def __aiter__(self) -> AsyncIterator[RunSummary]:
        async for page in self.iter_pages():
            for run in page.runs:
                yield run


class InteractionRuns:
    """`mt.interaction_runs`: start runs of interactions, follow them, cancel them and answer their approvals."""

    def __init__(self, client: SyncAPIClient) -> None:
        self._client = client

    def start(
        self,
        name: str,
        *,
        inputs: dict[str, Any] | None = None,
        interactive: bool | None = None,
        version: int | None = None,
        end_user: str | None = None,
        idempotency_key: str | None = None,
    ) -> Run:
        """Starts a run (returned as stored, usually `Running`). A retried start carries one Idempotency-Key.
        `end_user`: the person the run acts for, whose connections its `auth = "OAuth2"` connectors use
        (docs/connections.md)."""
        route = path("/v1/interactions/{}/runs", name)
        body = _start_body(inputs, interactive, version, end_user)
        return Run.model_validate(self._client.request("POST", route, body, idempotency_key=idempotency_key))

    def get(self, run_id: str) -> Run:
        """One run as it stands now."""
        return Run.model_validate(self._client.request("GET", path("/v1/runs/{}", run_id)))

    def list(
        self,
        *,
        interaction: str | None = None,
        agent: str | None = None,
        tool: str | None = None,
        status: RunStatus | None = None,
        limit: int | None = None,
        cursor: str | None = None,
    ) -> RunsPage:
        """The namespace's runs, newest first, as summaries; iterate the page to go through all of them.
        `agent`: only runs that pinned a version of it; `tool`: only runs that called it."""

        def fetch(next_cursor: str | None) -> RunPage:
            query = {
                "interaction": interaction,
                "agent": agent,
                "tool": tool,
                "status": status,
                "limit": limit,
                "cursor": next_cursor,
            }
            return RunPage.model_validate(self._client.request("GET", with_query("/v1/runs", query)))

        return RunsPage(fetch(cursor), fetch)

    def cancel(self, run_id: str) -> Run:
        """Cancels a run that has not ended (`api:runs:already-ended`, 409, for one that has)."""
        return Run.model_validate(self._client.request("POST", path("/v1/runs/{}/cancel", run_id)))

    def extend_budget(
        self,
        run_id: str,
        *,
        tokens: int | None = None,
        cost_usd: float | None = None,
        on_exceeded: Literal["wait", "fail"] | None = None,
    ) -> Run:
        """Gives a `PendingBudget` run a new budget it has not reached yet; the run goes on (docs/runs.md)."""
        body = without_none({"tokens": tokens, "costUsd": cost_usd, "onExceeded": on_exceeded})
        return Run.model_validate(self._client.request("POST", path("/v1/runs/{}/budget", run_id), body))

    def approve(
        self,
        run_id: str,
        *,
        approval_id: str | None = None,
        arguments: dict[str, Any] | None = None,
        request_hash: str | None = None,
    ) -> Run:
        """Approves the call the run waits on (or the approval named): exactly that call is made.

        With `arguments` (and the `request_hash` of the approval you read), edit, then approve: the call is made with
        these arguments instead of the model's (docs/roles.md, "Edit, then approve").
        """
        route = path("/v1/runs/{}/approve", run_id)
        return Run.model_validate(self._client.request("POST", route, _answer_body(approval_id, None, arguments, request_hash)))

    def reject(self, run_id: str, *, reason: str, approval_id: str | None = None) -> Run:
        """Rejects the call the run waits on with a reason; the model is told it and may redraft."""
        route = path("/v1/runs/{}/reject", run_id)
        return Run.model_validate(self._client.request("POST", route, _answer_body(approval_id, reason)))

    def list_events(self, run_id: str, *, after: int | None = None, limit: int | None = None) -> builtins.list[RunEvent]:
        """One page of the stored events with `seq` above `after`, in order; one request, no waiting."""
        route = with_query(path("/v1/runs/{}/events", run_id), {"after": after or None, "limit": limit})
        return [RunEvent.model_validate(x) for x in self._client.request("GET", route)]

    def events(
        self, run_id: str, *, after: int = 0, max_reconnects: int = 5, idle_timeout: float = 45.0
    ) -> Iterator[RunEvent]:
        """The run's events as they happen, ending after `run-completed`, `run-failed` or `run-cancelled`.
        A dropped connection (or one silent for `idle_timeout` s) is reopened with `Last-Event-ID`, so no
        event is lost or repeated; `max_reconnects` failures in a row without a new event raise."""
        route = path("/v1/runs/{}/stream", run_id)
        cursor = _EventCursor(after, max_reconnects)
        while True:
            error: MaitentoError | None = None
            try:
                with self._client.stream_events(route, str(cursor.after), idle_timeout) as source:
                    for sse in source.iter_sse():
                        event = cursor.accept(sse, route)
                        if event is None:
                            continue
                        yield event
                        if event.type in TERMINAL_EVENTS:
                            return
            except MaitentoError as caught:
                if not _reconnectable(caught):
                    raise
                error = caught
            # The stream ended before the run did (a dropped connection, a server restarting): reopen it.
            time.sleep(cursor.failed(error, self._client.api_url + route))

    def run(
        self,
        name: str,
        *,
        inputs: dict[str, Any] | None = None,
        interactive: bool | None = None,
        version: int | None = None,
        end_user: str | None = None,
        on_waiting: Callable[[Run], object] | None = None,
    ) -> Run:
        """Starts a run and follows it to its end: calls `on_waiting(run)` once for every approval it waits
        on (a redraft after a rejection is a new approval), and returns the finished run; a conversation's run is
        returned at its first reply (`WaitingForInput`, the reply in `result`): continue it with `send`.
        The approvals of the child runs below it (an agent handed a task by a call) are included: `on_waiting`
        gets this run (`PendingApproval`), its `pending_approval.run_id` naming the run that asks and
        `agent_name` its agent; answering through `run.id` answers it.
        A run started with `end_user` whose person must connect an account (`PendingAuthorization`, its own call or a
        child run's) calls `on_waiting` once per connect link, with the waiting run: hand
        `run.pending_authorization.url` to the person; the run goes on by itself once they have connected.
        A call that waits for its rate limit's window (`PendingLimit`, docs/limits.md) calls `on_waiting` once per
        wait: `run.waiting` says which limit and `until` when; the run goes on by itself then."""
        run = self.start(name, inputs=inputs, interactive=interactive, version=version, end_user=end_user)
        return self._follow(run.id, 0, on_waiting)

    def send(self, run_id: str, text: str, *, on_waiting: Callable[[Run], object] | None = None) -> Run:
        """Sends the next message of a conversation waiting for one (`WaitingForInput`) and follows the run until
        it waits again or ends, calling `on_waiting` for approvals as `run` does; returns the run, its reply in
        `result`. Errors: `api:runs:message-empty` (422), `api:runs:not-waiting-for-input` (409),
        `api:runs:already-ended` (409)."""
        self._client.request("POST", path("/v1/runs/{}/messages", run_id), {"text": text})
        # The message just stored is the run's last `user-message`: no other is taken until the run waits again.
        after, page, sent = 0, 1000, 0
        while True:
            events = self.list_events(run_id, after=after, limit=page)
            for event in events:
                if event.type == "user-message":
                    sent = event.seq
            if len(events) < page:
                break
            after = events[-1].seq
        return self._follow(run_id, sent, on_waiting)

    def _follow(self, run_id: str, after: int, on_waiting: Callable[[Run], object] | None) -> Run:
        # Follows the run's events after `after` until it ends or waits for a message, asking `on_waiting` about
        # approvals, those of the child runs its calls start included (agents as tools).
        asked: set[str] = set()

        def ask_if_waiting() -> None:
            # The run followed shows the approval it waits on, its own or one of a run below it
            # (`pending_approval.run_id` names the run that asks): its status follows a child's.
            current = self.get(run_id)
            pending = current.pending_approval
            if current.status == "PendingApproval" and pending is not None and pending.id not in asked:
                asked.add(pending.id)
                if on_waiting is not None:
                    on_waiting(current)
            ask_if_authorizing(current)

        def ask_if_authorizing(current: Run) -> None:
            # A run (this one, or a child run below it) that waits for its end user to connect: told once per link.
            authorization = current.pending_authorization
            if current.status == "PendingAuthorization" and authorization is not None and authorization.url not in asked:
                asked.add(authorization.url)
                if on_waiting is not None:
                    on_waiting(current)

        def tell_if_limited(waiting_id: str, event: RunEvent) -> None:
            # A call waiting for its limit's window (`PendingLimit`): told once per wait; the run goes on by itself.
            mark = f"{waiting_id}/{event.seq}"
            if event.type != "limit-waiting" or mark in asked:
                return
            asked.add(mark)
            current = self.get(waiting_id)
            if current.status == "PendingLimit" and on_waiting is not None:
                on_waiting(current)

        def follow_child(child_id: str) -> None:
            # The parent stores nothing while its child goes on or waits for a person: the child's own stream is
            # followed to its end, its children likewise.
            for event in self.events(child_id):
                tell_if_limited(child_id, event)
                if event.type == "run-waiting":
                    ask_if_waiting()
                    # A child waiting for its end user to connect leaves its parent Running: the child is shown.
                    ask_if_authorizing(self.get(child_id))
                child = _child_run_of(event)
                if child is not None:
                    follow_child(child)

        for event in self.events(run_id, after=after):
            if event.type == "run-waiting":
                ask_if_waiting()
            tell_if_limited(run_id, event)
            child = _child_run_of(event)
            if child is not None:
                follow_child(child)
            if event.type == "input-requested":
                break
        return self.get(run_id)


class AsyncInteractionRuns:
    """`mt.interaction_runs` of `AsyncMaitento`: the same methods as `InteractionRuns`, awaited."""

    def __init__(self, client: AsyncAPIClient) -> None:
        self._client = client

    async def start(
        self,
        name: str,
        *,
        inputs: dict[str, Any] | None = None,
        interactive: bool | None = None,
        version: int | None = None,
        end_user: str | None = None,
        idempotency_key: str | None = None,
    ) -> Run:
        """Starts a run (returned as stored, usually `Running`). A retried start carries one Idempotency-Key.
        `end_user`: the person the run acts for, whose connections its `auth = "OAuth2"` connectors use
        (docs/connections.md)."""
        route = path("/v1/interactions/{}/runs", name)
        body = _start_body(inputs, interactive, version, end_user)
        return Run.model_validate(await self._client.request("POST", route, body, idempotency_key=idempotency_key))

    async def get(self, run_id: str) -> Run:
        """One run as it stands now."""
        return Run.model_validate(await self._client.request("GET", path("/v1/runs/{}", run_id)))

    async def list(
        self,
        *,
        interaction: str | None = None,
        agent: str | None = None,
        tool: str | None = None,
        status: RunStatus | None = None,
        limit: int | None = None,
        cursor: str | None = None,
    ) -> AsyncRunsPage:
        """The namespace's runs, newest first, as summaries; `async for` over the page goes through all.
        `agent`: only runs that pinned a version of it; `tool`: only runs that called it."""

        async def fetch(next_cursor: str | None) -> RunPage:
            query = {
                "interaction": interaction,
                "agent": agent,
                "tool": tool,
                "status": status,
                "limit": limit,
                "cursor": next_cursor,
            }
            return RunPage.model_validate(await self._client.request("GET", with_query("/v1/runs", query)))

        return AsyncRunsPage(await fetch(cursor), fetch)

    async def cancel(self, run_id: str) -> Run:
        """Cancels a run that has not ended (`api:runs:already-ended`, 409, for one that has)."""
        return Run.model_validate(await self._client.request("POST", path("/v1/runs/{}/cancel", run_id)))

    async def extend_budget(
        self,
        run_id: str,
        *,
        tokens: int | None = None,
        cost_usd: float | None = None,
        on_exceeded: Literal["wait", "fail"] | None = None,
    ) -> Run:
        """Gives a `PendingBudget` run a new budget it has not reached yet; the run goes on (docs/runs.md)."""
        body = without_none({"tokens": tokens, "costUsd": cost_usd, "onExceeded": on_exceeded})
        return Run.model_validate(await self._client.request("POST", path("/v1/runs/{}/budget", run_id), body))

    async def approve(
        self,
        run_id: str,
        *,
        approval_id: str | None = None,
        arguments: dict[str, Any] | None = None,
        request_hash: str | None = None,
    ) -> Run:
        """Approves the call the run waits on (or the approval named): exactly that call is made.

        With `arguments` (and the `request_hash` of the approval you read), edit, then approve: the call is made with
        these arguments instead of the model's (docs/roles.md, "Edit, then approve").
        """
        route = path("/v1/runs/{}/approve", run_id)
        return Run.model_validate(await self._client.request("POST", route, _answer_body(approval_id, None, arguments, request_hash)))

    async def reject(self, run_id: str, *, reason: str, approval_id: str | None = None) -> Run:
        """Rejects the call the run waits on with a reason; the model is told it and may redraft."""
        route = path("/v1/runs/{}/reject", run_id)
        return Run.model_validate(await self._client.request("POST", route, _answer_body(approval_id, reason)))

    async def list_events(
        self, run_id: str, *, after: int | None = None, limit: int | None = None
    ) -> builtins.list[RunEvent]:
        """One page of the stored events with `seq` above `after`, in order; one request, no waiting."""
        route = with_query(path("/v1/runs/{}/events", run_id), {"after": after or None, "limit": limit})
        return [RunEvent.model_validate(x) for x in await self._client.request("GET", route)]

    async def events(
        self, run_id: str, *, after: int = 0, max_reconnects: int = 5, idle_timeout: float = 45.0
    ) -> AsyncIterator[RunEvent]:
        """The run's events as they happen (see `InteractionRuns.events`), resumed with `Last-Event-ID`."""
        route = path("/v1/runs/{}/stream", run_id)
        cursor = _EventCursor(after, max_reconnects)
        while True:
            error: MaitentoError | None = None
            try:
                async with self._client.stream_events(route, str(cursor.after), idle_timeout) as source:
                    async for sse in source.aiter_sse():
                        event = cursor.accept(sse, route)
                        if event is None:
                            continue
                        yield event
                        if event.type in TERMINAL_EVENTS:
                            return
            except MaitentoError as caught:
                if not _reconnectable(caught):
                    raise
                error = caught
            await asyncio.sleep(cursor.failed(error, self._client.api_url + route))

    async def run(
        self,
        name: str,
        *,
        inputs: dict[str, Any] | None = None,
        interactive: bool | None = None,
        version: int | None = None,
        end_user: str | None = None,
        on_waiting: Callable[[Run], object] | None = None,
    ) -> Run:
        """Starts a run and follows it to its end, calling (and awaiting, when it is a coroutine function)
        `on_waiting(run)` once for every approval it waits on (its child runs' included, as the synchronous
        `run`) and once per connect link of a run waiting for its end user (`PendingAuthorization`); returns the
        finished run (a conversation's at its first reply, `WaitingForInput`: continue it with `send`)."""
        run = await self.start(name, inputs=inputs, interactive=interactive, version=version, end_user=end_user)
        return await self._follow(run.id, 0, on_waiting)

    async def send(self, run_id: str, text: str, *, on_waiting: Callable[[Run], object] | None = None) -> Run:
        """Sends the next message of a conversation waiting for one and follows the run until it waits again or
        ends (as the synchronous `send`); returns the run, its reply in `result`."""
        await self._client.request("POST", path("/v1/runs/{}/messages", run_id), {"text": text})
        after, page, sent = 0, 1000, 0
        while True:
            events = await self.list_events(run_id, after=after, limit=page)
            for event in events:
                if event.type == "user-message":
                    sent = event.seq
            if len(events) < page:
                break
            after = events[-1].seq
        return await self._follow(run_id, sent, on_waiting)

    async def _follow(self, run_id: str, after: int, on_waiting: Callable[[Run], object] | None) -> Run:
        # As the synchronous `_follow`: the run's events, and those of the child runs its calls start.
        asked: set[str] = set()

        async def ask_if_waiting() -> None:
            current = await self.get(run_id)
            pending = current.pending_approval
            if current.status == "PendingApproval" and pending is not None and pending.id not in asked:
                asked.add(pending.id)
                await tell(current)
            await ask_if_authorizing(current)

        async def ask_if_authorizing(current: Run) -> None:
            authorization = current.pending_authorization
            if current.status == "PendingAuthorization" and authorization is not None and authorization.url not in asked:
                asked.add(authorization.url)
                await tell(current)

        async def tell(current: Run) -> None:
            if on_waiting is not None:
                result = on_waiting(current)
                if inspect.isawaitable(result):
                    await result

        async def tell_if_limited(waiting_id: str, event: RunEvent) -> None:
            mark = f"{waiting_id}/{event.seq}"
            if event.type != "limit-waiting" or mark in asked:
                return
            asked.add(mark)
            current = await self.get(waiting_id)
            if current.status == "PendingLimit":
                await tell(current)

        async def follow_child(child_id: str) -> None:
            async for event in self.events(child_id):
                await tell_if_limited(child_id, event)
                if event.type == "run-waiting":
                    await ask_if_waiting()
                    await ask_if_authorizing(await self.get(child_id))
                child = _child_run_of(event)
                if child is not None:
                    await follow_child(child)

        async for event in self.events(run_id, after=after):
            if event.type == "run-waiting":
                await ask_if_waiting()
            await tell_if_limited(run_id, event)
            child = _child_run_of(event)
            if child is not None:
                await follow_child(child)
            if event.type == "input-requested":
                break
        return await self.get(run_id)


def _child_run_of(event: RunEvent) -> str | None:
    """The child run a `tool-call-started` started (a call of an agent as a tool), if any."""
    child = event.data.get("childRunId") if event.type == "tool-call-started" else None
    return child if isinstance(child, str) else None
