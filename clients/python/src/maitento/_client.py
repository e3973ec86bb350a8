"""The HTTP core of `Maitento` and `AsyncMaitento`: one httpx client, retries with one Idempotency-Key."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Iterator, Mapping
from contextlib import asynccontextmanager, contextmanager
from typing import Any

import httpx
import httpx_sse

from ._base import (
    DEFAULT_MAX_RETRIES,
    DEFAULT_TIMEOUT,
    default_headers,
    new_idempotency_key,
    resolve_settings,
)
from ._errors import APIConnectionError, APITimeoutError, MaitentoError, error_from_response
from ._retry import is_retryable_status, retry_delay


def _body_of(response: httpx.Response) -> Any:
    if not response.content:
        return None
    try:
        return response.json()
    except ValueError:
        return response.text


def _connection_error(url: str, error: httpx.TransportError, timeout: float) -> APIConnectionError:
    if isinstance(error, httpx.TimeoutException):
        return APITimeoutError(url, timeout)
    return APIConnectionError(url, type(error).__name__ + (f": {error}" if str(error) else ""))


class _Settings:
    def __init__(self, api_url: str | None, api_key: str | None, timeout: float, max_retries: int) -> None:
        self.api_url, self.api_key = resolve_settings(api_url, api_key)
        self.timeout = timeout
        self.max_retries = max_retries

    def prepare(self, method: str, idempotency_key: str | None, body: Any) -> dict[str, str]:
        headers: dict[str, str] = {}
        if method != "GET":
            # One key for every try of this call: the server answers a retried POST with the first answer.
            headers["idempotency-key"] = idempotency_key or new_idempotency_key()
        if body is not None:
            headers["content-type"] = "application/json"
        return headers


class SyncAPIClient:
    """Sends requests for the resources of `Maitento`; `request` retries and raises `MaitentoError`s."""

    def __init__(
        self,
        api_url: str | None = None,
        api_key: str | None = None,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        max_retries: int = DEFAULT_MAX_RETRIES,
        http_client: httpx.Client | None = None,
    ) -> None:
        self._settings = _Settings(api_url, api_key, timeout, max_retries)
        self._http = http_client or httpx.Client(timeout=timeout)
        self._headers = default_headers(self._settings.api_key)

    @property
    def api_url(self) -> str:
        return self._settings.api_url

    @property
    def timeout(self) -> float:
        return self._settings.timeout

    def close(self) -> None:
        """Closes the connections."""
        self._http.close()

    def request(
        self,
        method: str,
        route: str,
        body: Any = None,
        *,
        idempotency_key: str | None = None,
        timeout: float | None = None,
        max_retries: int | None = None,
    ) -> Any:
        """Sends one request and returns its parsed JSON (None for an empty answer)."""
        response = self.send(
            method, route, body, idempotency_key=idempotency_key, timeout=timeout, max_retries=max_retries
        )
        return _body_of(response)

    def send(
        self,
        method: str,
        route: str,
        body: Any = None,
        *,
        content: bytes | None = None,
        headers: Mapping[str, str] | None = None,
        idempotency_key: str | None = None,
        timeout: float | None = None,
        max_retries: int | None = None,
    ) -> httpx.Response:
        """Sends one request (a JSON `body`, or raw `content` with its `headers`) and returns the successful
        answer, read; retries as `request` does and raises the `MaitentoError` of an error answer."""
        s = self._settings
        url = s.api_url + route
        sent = {**self._headers, **s.prepare(method, idempotency_key, body), **(headers or {})}
        limit = s.timeout if timeout is None else timeout
        retries = s.max_retries if max_retries is None else max_retries
        attempt = 0
        while True:
            try:
                response = self._http.request(
                    method, url, json=body, content=content, headers=sent, timeout=limit
                )
            except httpx.TransportError as error:
                if attempt < retries:
                    attempt += 1
                    time.sleep(retry_delay(attempt))
                    continue
                raise _connection_error(url, error, limit) from error
            if response.is_success:
                return response
            if is_retryable_status(response.status_code) and attempt < retries:
                attempt += 1
                time.sleep(retry_delay(attempt, response.headers))
                continue
            raise error_from_response(response)

    @contextmanager
    def stream_events(self, route: str, last_event_id: str, idle_timeout: float) -> Iterator[httpx_sse.EventSource]:
        """Opens a Server-Sent Events GET; an error status raises its `MaitentoError` (not retried here)."""
        url = self._settings.api_url + route
        headers = {**self._headers, "last-event-id": last_event_id}
        timeout = httpx.Timeout(self._settings.timeout, read=idle_timeout)
        try:
            with httpx_sse.connect_sse(self._http, "GET", url, headers=headers, timeout=timeout) as source:
                if not source.response.is_success:
                    source.response.read()
                    raise error_from_response(source.response)
                yield source
        except httpx.TransportError as error:
            raise _connection_error(url, error, idle_timeout) from error


class AsyncAPIClient:
    """Sends requests for the resources of `AsyncMaitento`; `request` retries and raises `MaitentoError`s."""

    def __init__(
        self,
        api_url: str | None = None,
        api_key: str | None = None,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        max_retries: int = DEFAULT_MAX_RETRIES,
        http_client: httpx.AsyncClient | None = None,
    ) -> None:
        self._settings = _Settings(api_url, api_key, timeout, max_retries)
        self._http = http_client or httpx.AsyncClient(timeout=timeout)
        self._headers = default_headers(self._settings.api_key)

    @property
    def api_url(self) -> str:
        return self._settings.api_url

    @property
    def timeout(self) -> float:
        return self._settings.timeout

    async def close(self) -> None:
        """Closes the connections."""
        await self._http.aclose()

    async def request(
        self,
        method: str,
        route: str,
        body: Any = None,
        *,
        idempotency_key: str | None = None,
        timeout: float | None = None,
        max_retries: int | None = None,
    ) -> Any:
        """Sends one request and returns its parsed JSON (None for an empty answer)."""
        response = await self.send(
            method, route, body, idempotency_key=idempotency_key, timeout=timeout, max_retries=max_retries
        )
        return _body_of(response)

    async def send(
        self,
        method: str,
        route: str,
        body: Any = None,
        *,
        content: bytes | None = None,
        headers: Mapping[str, str] | None = None,
        idempotency_key: str | None = None,
        timeout: float | None = None,
        max_retries: int | None = None,
    ) -> httpx.Response:
        """Sends one request (a JSON `body`, or raw `content` with its `headers`) and returns the successful
        answer, read; retries as `request` does and raises the `MaitentoError` of an error answer."""
        s = self._settings
        url = s.api_url + route
        sent = {**self._headers, **s.prepare(method, idempotency_key, body), **(headers or {})}
        limit = s.timeout if timeout is None else timeout
        retries = s.max_retries if max_retries is None else max_retries
        attempt = 0
        while True:
            try:
                response = await self._http.request(
                    method, url, json=body, content=content, headers=sent, timeout=limit
                )
            except httpx.TransportError as error:
                if attempt < retries:
                    attempt += 1
                    await asyncio.sleep(retry_delay(attempt))
                    continue
                raise _connection_error(url, error, limit) from error
            if response.is_success:
                return response
            if is_retryable_status(response.status_code) and attempt < retries:
                attempt += 1
                await asyncio.sleep(retry_delay(attempt, response.headers))
                continue
            raise error_from_response(response)

    @asynccontextmanager
    async def stream_events(
        self, route: str, last_event_id: str, idle_timeout: float
    ) -> AsyncIterator[httpx_sse.EventSource]:
        """Opens a Server-Sent Events GET; an error status raises its `MaitentoError` (not retried here)."""
        url = self._settings.api_url + route
        headers = {**self._headers, "last-event-id": last_event_id}
        timeout = httpx.Timeout(self._settings.timeout, read=idle_timeout)
        try:
            async with httpx_sse.aconnect_sse(self._http, "GET", url, headers=headers, timeout=timeout) as source:
                if not source.response.is_success:
                    await source.response.aread()
                    raise error_from_response(source.response)
                yield source
        except httpx.TransportError as error:
            raise _connection_error(url, error, idle_timeout) from error


__all__ = ["SyncAPIClient", "AsyncAPIClient", "MaitentoError"]
