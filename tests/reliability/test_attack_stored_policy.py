"""Attacks on the session's stored policy (``<storage>/policies/<session>.json``).

Other processes rebuild the session's gate from that file (the proxy, ``harness-audit immune``,
the hook door's pinned copy). Inline code that builds the store's name at run time reached it
and rewrote it to ``enforce: false`` with no rules: nothing was recorded, the verdict stayed
PASS and ``audit verify`` said VALID. Now the gate that wrote the file looks at it after every
call: a changed or removed file is written back and noted (``SealedFileChanged``), which FAILs
the session; a gate opening a session whose file claims its policy but holds other rules does
the same, and a reader refuses a file whose rules do not hash to the hash it claims.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_harness_audit.cli import main as cli
from pytest_harness_audit.errors import PolicyError
from pytest_harness_audit.gate import Gate
from pytest_harness_audit.gate.session_policy import (
    SEALED_FILE_CHANGED,
    load_session_policy,
    policy_path,
)
from pytest_harness_audit.policy import Policy
from pytest_harness_audit.readers.verdict import POLICY_CHANGED_CODE
from pytest_harness_audit.session.harness import Harness

SESSION = "s"
#: The stored policy's path as inline code builds it from the workspace.
STORED = "os.path.join(os.path.realpath('..'), 'au' + 'dit', 'pol' + 'icies', 'S.json'.lower())"

TAMPERS = {
    "rules-emptied": (
        f"p = {STORED}; d = json.load(open(p)); d['policy']['enforce'] = False; "
        "d['policy']['rules'] = []; open(p, 'w').write(json.dumps(d))"
    ),
    "removed": f"os.remove({STORED})",
    "cut-short": f"p = {STORED}; d = open(p).read(); open(p, 'w').write(d[: len(d) // 2])",
    "a-rule-allowed": (
        f"p = {STORED}; d = json.load(open(p)); d['policy']['rules'][0]['decision'] = 'allow'; "
        "open(p, 'w').write(json.dumps(d))"
    ),
}


def inline(code: str) -> str:
    return f'python3 -c "import os, json; {code}"'


@pytest.fixture
def harness(tmp_path: Path) -> Iterator[Harness]:
    made = Harness.create(tmp_path, policy="safety", session_id=SESSION)
    yield made
    made.close()


def _stored(harness: Harness) -> Path:
    return policy_path(harness.storage_dir, SESSION)


def _sealed_notes(harness: Harness) -> list[str]:
    return [str(r.error_message) for r in harness.records if r.tool == SEALED_FILE_CHANGED]


@pytest.mark.parametrize("code", TAMPERS.values(), ids=TAMPERS.keys())
def test_a_stored_policy_changed_by_a_call_fails_the_session_and_is_written_back(
    harness: Harness, code: str
) -> None:
    written = _stored(harness).read_bytes()
    done = harness.call("Bash", command=inline(code))
    assert done.status == "success"  # it ran: what it did is the evidence
    assert _stored(harness).read_bytes() == written  # written back for later processes
    (note,) = _sealed_notes(harness)
    assert "stored policy" in note and "outside the gate" in note
    assert harness.verdict == "FAIL"
    assert POLICY_CHANGED_CODE in {reason.code for reason in harness.verdict_reasons}
    assert harness.call("Read", file_path=".env").status == "blocked"  # still the safety rules
    assert load_session_policy(harness.storage_dir, SESSION) is not None
    assert harness.verify().valid


def test_an_untouched_stored_policy_gives_no_note(harness: Harness) -> None:
    harness.call("Bash", command="git status --short")
    harness.call("Write", file_path="notes.txt", content="policies are json files\n")
    harness.call("Bash", command="cat notes.txt")
    assert _sealed_notes(harness) == []
    assert harness.verdict == "PASS"


def test_another_gate_of_the_session_with_the_same_rules_is_no_tamper(harness: Harness) -> None:
    # a stdio proxy of the session loads the policy from its own file, under that file's name
    same = Policy.from_dict(harness.policy.to_dict(), name="s.proxy-policy")
    other = Gate.open(storage_dir=harness.storage_dir, session_id=SESSION, policy=same)
    other.chain.close()
    harness.call("Bash", command="git status --short")
    assert _sealed_notes(harness) == []
    assert harness.verdict == "PASS"


def test_a_gate_opening_a_session_whose_file_was_changed_notes_it(tmp_path: Path) -> None:
    policy = Policy.preset("safety")
    Gate.open(storage_dir=tmp_path, session_id=SESSION, policy=policy).chain.close()
    stored = policy_path(tmp_path, SESSION)
    document = json.loads(stored.read_text(encoding="utf-8"))
    document["policy"]["rules"] = []  # the claimed content hash and name are kept
    stored.write_text(json.dumps(document), encoding="utf-8")
    with pytest.raises(PolicyError, match="changed after the session's gate wrote it"):
        load_session_policy(tmp_path, SESSION)
    gate = Gate.open(storage_dir=tmp_path, session_id=SESSION, policy=policy)
    gate.chain.close()
    (note,) = [r for r in gate.chain.records() if r["tool"] == SEALED_FILE_CHANGED]
    assert "claims the session's policy but holds other rules" in note["result"]["errorMessage"]
    assert load_session_policy(tmp_path, SESSION) is not None  # written back


def test_a_session_resumed_under_another_policy_is_no_tamper(tmp_path: Path) -> None:
    first = Gate.open(storage_dir=tmp_path, session_id=SESSION, policy=Policy.preset("safety"))
    first.chain.close()
    gate = Gate.open(storage_dir=tmp_path, session_id=SESSION, policy=Policy.preset("strict"))
    gate.chain.close()
    assert [r for r in gate.chain.records() if r["tool"] == SEALED_FILE_CHANGED] == []
    kept = load_session_policy(tmp_path, SESSION)
    assert kept is not None and kept.name == Policy.preset("strict").name


def test_the_immune_command_refuses_a_changed_stored_policy_in_one_line(
    harness: Harness, capsys: pytest.CaptureFixture[str]
) -> None:
    harness.call("Bash", command="git status --short")
    harness.close()
    stored = _stored(harness)
    document = json.loads(stored.read_text(encoding="utf-8"))
    document["policy"]["enforce"] = False
    stored.write_text(json.dumps(document), encoding="utf-8")
    code = cli(["immune", "status", SESSION, "--storage", str(harness.storage_dir)])
    err = capsys.readouterr().err
    assert code != 0
    assert len(err.strip().splitlines()) == 1, err
    assert "changed after the session's gate wrote it" in err and str(stored) in err
