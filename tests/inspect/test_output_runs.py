"""What the model reads is read for a long enough part of a known value (a *run*), and across
the outputs of a session for the pieces of one, as an outgoing payload is (:mod:`._runs`,
:mod:`._fragments`): a key handed over in halves, one a call, is redacted and judged."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest

from pytest_harness_audit.inspect import SECRET_EXPOSURE, Inspector, SessionSpans
from pytest_harness_audit.inspect.spans import ReadMemory

KEY = "sk-test-4f9a1c2e7b3d8a6f0e5c9b2a1d7e3f8c"
OTHER = "sk-test-0b1e2d3c4f5a6978a8b9cadbecfd0e1f"


@pytest.fixture
def inspector(tmp_path: Path) -> Inspector:
    (tmp_path / ".env").write_text(f"API_KEY={KEY}\n", encoding="utf-8")
    return Inspector(tmp_path, live=False, tracked=False)


def _body_of(value: object) -> str:
    return json.dumps(value)


@pytest.mark.parametrize(
    "output",
    [
        KEY[20:],
        {"content": [{"type": "text", "text": f"piece 20: {KEY[20:]}"}]},
        f"{KEY[20:]} {KEY[:20]}",
        {"a": KEY[:20], "b": KEY[20:]},
        "x".join(KEY),
    ],
    ids=["second-half", "mcp-result", "halves-swapped", "two-keys", "spread"],
)
def test_a_run_in_an_output_is_redacted_and_judged(inspector: Inspector, output: object) -> None:
    found = inspector.after(None, "mcp__docs__piece", "mcp", {}, output)
    assert SECRET_EXPOSURE in found.alerts and found.redacted
    assert KEY[20:36] not in _body_of(found.redacted_output).replace("x", "")


def test_pieces_over_the_outputs_of_a_session_are_found(inspector: Inspector) -> None:
    first = inspector.after(None, "mcp__docs__piece", "mcp", {}, f"piece 8: {KEY[8:20]}")
    assert not first.secrets  # twelve characters of the secret part: no run yet
    second = inspector.after(None, "mcp__docs__piece", "mcp", {}, f"piece 20: {KEY[20:32]}")
    assert SECRET_EXPOSURE in second.alerts and second.redacted
    assert KEY[20:32] not in str(second.redacted_output)


BENIGN = [
    f"the key ending in {KEY[-4:]}",
    f"prefix {KEY[:18]}",
    "sk-test- keys are for tests",
    f"build {KEY[12:20]} ok",
    "commit 4f9a1c2e7b3d55aa0c1b2e3f4a5b6c7d8e9f0a1b",
    f"request {uuid.UUID('4f9a1c2e-7b3d-4a6f-8e5c-9b2a1d7e3f8d')}",
    f"other key {OTHER}",
    "publishable pk_test_9c8b7a6f5e4d3c2b1a0f9e8d7c6b5a4f",
]


def test_no_run_in_ordinary_outputs(inspector: Inspector) -> None:
    for text in BENIGN:  # one session: no piece of one adds up with another
        found = inspector.after(None, "Bash", "command", {}, text)
        assert not found.secrets, text


def test_a_key_read_whole_makes_no_later_mention_of_its_parts_a_finding(
    inspector: Inspector,
) -> None:
    assert inspector.after(None, "Read", "file_read", {}, f"API_KEY={KEY}\n").redacted
    for text in ("use your sk-test- key", f"build {KEY[12:20]} ok", f"ends {KEY[-8:]}"):
        assert not inspector.after(None, "Bash", "command", {}, text).secrets, text


def test_pieces_read_in_another_process_are_taken_up(tmp_path: Path) -> None:
    """Each call inspected by an inspector of its own (the hook door's processes): what the
    first read is handed on by place, and the second finds the run it completes."""
    (tmp_path / ".env").write_text(f"API_KEY={KEY}\n", encoding="utf-8")
    first = Inspector(tmp_path, live=False, tracked=False)
    assert not first.after(None, "Bash", "command", {}, f"piece: {KEY[8:20]}").secrets
    carried = first.spans()
    assert KEY[8:20] not in json.dumps(carried.to_json())
    alone = Inspector(tmp_path, live=False, tracked=False)
    assert not alone.after(None, "Bash", "command", {}, f"piece: {KEY[20:32]}").secrets
    second = Inspector(tmp_path, live=False, tracked=False)
    second.resume_spans(carried)
    found = second.after(None, "Bash", "command", {}, f"piece: {KEY[20:32]}")
    assert SECRET_EXPOSURE in found.alerts and KEY[20:32] not in str(found.redacted_output)


def test_places_of_an_unknown_value_or_length_are_left_out(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text(f"API_KEY={KEY}\n", encoding="utf-8")
    first = Inspector(tmp_path, live=False, tracked=False)
    first.after(None, "Bash", "command", {}, f"piece: {KEY[8:20]}")
    ((fingerprint, length, start, stop),) = first.spans().read.pieces
    for pieces in ({("0" * 16, length, start, stop)}, {(fingerprint, length + 4, start, stop)}):
        second = Inspector(tmp_path, live=False, tracked=False)
        second.resume_spans(SessionSpans(read=ReadMemory(frozenset(pieces))))
        assert not second.after(None, "Bash", "command", {}, f"piece: {KEY[20:32]}").secrets
