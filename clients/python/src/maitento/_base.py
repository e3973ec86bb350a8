"""What the sync and async clients share: settings from arguments or the environment, paths, headers."""

from __future__ import annotations

import os
import uuid
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote, urlencode

import httpx

from ._errors import InvalidArgumentError
from ._version import __version__

DEFAULT_TIMEOUT = 60.0
DEFAULT_MAX_RETRIES = 2


def resolve_settings(api_url: str | None, api_key: str | None) -> tuple[str, str | None]:
    """The server URL and key: the arguments, else `MT_API_URL` / `MT_API_KEY`."""
    url = api_url or os.environ.get("MT_API_URL")
    if not url:
        raise ValueError("no server URL: pass api_url=... or set MT_API_URL")
    parsed = httpx.URL(url)
    if parsed.scheme not in ("http", "https") or not parsed.host:
        raise ValueError(f"api_url {url!r} must be an http or https URL")
    return url.rstrip("/"), api_key if api_key is not None else os.environ.get("MT_API_KEY")


def default_headers(api_key: str | None) -> dict[str, str]:
    headers = {"accept": "application/json", "user-agent": f"maitento-python/{__version__}"}
    if api_key:
        headers["authorization"] = f"Bearer {api_key}"
    return headers


def segment(value: str | int) -> str:
    """One path segment, percent-encoded; empty, `.` and `..` are refused (URL parsing would change the route)."""
    text = str(value)
    if text in ("", ".", ".."):
        raise InvalidArgumentError(text)
    return quote(text, safe="")


def path(template: str, *values: str | int) -> str:
    """`path("/v1/runs/{}/cancel", run_id)` with every value encoded as one segment."""
    return template.format(*(segment(v) for v in values))


def with_query(route: str, params: Mapping[str, Any]) -> str:
    """The route with the parameters that are not None as its query."""
    query = {k: (str(v).lower() if isinstance(v, bool) else str(v)) for k, v in params.items() if v is not None}
    return f"{route}?{urlencode(query)}" if query else route


def new_idempotency_key() -> str:
    return f"mt-{uuid.uuid4()}"


def without_none(values: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in values.items() if v is not None}
