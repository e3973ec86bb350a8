"""When to retry and how long to wait: the server's Retry-After when sane, else bounded backoff with jitter."""

from __future__ import annotations

import email.utils
import random
import time

import httpx

BASE_DELAY = 0.5
MAX_BACKOFF = 8.0
# A Retry-After longer than this is not waited for; the SDK's own backoff is used instead.
MAX_RETRY_AFTER = 60.0


def is_retryable_status(status: int) -> bool:
    """A timeout, rate limiting or a server failure is worth another try."""
    return status in (408, 429) or status >= 500


def retry_delay(retry: int, headers: httpx.Headers | None = None, now: float | None = None) -> float:
    """Seconds before retry number `retry` (1-based)."""
    server = _server_delay(headers, time.time() if now is None else now) if headers is not None else None
    if server is not None and 0 <= server <= MAX_RETRY_AFTER:
        return float(server)
    backoff = min(BASE_DELAY * 2.0 ** (retry - 1), MAX_BACKOFF)
    # Up to 25% less, so many clients retrying at once spread out.
    return backoff * (1 - random.random() * 0.25)


def _server_delay(headers: httpx.Headers, now: float) -> float | None:
    ms = headers.get("retry-after-ms")
    if ms:
        try:
            return float(ms) / 1000
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value or not value.strip():
        return None
    try:
        return float(value)
    except ValueError:
        pass
    try:
        date = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, date.timestamp() - now)
