"""The unmodified official MCP SDK (`mcp`, Streamable HTTP client) against both Fiscus MCP endpoints.

Usage: mcp_client.py BASE_URL BEARER_KEY CLIENT_ID PRIVATE_KEY_HEX

1. `/api/mcp` with a bearer key: initialize, list the tools, call one.
2. `/api/v2/agent-execution/mcp` as a signed execution client: every HTTP request the SDK makes is signed
   (RFC 9421, Ed25519, with `http-message-signatures`) by an `httpx` auth hook handed to the SDK; list the
   grant's tools, call one, and see a tool outside the grant refused as a tool error.
Prints one line per step; exits non-zero on the first failure.
"""
import asyncio
import json
import sys

from mcp import ClientSession
from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client
from mcp.shared.exceptions import MCPError
import httpx2
from signing import Keys, sign_every_request


async def session_steps(url, http, tool, arguments, refused_tool=None):
    async with streamable_http_client(url, http_client=http) as streams:
        async with ClientSession(streams[0], streams[1]) as session:
            init = await session.initialize()
            print(f"{url}: initialized, protocol {init.protocol_version}, server {init.server_info.name}")
            tools = (await session.list_tools()).tools
            print(f"{len(tools)} tools, e.g. {sorted(t.name for t in tools)[:3]}")
            assert any(t.name == tool for t in tools), tool
            result = await session.call_tool(tool, arguments)
            assert not result.is_error, result
            print(f"{tool}: {json.dumps(result.structured_content)[:100]}")
            if refused_tool:
                try:
                    refused = await session.call_tool(refused_tool, {})
                    assert refused.is_error, refused
                    print(f"{refused_tool}: refused as a tool error")
                except MCPError as e:
                    assert "not offered" in str(e), e
                    print(f"{refused_tool}: refused ({e})")


async def main() -> int:
    base, key, client_id, key_hex = sys.argv[1:5]
    async with create_mcp_http_client(headers={"Authorization": f"Bearer {key}"}) as http:
        await session_steps(f"{base}/api/mcp", http, "get_workspace", {})
    keys = Keys.from_hex(client_id, key_hex)
    async with create_mcp_http_client(auth=sign_every_request(httpx2.Auth, keys)) as http:
        await session_steps(
            f"{base}/api/v2/agent-execution/mcp", http, "get_agent_execution_capabilities", {}, refused_tool="get_actions"
        )
    print("mcp sdk: ok")
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
