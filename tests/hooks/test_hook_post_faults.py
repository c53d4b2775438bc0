"""A post the hook door cannot record as the call still leaves a fault note, found in its
session even when the payload cannot be parsed, and the verdict counts it."""

from __future__ import annotations

import json
from pathlib import Path

from hook_processes import as_post, hook, recorded, verdict

from pytest_harness_audit.audit import iter_records
from pytest_harness_audit.readers.verdict import Verdict

SESSION = "host-faults-1"
SECRET = "sk-test-0123456789abcdef0123"


def _project(tmp_path: Path, *, secret: bool) -> Path:
    root = tmp_path / "demo"
    root.mkdir()
    (root / "README.md").write_text("# demo\n")
    if secret:
        (root / ".env").write_text(f"API_KEY={SECRET}\n")
    return root


def _deep_post(project: Path, stdout: str, depth: int = 3000) -> str:
    """A post whose tool response nests ``depth`` objects deep (json cannot even write it)."""
    text = json.dumps(_fault_post(project, "HOLE"))
    inner = '{"inner":' * depth + json.dumps({"stdout": stdout}) + "}" * depth
    return text.replace('"HOLE"', inner)


def _fault_post(project: Path, response: object) -> dict[str, object]:
    pre = recorded("bash-ls.json", project, session_id=SESSION)
    return as_post(pre, response)


def test_a_post_too_deep_to_parse_is_a_fault_note_in_its_session(tmp_path: Path) -> None:
    project = _project(tmp_path, secret=False)
    storage = tmp_path / "store"
    code, _out, err = hook(storage, "post", _deep_post(project, "ok"))
    assert code == 1 and "recorded as a fault" in err
    (note,) = list(iter_records(storage, SESSION))
    assert (note["kind"], note["tool"], note["result"]["status"]) == (
        "note",
        "PostToolUse",
        "error",
    )
    assert verdict(storage, SESSION) == Verdict.WARN  # a call ran and its outcome is unknown


def test_a_secret_in_an_unparsable_post_fails_the_session(tmp_path: Path) -> None:
    project = _project(tmp_path, secret=True)
    storage = tmp_path / "store"
    code, _out, _err = hook(storage, "post", _deep_post(project, f"API_KEY={SECRET}"))
    assert code == 1
    (note,) = list(iter_records(storage, SESSION))
    assert "secret_exposure" in note["alerts"]
    assert SECRET not in json.dumps(note)
    assert verdict(storage, SESSION) == Verdict.FAIL


def test_a_post_the_parser_refuses_is_judged_by_its_text_too(tmp_path: Path) -> None:
    project = _project(tmp_path, secret=True)
    storage = tmp_path / "store"
    post = _fault_post(project, {"stdout": f"API_KEY={SECRET}"})
    post["tool_name"] = ""  # refused by the payload parser
    code, _out, _err = hook(storage, "post", json.dumps(post))
    assert code == 1
    assert verdict(storage, SESSION) == Verdict.FAIL


def test_a_refused_call_the_host_ran_without_a_pre_step_is_recorded_as_it_ran(
    tmp_path: Path,
) -> None:
    project = _project(tmp_path, secret=True)
    storage = tmp_path / "store"
    pre = recorded("bash-ls.json", project, session_id=SESSION)
    pre["tool_input"] = {"command": "cat .env"}
    post = as_post(pre, {"stdout": f"API_KEY={SECRET}\n", "stderr": ""})
    code, _out, err = hook(storage, "post", post)  # its pre never came (timed out, crashed)
    assert code == 0, err
    (record,) = [r for r in iter_records(storage, SESSION) if r["kind"] == "call"]
    assert record["result"]["status"] == "success"  # it ran: not "blocked"
    assert "ran_unguarded" in record["alerts"]
    assert "secret_exposure" in record["alerts"]  # its output was inspected
    assert SECRET not in json.dumps(record)
    assert verdict(storage, SESSION) == Verdict.FAIL


def test_an_allowed_call_without_a_pre_step_is_not_marked(tmp_path: Path) -> None:
    project = _project(tmp_path, secret=False)
    storage = tmp_path / "store"
    pre = recorded("bash-ls.json", project, session_id=SESSION)
    code, _out, err = hook(storage, "post", as_post(pre, {"stdout": "README.md\n", "stderr": ""}))
    assert code == 0, err
    (record,) = list(iter_records(storage, SESSION))
    assert record["result"]["status"] == "success"
    assert "ran_unguarded" not in (record.get("alerts") or [])
