"""The owner's credential files at the hook door: pre keeps their content and link counts in the
pending file, post compares, so a change through a name built at run time fails the verdict
there as it does in process (:mod:`pytest_harness_audit.inspect.credential_changes`)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from hook_processes import (
    as_post,
    call_records,
    committed_project,
    hook,
    host_env,
    recorded,
    run_as_host,
    verdict,
)
from test_hook_effects import SESSION, host_call

from pytest_harness_audit.inspect.credential_changes import CredentialFiles
from pytest_harness_audit.inspect.effect_set import Effects
from pytest_harness_audit.inspect.learn_limits import learn_bounded
from pytest_harness_audit.inspect.secrets import SecretRegistry
from pytest_harness_audit.readers.verdict import Verdict

KEY = "API_KEY=sk-live-4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c\n"
# `.env` reached through `os.listdir`: no name of it in the command's text
BUILT = "[n for n in os.listdir('.') if n.endswith('nv') and n.startswith('.')]"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A git project whose untracked `.env` holds a key."""
    files = {"app/main.py": "print('hello')\n", ".gitignore": ".env\n", ".env": KEY}
    return committed_project(tmp_path / "demo", files)


def python_call(project: Path, code: str) -> dict[str, Any]:
    pre = recorded("bash-ls.json", project)
    pre["tool_input"] = {"command": f'python3 -c "import os; {code}"'}
    return pre


@pytest.mark.parametrize(
    "code",
    [
        f"[open(n, 'w').write('API_KEY=mine') for n in {BUILT}]",
        f"[os.remove(n) for n in {BUILT}]",
        f"[open(n, 'a').write('DB=postgres://evil') for n in {BUILT}]",
        f"[os.link(n, 'app/k.txt') for n in {BUILT}]",
    ],
    ids=["rewritten", "deleted", "appended", "hard-linked"],
)
def test_a_credential_file_changed_by_a_built_name_fails(
    project: Path, tmp_path: Path, code: str
) -> None:
    storage = tmp_path / "store"
    record = host_call(storage, project, python_call(project, code))
    assert record["effects"]["protected"] == [".env"], record.get("effects")
    assert record["judged"]["verdict"] == "FAIL"
    assert verdict(storage, SESSION) is Verdict.FAIL


@pytest.mark.parametrize(
    "code",
    [
        f"[os.utime(n) for n in {BUILT}]",
        f"[os.chmod(n, 0o600) for n in {BUILT}]",
        f"[open(n, 'w').write(d) for n in {BUILT} for d in [open(n).read()]]",
        "open('app/notes.txt', 'w').write('x')",
    ],
    ids=["touched", "chmod", "same-content", "other-file"],
)
def test_benign_look_alikes_pass(project: Path, tmp_path: Path, code: str) -> None:
    storage = tmp_path / "store"
    record = host_call(storage, project, python_call(project, code))
    assert "protected" not in record.get("effects", {}), record.get("effects")
    assert verdict(storage, SESSION) is Verdict.PASS
    assert (project / ".env").read_text() == KEY
    assert os.stat(project / ".env").st_nlink == 1


def test_the_learned_files_are_those_holding_values(project: Path) -> None:
    (project / "config").mkdir()
    (project / "config" / "credentials.json").write_text('{"token": "ghp_x1y2z3w4v5u6t7s8r9q0"}')
    (project / ".env.example").write_text("API_KEY=\n")  # a template: no value in it
    learned = learn_bounded(SecretRegistry(), str(project))
    assert sorted(learned.paths) == [".env", "config/credentials.json"]


def test_kept_states_round_trip_and_anything_else_is_ignored(project: Path) -> None:
    before = CredentialFiles(str(project), [".env"])
    kept = before.kept()
    (project / ".env").write_text("API_KEY=mine\n")
    after = CredentialFiles(str(project), [".env"])  # as a later process finds it
    for garbage in (None, [], {".env": "x"}, {".env": ["zz", 1]}, {".env": ["00", "1"]}):
        after.resume(garbage)
        assert after.changed(Effects(modified=(".env",))) == ()
    after.resume(kept)
    assert after.changed(Effects(modified=(".env",))) == (".env",)


def test_over_the_snapshot_limit_a_changed_credential_file_still_fails(
    project: Path, tmp_path: Path
) -> None:
    storage = tmp_path / "store"
    pre = python_call(project, f"[os.remove(n) for n in {BUILT}]")
    code, _, err = hook(storage, "pre", pre, "--snapshot-limit", "3", env=host_env())
    assert code == 0, err
    hook(storage, "post", as_post(pre, run_as_host(pre, project)), env=host_env())
    (record,) = call_records(storage, SESSION)
    assert record["effects"]["incomplete"] is True  # no snapshot: the files are read one by one
    assert record["effects"]["protected"] == [".env"]
    assert record["judged"]["verdict"] == "FAIL"


def test_over_the_snapshot_limit_an_untouched_credential_file_is_no_change(
    project: Path, tmp_path: Path
) -> None:
    storage = tmp_path / "store"
    pre = python_call(project, "open('app/notes.txt', 'w').write('x')")
    hook(storage, "pre", pre, "--snapshot-limit", "3", env=host_env())
    hook(storage, "post", as_post(pre, run_as_host(pre, project)), env=host_env())
    (record,) = call_records(storage, SESSION)
    assert "protected" not in record["effects"] and record["judged"]["verdict"] == "WARN"
