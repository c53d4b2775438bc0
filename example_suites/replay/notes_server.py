"""A small MCP server (the official SDK's MCPServer) with a tool, resources and a prompt.

The replay suite recorded a session with it once (``--harness-audit-record=new``); replaying
that cassette needs neither this file nor a process. Run as ``python notes_server.py``.
"""

from mcp.server.mcpserver import MCPServer

NOTES = {"standup": "Ship the release notes.", "retro": "Fewer meetings."}

server = MCPServer("notes", instructions="Read notes://index first; note ids are lower case.")


@server.tool()
def count_notes() -> int:
    """How many notes there are."""
    return len(NOTES)


@server.resource("notes://index")
def index() -> str:
    """Every note id, one per line."""
    return "\n".join(sorted(NOTES))


@server.resource("notes://{note}")
def note(note: str) -> str:
    """One note."""
    return NOTES.get(note, f"no note {note!r}")


@server.prompt()
def summarise(note: str) -> str:
    """Ask for a summary of one note."""
    return f"Summarise this note in five words: {NOTES.get(note, note)}"


if __name__ == "__main__":
    server.run()
