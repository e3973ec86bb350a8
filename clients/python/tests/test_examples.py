"""The examples and the tutorials' Python code run as a reader would run them."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from .conftest import Stack

HERE = Path(__file__).resolve().parents[1]
ROOT = HERE.parents[1]


def _python_blocks(markdown: str) -> dict[str, str]:
    """The ```python blocks of a page that name their file on the first line (`# file: NAME`)."""
    found = {}
    for match in re.finditer(r"^```python\n(# file: (\S+)\n[\s\S]*?)^```\s*$", markdown, re.M):
        found[match.group(2)] = match.group(1)
    return found


def test_the_tutorials_show_the_python_files_unchanged() -> None:
    t2 = _python_blocks((ROOT / "docs/tutorials/02-call-your-code.md").read_text())
    assert t2["orders_api.py"] == (ROOT / "docs/tutorials/code/orders_api.py").read_text()
    t3 = _python_blocks((ROOT / "docs/tutorials/03-approvals.md").read_text())
    assert t3["approve_refunds.py"] == (HERE / "examples/approve_refunds.py").read_text()


def test_the_approval_example_rejects_then_approves_the_redraft(stack: Stack) -> None:
    since = len(stack.upstream.requests)
    env = {**os.environ, "MT_API_URL": stack.url, "MT_API_KEY": stack.key}
    done = subprocess.run(
        [sys.executable, str(HERE / "examples/approve_refunds.py")], env=env, capture_output=True, text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "rejecting refund-order of 49.9",
        "approving refund-order of 15",
        "Completed Refunded 15.00 EUR after the redraft.",
    ]
    assert [r["amount"] for r in stack.upstream.refunds(since)] == [15]


def _call(origin: str, method: str, path: str, key: str, body: Any = None) -> tuple[int, Any]:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(origin + path, data=data, method=method, headers={"x-api-key": key})
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, json.load(answer)
    except urllib.error.HTTPError as error:
        return error.code, json.load(error)


def test_the_python_orders_api_answers_as_the_typescript_one() -> None:
    env = {**os.environ, "PORT": "0", "TEAPOT_SHOP_KEY": "teapot-test", "CUP_SHOP_KEY": "cup-test"}
    child = subprocess.Popen(
        [sys.executable, str(ROOT / "docs/tutorials/code/orders_api.py")], env=env, stdout=subprocess.PIPE, text=True
    )
    try:
        assert child.stdout is not None
        line = child.stdout.readline()
        origin = re.search(r"listening on (http://\S+)", line)
        assert origin, line
        url = origin.group(1)
        assert _call(url, "GET", "/orders/A-1001", "nope") == (401, {"error": "unknown API key"})
        status, order = _call(url, "GET", "/orders/A-1001", "teapot-test")
        assert status == 200 and order["shop"] == "Teapot Shop" and order["paid"] == 49.9
        assert _call(url, "GET", "/orders/A-1001", "cup-test") == (404, {"error": "no such order in Cup Shop"})
        too_much = _call(url, "POST", "/orders/A-1001/refund", "teapot-test", {"amount": 60, "reason": "x"})
        assert too_much[0] == 422
        status, refund = _call(url, "POST", "/orders/A-1001/refund", "teapot-test", {"amount": 15, "reason": "lid"})
        assert (status, refund) == (200, {"refundId": "R-A-1001-15", "orderId": "A-1001", "amount": 15,
                                          "status": "refunded"})
        assert _call(url, "GET", "/orders/A-1001", "teapot-test")[1]["refunded"] == 15
        assert child.stdout.readline().strip() == "refunded 15 EUR of A-1001: lid"
    finally:
        child.terminate()
        child.wait(10)
