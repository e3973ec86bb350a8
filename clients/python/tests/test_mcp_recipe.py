"""docs/mcp.md's MCP Python SDK recipe (examples/mcp_tools.py), run as a reader would run it against `mt serve`."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from .conftest import Stack

HERE = Path(__file__).resolve().parents[1]
ROOT = HERE.parents[1]


def test_docs_show_the_mcp_recipe_unchanged() -> None:
    page = (ROOT / "docs/mcp.md").read_text()
    block = re.search(r"^```python\n(# file: mcp_tools\.py\n[\s\S]*?)^```\s*$", page, re.M)
    assert block is not None
    assert block.group(1) == (HERE / "examples/mcp_tools.py").read_text()


def test_the_mcp_python_sdk_lists_and_calls_a_tool(stack: Stack) -> None:
    since = len(stack.upstream.requests)
    env = {**os.environ, "MT_API_URL": stack.url, "MT_API_KEY": stack.key}
    arguments = json.dumps({"additionalInputs": {"path.orderId": "A-1001"}})
    done = subprocess.run(
        [sys.executable, str(HERE / "examples/mcp_tools.py"), "get-order", arguments],
        env=env, capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert "get-order" in lines[0].removeprefix("tools: ").split(", ")
    assert "refund-order" in lines[0]
    assert lines[-1].startswith("result: ")
    assert json.loads(lines[-1].removeprefix("result: "))["id"] == "A-1001"
    # The call went through the gateway with the tool's secret, and the secret is not in the output.
    assert stack.upstream.requests[since:][-1].headers.get("x-api-key") == stack.upstream.shop_key
    assert stack.upstream.shop_key not in done.stdout
