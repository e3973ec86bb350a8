# file: mcp_tools.py
"""Lists the tools Maitento serves over MCP and calls one, with the official MCP Python SDK (`pip install mcp`).

    MT_API_URL=http://127.0.0.1:8080 MT_API_KEY=mt_... python mcp_tools.py get-order '{"additionalInputs": {"path.orderId": "A-1001"}}'
"""

from __future__ import annotations

import asyncio
import json
import os
import sys

import httpx2
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client


async def main(tool: str, arguments: dict[str, object]) -> None:
    url = os.environ.get("MT_API_URL", "http://127.0.0.1:8080").rstrip("/") + "/mcp"
    headers = {"Authorization": f"Bearer {os.environ['MT_API_KEY']}"}
    # A call of a tool that needs approval waits up to MT_MCP_APPROVAL_WAIT (45 s): read for longer than that.
    async with httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=60)) as http:
        async with streamable_http_client(url, http_client=http) as (read, write):
            async with ClientSession(read, write, read_timeout_seconds=60) as session:
                await session.initialize()
                listed = await session.list_tools()
                print("tools:", ", ".join(sorted(t.name for t in listed.tools)))
                result = await session.call_tool(tool, arguments)
                # structured_content is set for a tool whose connector declares an object schema.response.
                if result.structured_content is not None:
                    print("structured:", json.dumps(result.structured_content, sort_keys=True))
                for block in result.content:
                    if block.type == "text":
                        print("error:" if result.is_error else "result:", block.text)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], json.loads(sys.argv[2]) if len(sys.argv) > 2 else {}))
