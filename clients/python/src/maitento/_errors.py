"""Errors: one `MaitentoError` base with `code`, `status`, `message` and `details`, a class per status family."""

from __future__ import annotations

from typing import Any

import httpx

__all__ = [
    "MaitentoError",
    "APIStatusError",
    "BadRequestError",
    "AuthenticationError",
    "PermissionDeniedError",
    "NotFoundError",
    "ConflictError",
    "PreconditionFailedError",
    "UnprocessableEntityError",
    "RateLimitError",
    "InternalServerError",
    "APIConnectionError",
    "APITimeoutError",
    "InvalidArgumentError",
]


class MaitentoError(Exception):
    """Any error of the SDK. Branch on `code` (`api:<area>:<reason>`), never on the message."""

    code: str
    status: int
    message: str
    details: dict[str, Any]

    def __init__(self, code: str, status: int, message: str, details: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.status = status
        self.message = message
        self.details = details or {}

    def __str__(self) -> str:
        return f"{self.message} ({self.code})"


class APIStatusError(MaitentoError):
    """The server answered with an error status. `details` holds the body's other fields (`diagnostics`, ...)."""

    response: httpx.Response | None

    def __init__(
        self, code: str, status: int, message: str, details: dict[str, Any] | None = None,
        response: httpx.Response | None = None,
    ) -> None:
        super().__init__(code, status, message, details)
        self.response = response


class BadRequestError(APIStatusError):
    """400: the request was malformed."""


class AuthenticationError(APIStatusError):
    """401: no API key, or a key the server does not know."""


class PermissionDeniedError(APIStatusError):
    """403: the key's role may not do this."""


class NotFoundError(APIStatusError):
    """404: no such record, or not in the key's namespace."""


class ConflictError(APIStatusError):
    """409: the request conflicts with the current state (an approval answered already, a run that ended)."""


class PreconditionFailedError(APIStatusError):
    """412: a condition of the request does not hold: a file write's `If-Match` / `If-None-Match`
    (`api:files:precondition-failed`); read the file again for its current ETag."""


class UnprocessableEntityError(APIStatusError):
    """422: the config or the input is invalid; `diagnostics` lists a refused deploy's findings."""

    @property
    def diagnostics(self) -> list[dict[str, Any]]:
        value = self.details.get("diagnostics")
        return list(value) if isinstance(value, list) else []


class RateLimitError(APIStatusError):
    """429: too many requests (or streams) for the key."""


class InternalServerError(APIStatusError):
    """5xx: the server failed."""


class APIConnectionError(MaitentoError):
    """No answer at all: the connection failed (`api:sdk:connection-failed`), after the retries."""

    url: str

    def __init__(self, url: str, reason: str, code: str = "api:sdk:connection-failed", status: int = 503,
                 message: str | None = None) -> None:
        super().__init__(code, status, message or f"could not connect to {url}: {reason}", {"url": url})
        self.url = url


class APITimeoutError(APIConnectionError):
    """No answer within the time limit (`api:sdk:timeout`), after the retries."""

    def __init__(self, url: str, timeout: float) -> None:
        super().__init__(url, "timeout", "api:sdk:timeout", 504, f"no answer from {url} within {timeout:g} s")


class InvalidArgumentError(MaitentoError, ValueError):
    """A name or id is empty, `.` or `..` (`api:sdk:invalid-argument`); nothing was sent."""

    def __init__(self, value: str) -> None:
        super().__init__(
            "api:sdk:invalid-argument", 400, f"path parameter {value!r} is not a valid path segment", {"value": value}
        )


_BY_STATUS: dict[int, type[APIStatusError]] = {
    400: BadRequestError,
    401: AuthenticationError,
    403: PermissionDeniedError,
    404: NotFoundError,
    409: ConflictError,
    412: PreconditionFailedError,
    422: UnprocessableEntityError,
    429: RateLimitError,
}


def error_class(status: int) -> type[APIStatusError]:
    """The class of an error answer with `status`."""
    if status >= 500:
        return InternalServerError
    return _BY_STATUS.get(status, APIStatusError)


def error_from_body(status: int, body: Any, method: str, url: str, response: httpx.Response | None) -> APIStatusError:
    """The error of an answer: the server's `{error, code, ...}`, or `api:sdk:unexpected-response` without one."""
    cls = error_class(status)
    if isinstance(body, dict) and isinstance(body.get("error"), str) and isinstance(body.get("code"), str):
        details = {k: v for k, v in body.items() if k not in ("error", "code")}
        return cls(body["code"], status, body["error"], details, response)
    message = f"{method} {url} answered {status} without a Maitento error body"
    return cls("api:sdk:unexpected-response", status, message, {} if body is None else {"raw": body}, response)


def error_from_response(response: httpx.Response) -> APIStatusError:
    """The error of an httpx answer whose body was read."""
    body: Any
    try:
        body = response.json() if response.content else None
    except ValueError:
        body = response.text
    return error_from_body(response.status_code, body, response.request.method, str(response.request.url), response)
