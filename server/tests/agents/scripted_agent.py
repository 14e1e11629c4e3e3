"""A scripted ACP agent on the official Python SDK (PyPI agent-client-protocol),
an implementation independent of Patchbay's Rust client, for the coding tests.

Turn 1 asks permission to write python.txt, writes it through the client and
replies; every later turn replies with what the session has seen so far, which
shows the turns share one session. Each turn reports 7 input tokens.
"""

import asyncio
import os

import acp
from acp.schema import (
    AgentCapabilities,
    Implementation,
    InitializeResponse,
    NewSessionResponse,
    PermissionOption,
    PromptResponse,
    ToolCallUpdate,
    Usage,
)


class ScriptedAgent:
    def __init__(self):
        self.conn = None
        self.sessions = {}

    def on_connect(self, conn):
        self.conn = conn

    async def initialize(self, protocol_version, client_capabilities=None, client_info=None, **kwargs):
        return InitializeResponse(
            protocol_version=acp.PROTOCOL_VERSION,
            agent_capabilities=AgentCapabilities(),
            agent_info=Implementation(name="scripted-python-agent", title="Scripted Python agent", version="1"),
        )

    async def new_session(self, cwd, mcp_servers=None, **kwargs):
        session_id = f"py-{len(self.sessions) + 1}"
        self.sessions[session_id] = {"cwd": cwd, "prompts": []}
        return NewSessionResponse(session_id=session_id)

    async def prompt(self, session_id, prompt, **kwargs):
        session = self.sessions[session_id]
        text = " ".join(getattr(block, "text", "") for block in prompt)
        session["prompts"].append(text)
        turn = len(session["prompts"])
        if turn == 1:
            path = os.path.join(session["cwd"], "python.txt")
            answer = await self.conn.request_permission(
                session_id=session_id,
                tool_call=ToolCallUpdate(tool_call_id="write-1", title="Write python.txt", kind="edit"),
                options=[
                    PermissionOption(option_id="yes", name="Allow", kind="allow_once"),
                    PermissionOption(option_id="no", name="Reject", kind="reject_once"),
                ],
            )
            allowed = getattr(answer.outcome, "option_id", None) == "yes"
            if allowed:
                await self.conn.write_text_file(session_id=session_id, path=path, content="written by the Python agent\n")
            reply = f"turn 1: {'wrote python.txt' if allowed else 'was not allowed to write'}"
        else:
            reply = f"turn {turn}: the session so far: " + " | ".join(session["prompts"])
        for piece in (reply[: len(reply) // 2], reply[len(reply) // 2 :]):
            await self.conn.session_update(session_id=session_id, update=acp.update_agent_message_text(piece))
        return PromptResponse(
            stop_reason="end_turn",
            usage=Usage(total_tokens=10, input_tokens=7, output_tokens=3),
        )

    async def cancel(self, session_id, **kwargs):
        return None


if __name__ == "__main__":
    asyncio.run(acp.run_agent(ScriptedAgent()))
