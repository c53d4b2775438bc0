"""Every way the tamper suite alters a stored chain, each a function of the file's bytes.

A mutation gets the chain's bytes and a hypothesis ``draw`` and returns the altered bytes; the
session's anchor is never touched (an attacker who rewrites the anchor as well is outside what a
hash chain without a secret can catch).

Byte positions are drawn as fractions: record ids and timestamps make the length vary between
runs, and hypothesis must be able to replay an example from the same draws.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from typing import Any

from hypothesis import strategies as st

Draw = Callable[[st.SearchStrategy[Any]], Any]
Mutation = Callable[[bytes, Draw], bytes]


def split_lines(data: bytes) -> list[bytes]:
    """The complete lines of a chain file, without their newlines."""
    return data.split(b"\n")[:-1]


def join_lines(lines: list[bytes]) -> bytes:
    """A chain file of ``lines``."""
    return b"".join(line + b"\n" for line in lines)


def _fraction(draw: Draw) -> float:
    value: float = draw(st.floats(0, 1, exclude_max=True))
    return value


def _encode(record: dict[str, Any]) -> bytes:
    return json.dumps(record, separators=(",", ":"), ensure_ascii=False).encode()


def _sha(line: bytes) -> str:
    return hashlib.sha256(line).hexdigest()


def relink(lines: list[bytes], start: int) -> list[bytes]:
    """Re-number and re-hash every record from ``start`` on, so every link holds again.

    This is the forger's best move without the anchor: the chain is internally consistent.
    """
    out = list(lines[:start])
    for position in range(start, len(lines)):
        record = json.loads(lines[position])
        record["provenance"]["actionIndex"] = position
        record["provenance"]["prevRecordHash"] = _sha(out[-1]) if out else "genesis"
        out.append(_encode(record))
    return out


def _forged_line(lines: list[bytes], position: int) -> bytes:
    """A well-formed record correctly linked to the line before ``position``."""
    record = json.loads(lines[min(position, len(lines) - 1)])
    record["recordId"] = "audit:f0f0f0f0"
    record["result"]["status"] = "success"
    record["provenance"]["actionIndex"] = position
    record["provenance"]["prevRecordHash"] = _sha(lines[position - 1]) if position else "genesis"
    return _encode(record)


def edit_byte(data: bytes, draw: Draw) -> bytes:
    """Change one byte anywhere (a record's text or a newline)."""
    position = int(_fraction(draw) * len(data))
    value = (data[position] + draw(st.integers(1, 255))) % 256
    return data[:position] + bytes([value]) + data[position + 1 :]


def edit_last_record(data: bytes, draw: Draw) -> bytes:
    """Change one byte of the last record — the one no later link protects."""
    start = data.rfind(b"\n", 0, len(data) - 1) + 1
    position = start + int(_fraction(draw) * (len(data) - 1 - start))
    value = (data[position] + draw(st.integers(1, 255))) % 256
    return data[:position] + bytes([value]) + data[position + 1 :]


def insert_line(data: bytes, draw: Draw) -> bytes:
    """Insert a copied, a garbage or a correctly linked forged line anywhere (the end too)."""
    lines = split_lines(data)
    position = draw(st.integers(0, len(lines)))
    source = draw(st.sampled_from(["copy", "garbage", "forged"]))
    if source == "copy":
        line = lines[draw(st.integers(0, len(lines) - 1))]
    elif source == "garbage":
        line = draw(st.binary(max_size=40).filter(lambda b: b"\n" not in b))
    else:
        line = _forged_line(lines, position)
    lines.insert(position, line)
    return join_lines(lines)


def append_forged(data: bytes, draw: Draw) -> bytes:
    """Append one well-formed record linked to the head — what a crashed append looks like."""
    lines = split_lines(data)
    return join_lines([*lines, _forged_line(lines, len(lines))])


def delete_line(data: bytes, draw: Draw) -> bytes:
    """Remove one record (the last one included)."""
    lines = split_lines(data)
    del lines[draw(st.integers(0, len(lines) - 1))]
    return join_lines(lines)


def swap_lines(data: bytes, draw: Draw) -> bytes:
    """Exchange two records (needs two)."""
    lines = split_lines(data)
    first = draw(st.integers(0, len(lines) - 2))
    second = draw(st.integers(first + 1, len(lines) - 1))
    lines[first], lines[second] = lines[second], lines[first]
    return join_lines(lines)


def duplicate_line(data: bytes, draw: Draw) -> bytes:
    """Repeat one record, anywhere after itself."""
    lines = split_lines(data)
    source = draw(st.integers(0, len(lines) - 1))
    lines.insert(draw(st.integers(source + 1, len(lines))), lines[source])
    return join_lines(lines)


def truncate(data: bytes, draw: Draw) -> bytes:
    """Cut the file at any byte (mid-line or at a line boundary, down to empty)."""
    return data[: int(_fraction(draw) * len(data))]


def rehash_edit(data: bytes, draw: Draw) -> bytes:
    """Rewrite one record (turn a blocked call into a success, change its target) and re-hash
    every later link — only the anchor can tell."""
    lines = split_lines(data)
    position = draw(st.integers(0, len(lines) - 1))
    record = json.loads(lines[position])
    if record["result"]["status"] == "blocked":
        record["result"]["status"] = "success"
    else:
        record["target"] = f"{record.get('target') or ''}-forged"
    lines[position] = _encode(record)
    return join_lines(relink(lines, position))


def rehash_delete(data: bytes, draw: Draw) -> bytes:
    """Remove one record and re-number and re-hash everything after it."""
    lines = split_lines(data)
    position = draw(st.integers(0, len(lines) - 1))
    del lines[position]
    return join_lines(relink(lines, position))


def rehash_insert(data: bytes, draw: Draw) -> bytes:
    """Insert a forged record and re-number and re-hash everything after it."""
    lines = split_lines(data)
    position = draw(st.integers(0, len(lines)))
    lines.insert(position, _forged_line(lines, position))
    return join_lines(relink(lines, position))


MUTATIONS: dict[str, Mutation] = {
    "edit": edit_byte,
    "edit-last": edit_last_record,
    "insert": insert_line,
    "append-forged": append_forged,
    "delete": delete_line,
    "swap": swap_lines,
    "duplicate": duplicate_line,
    "truncate": truncate,
    "rehash-edit": rehash_edit,
    "rehash-delete": rehash_delete,
    "rehash-insert": rehash_insert,
}
"""Every mutation class by name."""

MIN_RECORDS = {"swap": 2}
"""Mutation classes that need more than one record."""
