"""A test MCP server written with the official Python SDK (`mcp`): refund
reviews, for the tests of tools from real MCP servers (server/tests/mcp.rs).

- review_refund (read-only): {"decision": "approved" | "rejected", ...} as
  structured content, what the seed's routing example reads at
  $.tools.<name>.outputs.latest.
- issue_refund (not read-only, its result JSON text only): writes a line to $REFUNDS_LOG for each call
  before it answers, after $REFUNDS_DELAY seconds; a test counts the lines
  to see a call was never made twice.
- fail: always fails (the SDK answers isError).
"""

import asyncio
import os
from typing import TypedDict

from mcp.server import MCPServer
from mcp.types import ToolAnnotations

server = MCPServer("refunds")

LIMIT = 100.0


class Review(TypedDict):
    decision: str
    amount: float
    limit: float
    reason: str


# A typed result: the SDK gives it as structuredContent, with its schema.
@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def review_refund(amount: float, reason: str) -> Review:
    """Review a refund request against the policy: approved up to 100."""
    decision = "approved" if amount <= LIMIT else "rejected"
    return {"decision": decision, "amount": amount, "limit": LIMIT, "reason": reason}


@server.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=True))
async def issue_refund(amount: float, account: str) -> dict:
    """Issue a refund to an account. It cannot be undone."""
    log = os.environ.get("REFUNDS_LOG")
    if log:
        with open(log, "a", encoding="utf-8") as kept:
            kept.write(f"{account} {amount}\n")
    await asyncio.sleep(float(os.environ.get("REFUNDS_DELAY", "0")))
    return {"issued": True, "amount": amount, "account": account}


@server.tool()
def fail(message: str) -> str:
    """Always fails, with the message given."""
    raise ValueError(message)


if __name__ == "__main__":
    server.run()
