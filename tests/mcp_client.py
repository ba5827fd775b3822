#!/usr/bin/env python3
"""Drives `memorix mcp` with the official MCP Python SDK (`mcp` from PyPI, pinned in .ci/run):
builds a copy of examples/httpx-service in a temp dir, lists the tools, runs a search and a
read, checks the versions in the answers, and sends malformed requests, which must get
JSON-RPC errors while the server goes on answering.

Usage: python3 tests/mcp_client.py [PATH/TO/memorix]   (default: target/debug/memorix)
"""

import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPError

ROOT = Path(__file__).resolve().parent.parent
PINNED = "0.23.3"


def check(cond, what):
    if not cond:
        raise AssertionError(what)


def built_example(memorix, tmp):
    project = Path(tmp) / "project"
    shutil.copytree(ROOT / "examples" / "httpx-service", project)
    env = dict(os.environ, MEMORIX_STORE=str(Path(tmp) / "store"), NO_COLOR="1")
    subprocess.run([memorix, "build"], cwd=project, env=env, check=True, capture_output=True)
    return project, env


async def with_sdk(memorix, project, env):
    params = StdioServerParameters(command=memorix, args=["mcp"], cwd=str(project), env=env)
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            tools = sorted(t.name for t in (await session.list_tools()).tools)
            check(tools == ["explain", "libraries", "read", "search"], f"tools: {tools}")

            found = await session.call_tool("search", {"query": "proxies", "lib": "httpx"})
            check(not found.is_error, f"search failed: {found.content}")
            hits = found.structured_content["hits"]
            check(hits and all(h["version"] == PINNED for h in hits), f"search versions: {hits}")
            check(hits[0]["path"] == "libs/httpx/proxies.md", f"best answer: {hits[0]}")

            lines = await session.call_tool("read", {"path": hits[0]["path"], "from": 1, "to": 3})
            got = lines.structured_content
            check(got["version"] == PINNED, f"read version: {got}")
            check(got["text"].startswith("# Proxies (httpx 0.23)"), f"read text: {got['text']!r}")
            check(got["provenance"]["blob"] == hits[0]["blob"], "read and search name the same blob")

            libs = (await session.call_tool("libraries", {})).structured_content["libraries"]
            httpx = [lib for lib in libs if lib["library"] == "httpx"]
            check(httpx and httpx[0]["version"] == PINNED, f"libraries: {libs}")
            check(httpx[0]["pinned_at"] == "requirements.txt:3", f"pin line: {httpx[0]}")

            try:
                await session.call_tool("no-such-tool", {})
                check(False, "an unknown tool answered")
            except MCPError as e:
                check(e.error.code == -32602, f"unknown tool: {e.error}")

            # The server is still there.
            again = await session.call_tool("search", {"query": "timeout"})
            check(not again.is_error and again.structured_content["hits"], "search after an error")


def raw_malformed(memorix, project, env):
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "mcp_client.py", "version": "1"}}}
    lines = [json.dumps(init), '{"jsonrpc":"2.0","method":"notifications/initialized"}',
             "{not json", '{"jsonrpc":"2.0","id":2,"method":17}',
             '{"jsonrpc":"2.0","id":3,"method":"tools/list"}']
    out = subprocess.run([memorix, "mcp"], cwd=project, env=env, input="\n".join(lines) + "\n",
                         capture_output=True, text=True, timeout=60)
    check(out.returncode == 0 and "panicked" not in out.stderr, f"exit {out.returncode}: {out.stderr}")
    answers = [json.loads(line) for line in out.stdout.splitlines()]
    codes = [a.get("error", {}).get("code") for a in answers]
    check(codes == [None, -32700, -32600, None], f"answers: {answers}")
    check(answers[2]["id"] == 2 and len(answers[3]["result"]["tools"]) == 4, f"answers: {answers}")


def main():
    memorix = str(Path(sys.argv[1] if len(sys.argv) > 1 else ROOT / "target" / "debug" / "memorix").resolve())
    with tempfile.TemporaryDirectory() as tmp:
        project, env = built_example(memorix, tmp)
        asyncio.run(with_sdk(memorix, project, env))
        raw_malformed(memorix, project, env)
    print("mcp client: 2 passed, 0 failed")


if __name__ == "__main__":
    main()
