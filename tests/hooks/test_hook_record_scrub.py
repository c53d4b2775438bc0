"""The hook door's records hold no known secret of the project in clear, in any field: a tool
name or a parameter's key made of a secret is redacted like a parameter's value."""

from __future__ import annotations

from pathlib import Path

from hook_processes import hook
from host_support import Host

SECRET = "sk-test-9f8e7d6c5b4a39281706f5e4d3c2b1a0"


def test_a_secret_in_the_tool_name_and_a_key_is_not_in_the_chain(tmp_path: Path) -> None:
    host = Host(tmp_path)
    (host.project / ".env").write_text(f"API_KEY={SECRET}\n")
    host.start()
    call = host.pre()
    payload = {
        **call,
        "tool_name": f"mcp__notes__{SECRET}",
        "tool_input": {SECRET: "x", "note": "hello"},
        "tool_use_id": "toolu_secret",
    }
    code, _out, err = hook(host.storage, "pre", payload, env=host.env)
    assert code == 0, err
    chains = list(host.storage.rglob("*.jsonl"))
    assert chains
    text = b"".join(path.read_bytes() for path in chains)
    assert b"mcp__notes__" in text  # the call is recorded
    assert SECRET.encode() not in text
    assert SECRET[8:24].encode() not in text
