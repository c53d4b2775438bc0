"""``AuditChain.append`` writes exactly the bytes it always wrote.

The record ids, the clock and the machine behind the Soft LCT are pinned, a fixed set of drafts
(every optional part present and absent, every audit level, the encoder fallbacks) is appended,
and the chain file must equal ``append_golden.jsonl`` byte for byte; each line must also be what
the public path (``RecordBuilder.prepare`` + ``complete_record``) gives, the returned dict what
the line parses to, and the anchor file the two slots ``encode_slot`` gives.

Regenerate the expectation only for an intended format change:
``python tests/audit/test_append_golden.py --write``.
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from types import MappingProxyType
from typing import Any

import pytest

from pytest_harness_audit.audit import AuditChain, RecordDraft, lct, records, verify_chain
from pytest_harness_audit.audit.anchor import SLOT_SIZE, encode_slot
from pytest_harness_audit.audit.records import RecordBuilder, complete_record
from pytest_harness_audit.audit.storage import StorageLayout

GOLDEN = Path(__file__).with_name("append_golden.jsonl")
LEVELS = ("standard", "minimal", "verbose")


def golden_drafts() -> list[RecordDraft]:
    """Drafts covering every branch of record building."""
    long_target = "cat " + "very/long/path/" * 8 + "file.txt"
    return [
        RecordDraft(
            tool="Bash",
            category="command",
            target="git status",
            targets=("git status",),
            params={"command": "git status", "timeout": 120},
            constraints=("policy:allow", "rule:default"),
            output=" M a.py\n",
            duration_ms=41.7,
        ),
        RecordDraft(
            tool="Read", category="file_read", target="/w/a.py", params={"file_path": "/w/a.py"}
        ),
        RecordDraft(
            tool="WebFetch",
            category="network",
            target="https://example.org/x",
            targets=("https://example.org/x",),
            params={"url": "https://example.org/x", "prompt": "summarise"},
            constraints=("policy:warn", "rule:warn-network"),
            status="error",
            error_message="connection timed out",
            duration_ms=3000.0,
            agent_id="agent-2",
        ),
        RecordDraft(
            tool="Read",
            category="file_read",
            target="/w/.env",
            targets=("/w/.env",),
            params={"file_path": "/w/.env"},
            constraints=("policy:deny", "rule:deny-secret-files"),
            status="blocked",
            error_message="[policy] Secret file access denied",
            approval_required=True,
        ),
        RecordDraft(
            tool="Bash",
            category="command",
            target=long_target,
            targets=(long_target, "other/file", "x" * 100),
            params={"z": [1, 2.5, None, True], "a": {"y": 1e-7, "b": 0.00001, "c": 1e16}},
            output={"lines": 120, "truncated": False, "b": [1, 2]},
            duration_ms=7,
        ),
        RecordDraft(tool="Glob", category="search", params={}, output="", duration_ms=0.0),
        RecordDraft(
            tool="Édit",
            category="file_write",
            target="/w/naïve—ü.py",
            targets=("/w/naïve—ü.py", "/w/b.py"),
            params={"file_path": "/w/naïve—ü.py", "new": 'é\u2028\x00\t"\\'},
            output=["ok", 1, 2.0],
            error_message="ünïcode",
        ),
        RecordDraft(
            tool="immune",
            category="immune",
            kind="escalation",
            constraints=("immune:quarantine",),
            params={"score": 10},
            extra={
                "zeta": 1,
                "alerts": ["a", {"k": 2, "b": 1}],
                "decision": {"b": [1, 2], "a": None},
                "door": "hook",
                "ratio": 0.5,
                "flag": False,
            },
        ),
        RecordDraft(
            tool="Bash",
            category="command",
            target="echo big",
            params={"n": 2**70, "m": -(2**64)},
            output=2**65,
        ),
        RecordDraft(
            tool="Bash",
            category="command",
            target="echo \ud800 lone",
            params={"command": "echo \ud800 lone"},
            output="x\udfff",
        ),
        RecordDraft(tool="Note", category="note", kind="note", target="", targets=("",)),
        RecordDraft(tool="Read", category="file_read", target="a", targets=("b",), output=0),
        RecordDraft(tool="Grep", category="search", targets=("src", "tests")),
        RecordDraft(
            tool="Grep",
            category="search",
            target="src",
            targets=["src", "lib"],  # type: ignore[arg-type]
            constraints=["policy:allow"],  # type: ignore[arg-type]
            params=MappingProxyType({"b": 1, "a": 2}),
            duration_ms=12,
            approval_required=1,  # type: ignore[arg-type]
            kind="custom_kind",
            extra={},
        ),
        RecordDraft(tool="Task", category="agent", agent_id="sub-agent", output=[], extra=None),
    ]


def _pins(patch: pytest.MonkeyPatch) -> None:
    """Pin the clock and the machine behind the Soft LCT."""
    stamps = iter(range(1_000_000))
    patch.setattr(
        records, "_next_stamp", lambda: f"2026-01-02T03:04:{next(stamps) % 60:02d}.{7:03d}Z"
    )
    patch.setattr(lct.socket, "gethostname", lambda: "host")
    patch.setattr(lct, "current_username", lambda: "user")
    patch.setattr(lct, "utc_timestamp", lambda: "2026-01-02T03:04:05.000Z")


def _sessions() -> Iterator[tuple[str, str, str | None]]:
    for level in LEVELS:
        for agent in (None, "agent-1"):
            yield f"golden-{level}-{agent or 'none'}", level, agent


def append_all(storage: Path) -> tuple[bytes, list[tuple[str, list[dict[str, Any]]]]]:
    """Append every golden draft to one session per level and agent; all the lines, in order."""
    out = bytearray()
    returned = []
    for session, level, agent in _sessions():
        with AuditChain(storage, session, audit_level=level, agent_id=agent) as chain:
            got = [chain.append(draft) for draft in golden_drafts()]
        out += chain.path.read_bytes()
        returned.append((session, got))
    return bytes(out), returned


def test_append_writes_the_frozen_bytes(tmp_path, monkeypatch):
    _pins(monkeypatch)
    written, _ = append_all(tmp_path / "store")
    expected = GOLDEN.read_bytes()
    for index, (got, want) in enumerate(
        zip(written.split(b"\n"), expected.split(b"\n"), strict=True)
    ):
        assert got == want, f"line {index} differs"
    for session, _, _ in _sessions():
        report = verify_chain(tmp_path / "store", session, full=True)
        assert report.valid and report.record_count == len(golden_drafts()), report


def test_append_writes_what_the_public_path_builds(tmp_path, monkeypatch):
    _pins(monkeypatch)
    storage = tmp_path / "store"
    _, returned = append_all(storage)
    layout = StorageLayout.at(storage)
    for (session, level, agent), (_, got) in zip(_sessions(), returned, strict=True):
        paths = layout.paths(session)
        lines = paths.chain.read_bytes().split(b"\n")[:-1]
        assert len(lines) == len(got) == len(golden_drafts())
        lct_token = got[0]["role"]["lct"]
        builder = RecordBuilder(session, lct_token, level, agent)
        prev_r6, prev_hash, size = None, "genesis", 0
        slots = [b""]
        for index, (draft, record, line) in enumerate(
            zip(golden_drafts(), got, lines, strict=True)
        ):
            again, role = builder.prepare(draft, timestamp=record["timestamp"])
            assert complete_record(again, role, index, prev_r6, prev_hash) == line
            assert json.loads(line) == record == again
            prev_r6, prev_hash = record["r6RequestId"], hashlib.sha256(line).hexdigest()
            size += len(line) + 1
            slots.append(encode_slot(index + 1, size, prev_hash, prev_r6))
        # Both slots: the state after the last append and the one before it.
        count = len(lines)
        anchor = paths.anchor.read_bytes()
        assert anchor[(count & 1) * SLOT_SIZE :][:SLOT_SIZE] == slots[count]
        assert anchor[(~count & 1) * SLOT_SIZE :][:SLOT_SIZE] == slots[count - 1]


def test_the_pins_take_effect(tmp_path, monkeypatch):
    # Without the pins, stamps differ from the frozen ones: the comparison means something.
    written, _ = append_all(tmp_path / "store")
    assert written != GOLDEN.read_bytes()
    assert written.count(b"\n") == GOLDEN.read_bytes().count(b"\n")


@pytest.mark.parametrize(
    ("count", "size", "head", "last"),
    [
        (0, 0, "genesis", None),
        (1, 953, "ab" * 32, "r6:0123abcd"),
        (2**40, 2**50, "f" * 64, "r6:ffffffff"),
        (7, 70, "e" * 64, "r6:short"),
        (8, 80, "d" * 64, "r6:" + "x" * 30),
    ],
)
def test_the_writers_quick_slot_is_the_plain_slot(count, size, head, last):
    from pytest_harness_audit.audit.anchor import decode_slot, writer_slot

    slot = writer_slot(count, size, head, last)
    assert slot == encode_slot(count, size, head, last) and len(slot) == SLOT_SIZE
    assert decode_slot(slot).count == count


if __name__ == "__main__" and sys.argv[1:] == ["--write"]:
    import tempfile

    with pytest.MonkeyPatch.context() as patch, tempfile.TemporaryDirectory() as tmp:
        _pins(patch)
        GOLDEN.write_bytes(append_all(Path(tmp) / "store")[0])
    print(f"wrote {GOLDEN.name}")
