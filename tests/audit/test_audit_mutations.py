"""Property: every single mutation of a valid chain is detected, and valid chains stay valid.

The fast verifier (tail checks inside the anchored range) must also give exactly the verdict —
reason, first bad index, count and head — of a full parse of every line.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_harness_audit.audit import AuditChain, RecordDraft, verify_chain

_sessions = itertools.count()

drafts = st.builds(
    RecordDraft,
    tool=st.sampled_from(["Bash", "Read", "Write", "mcp__git__git_status", "WebFetch"]),
    category=st.sampled_from(["command", "file_read", "file_write", "mcp", "network"]),
    target=st.none() | st.text(max_size=90),
    params=st.dictionaries(st.text(max_size=8), st.text(max_size=20), max_size=3),
    constraints=st.lists(
        st.sampled_from(["policy:allow", "policy:deny", "rule:x"]), max_size=2
    ).map(tuple),
    status=st.sampled_from(["success", "error", "blocked"]),
    output=st.none() | st.text(max_size=30),
    error_message=st.none() | st.text(max_size=20),
    extra=st.none() | st.just({"alerts": ["memory_write"]}),
)

MUTATIONS = ("edit", "insert", "delete", "swap", "duplicate", "truncate")


def _build(storage: Path, batch: list[RecordDraft]) -> tuple[str, Path]:
    session = f"m{next(_sessions)}"
    with AuditChain(storage, session) as chain:
        for draft in batch:
            chain.append(draft)
    return session, chain.path


def _verdict(report):
    return (report.valid, report.reason, report.first_bad_index, report.record_count, report.head)


def _forged_line(lines: list[bytes], position: int) -> bytes:
    """A well-formed record correctly linked to the line before ``position``."""
    record = json.loads(lines[min(position, len(lines) - 1)])
    record["recordId"] = "audit:f0f0f0f0"
    record["provenance"]["actionIndex"] = position
    record["provenance"]["prevRecordHash"] = (
        hashlib.sha256(lines[position - 1]).hexdigest() if position else "genesis"
    )
    return json.dumps(record, separators=(",", ":"), ensure_ascii=False).encode()


def _mutate(data: bytes, kind: str, draw) -> bytes:
    lines = data.split(b"\n")[:-1]
    count = len(lines)
    # Byte positions are drawn as fractions: ids and timestamps make the length vary between
    # runs, and hypothesis needs the same draws to replay an example.
    if kind == "edit":
        position = int(draw(st.floats(0, 1, exclude_max=True)) * len(data))
        value = (data[position] + draw(st.integers(1, 255))) % 256
        return data[:position] + bytes([value]) + data[position + 1 :]
    if kind == "truncate":
        return data[: int(draw(st.floats(0, 1, exclude_max=True)) * len(data))]
    if kind == "insert":
        position = draw(st.integers(0, count))
        source = draw(st.sampled_from(["copy", "garbage", "forged"]))
        if source == "copy":
            line = lines[draw(st.integers(0, count - 1))]
        elif source == "garbage":
            line = draw(st.binary(max_size=40).filter(lambda b: b"\n" not in b))
        else:
            line = _forged_line(lines, position)
        lines.insert(position, line)
    elif kind == "delete":
        del lines[draw(st.integers(0, count - 1))]
    elif kind == "swap":
        first = draw(st.integers(0, count - 2))
        second = draw(st.integers(first + 1, count - 1))
        lines[first], lines[second] = lines[second], lines[first]
    else:  # duplicate
        position = draw(st.integers(0, count - 1))
        lines.insert(position + 1, lines[position])
    return b"".join(line + b"\n" for line in lines)


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(batch=st.lists(drafts, min_size=1, max_size=7), data=st.data())
@pytest.mark.slow
def test_every_single_mutation_is_detected_exactly(tmp_path, batch, data):
    session, path = _build(tmp_path, batch)
    original = path.read_bytes()
    kinds = [k for k in MUTATIONS if k != "swap" or len(batch) > 1]
    kind = data.draw(st.sampled_from(kinds), label="mutation")
    mutated = _mutate(original, kind, data.draw)
    if mutated == original:  # e.g. swapping two identical lines cannot happen, but be explicit
        return
    path.write_bytes(mutated)
    fast = verify_chain(tmp_path, session)
    full = verify_chain(tmp_path, session, full=True)
    assert not fast.valid, (kind, fast)
    assert _verdict(fast) == _verdict(full), (kind, fast.errors, full.errors)


@pytest.mark.slow
@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(batch=st.lists(drafts, max_size=10))
def test_valid_chains_are_never_reported_invalid(tmp_path, batch):
    session, _ = _build(tmp_path, batch)
    fast = verify_chain(tmp_path, session)
    full = verify_chain(tmp_path, session, full=True)
    assert fast.valid, fast.errors
    assert _verdict(fast) == _verdict(full)
    assert fast.record_count == len(batch)
