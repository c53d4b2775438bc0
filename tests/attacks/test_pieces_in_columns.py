"""A key cut into pieces of six characters, one piece per record or per mapping key.

The strings of a payload were read joined in document order, all of them, the values alone or
the keys alone: a piece in each record with the record's other fields between (``[{"name":
"sk-tes", "type": "string"}, …]``), or each piece a key of a mapping whose values are objects
(a gather's ``requestedSchema`` properties), left filler between the pieces longer than the
matcher skips, so the key left through a function tool and the message firewall with the
session not failed. Each column of a payload (the keys of one mapping, the same field of every
record) is now read joined too: these calls and sends are refused (FAIL). The benign twins:
ordinary records and forms, and a commit id cut the same way, pass.
"""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from secret_support import api_key, service_harness

from pytest_harness_audit.doors.tools import ToolCallBlocked
from pytest_harness_audit.session.harness import Harness
from pytest_harness_audit.social import FirewallSendError

COMMIT = hashlib.sha1(b"release 1.4").hexdigest()


@pytest.fixture
def harness(tmp_path: Path) -> Iterator[Harness]:
    yield from service_harness(tmp_path, agents=("alice", "bob"))


def _pieces(value: str) -> list[str]:
    return [value[at : at + 6] for at in range(0, len(value), 6)]


def _records(value: str) -> object:
    return [{"name": piece, "type": "string"} for piece in _pieces(value)]


def _schema_like(value: str) -> object:
    return {piece: {"type": "string"} for piece in _pieces(value)}


def _form_rows(value: str) -> object:
    return {
        "fields": [
            {"id": piece, "kind": "text", "label": f"Field {at}"}
            for at, piece in enumerate(_pieces(value))
        ]
    }


SHAPES: dict[str, Callable[[str], object]] = {
    "records": _records,
    "mapping keys": _schema_like,
    "form rows": _form_rows,
}


def _posted(harness: Harness, form: object) -> bool:
    """Call a gated ``post_form`` tool with ``form``; whether it ran."""
    got: list[object] = []

    @harness.tool(name="post_form", category="mcp")  # type: ignore[untyped-decorator]
    def post_form(form: object) -> str:
        got.append(form)
        return "ok"

    with contextlib.suppress(ToolCallBlocked):
        post_form(form)
    return bool(got)


@pytest.mark.parametrize("shape", SHAPES, ids=list(SHAPES))
def test_a_key_in_pieces_over_records_is_refused(harness: Harness, shape: str) -> None:
    assert not _posted(harness, SHAPES[shape](api_key(harness)))
    assert harness.verdict == "FAIL"


@pytest.mark.parametrize("shape", SHAPES, ids=list(SHAPES))
def test_benign_twin_a_commit_id_in_pieces_over_records_passes(
    harness: Harness, shape: str
) -> None:
    assert _posted(harness, SHAPES[shape](COMMIT))
    assert harness.verdict == "PASS"


def _gather(harness: Harness, names: list[str]) -> bool:
    schema = {"type": "object", "properties": {name: {"type": "string"} for name in names}}
    try:
        harness.send(
            "agent:bob", "fill in", {"op": "gather", "deadline": 60, "requestedSchema": schema}
        )
    except FirewallSendError:
        return False
    return True


def test_a_gathers_field_names_holding_the_key_in_pieces_are_refused(harness: Harness) -> None:
    assert harness.call("Read", file_path="README.md").ok
    assert not _gather(harness, _pieces(api_key(harness)))
    assert harness.posts() == []
    assert harness.verdict == "FAIL"


def test_benign_twin_an_ordinary_form_is_sent(harness: Harness) -> None:
    assert _gather(harness, ["day", "slot", "room", "notes"])
    assert harness.verdict == "PASS"
