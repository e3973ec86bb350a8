"""The retry delays: the server's Retry-After when sane, else bounded exponential backoff with jitter."""

from __future__ import annotations

import httpx

from maitento._retry import MAX_BACKOFF, is_retryable_status, retry_delay


def test_retry_after_is_followed_when_sane() -> None:
    assert retry_delay(1, httpx.Headers({"retry-after": "3"})) == 3.0
    assert retry_delay(1, httpx.Headers({"retry-after-ms": "250", "retry-after": "9"})) == 0.25
    now = 1735689600.0  # 2025-01-01T00:00:00Z
    assert retry_delay(1, httpx.Headers({"retry-after": "Wed, 01 Jan 2025 00:00:07 GMT"}), now) == 7.0


def test_backoff_is_bounded_with_jitter_when_retry_after_is_absent_or_too_long() -> None:
    for headers in (None, httpx.Headers({"retry-after": "soon"}), httpx.Headers({"retry-after": "3600"})):
        first = retry_delay(1, headers)
        assert 0.375 <= first <= 0.5
    assert 1.5 <= retry_delay(3) <= 2.0
    assert all(retry_delay(n) <= MAX_BACKOFF for n in range(1, 30))


def test_only_timeouts_rate_limits_and_server_failures_are_retried() -> None:
    assert all(is_retryable_status(s) for s in (408, 429, 500, 502, 503, 504))
    assert not any(is_retryable_status(s) for s in (400, 401, 403, 404, 409, 413, 422))
