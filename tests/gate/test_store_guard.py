"""No door reaches the audit store: every spelling of a touch is refused, ordinary calls are not."""

from __future__ import annotations

import io
import json
import os
import sys
from pathlib import Path

import pytest

from pytest_harness_audit.audit import verify_chain
from pytest_harness_audit.cli import main as cli
from pytest_harness_audit.session.harness import Harness


@pytest.fixture
def harness(store_session: Harness) -> Harness:
    """The shared permissive session, its store holding a chain (tests/conftest.py)."""
    return store_session


def attempts(store: Path, session: str) -> list[tuple[str, dict[str, str]]]:
    chain = store / "audit" / f"{session}.jsonl"
    return [
        ("Bash", {"command": f": > {chain}"}),
        ("Bash", {"command": f"truncate -s0 {chain}"}),
        ("Bash", {"command": f"rm -rf {store}"}),
        ("Bash", {"command": f"rm {store}/sessions/{session}.anchor"}),
        ("Bash", {"command": "rm -rf .."}),
        ("Bash", {"command": f"cat {chain}"}),
        ("Bash", {"command": f"ln -s {store} evidence"}),
        ("Bash", {"command": f"cp /dev/null {chain}"}),
        ("Write", {"file_path": str(chain), "content": ""}),
        ("Edit", {"file_path": str(chain), "old_string": "a", "new_string": "b"}),
        ("Read", {"file_path": str(chain)}),
        ("Bash", {"command": f"python3 -c \"open('{chain}', 'w')\""}),
    ]


def test_every_attempt_on_the_store_is_refused_and_the_chain_stays_intact(
    harness: Harness,
) -> None:
    store = harness.storage_dir.resolve()
    for tool, params in attempts(store, harness.session_id):
        result = harness.execute(tool, params)
        assert result.status == "blocked", (tool, params)
        assert "tamper_attempt" in result.record["alerts"], (tool, params)
    assert str(harness.verdict) == "FAIL"
    report = verify_chain(harness.storage_dir, harness.session_id)
    assert report.valid and report.record_count >= 13


def test_a_symlink_into_the_store_is_followed(harness: Harness) -> None:
    os.symlink(harness.storage_dir.resolve(), harness.root / "ev")
    result = harness.call("Bash", command="cat ev/audit/*.jsonl")
    assert result.status == "blocked" and result.evaluation.rule_id == "protect-audit-store"


@pytest.mark.parametrize(
    "command",
    ["ls -la", "cat README.md", "git status", "echo audit > notes.txt", "mkdir auditing"],
)
def test_ordinary_calls_are_not_tampering(harness: Harness, command: str) -> None:
    result = harness.call("Bash", command=command)
    assert result.status == "success", result.error_message
    assert "tamper_attempt" not in result.record.get("alerts", [])


def test_the_policy_keeps_its_reason_when_it_refuses_too(tmp_path: Path) -> None:
    harness = Harness.create(tmp_path, template="empty", policy="safety")
    result = harness.call("Bash", command="rm -rf /")
    assert result.evaluation.rule_id == "deny-destructive-commands"
    assert "tamper_attempt" in result.record["alerts"]
    harness.close()


def test_the_hook_door_refuses_the_erase_sequence(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    store = project / ".harness-audit"
    erase = (
        ": > .harness-audit/audit/S.jsonl; rm .harness-audit/sessions/S.anchor "
        ".harness-audit/sessions/S.json"
    )
    payload = {
        "hook_event_name": "PreToolUse",
        "session_id": "S",
        "tool_name": "Bash",
        "tool_input": {"command": erase},
        "cwd": str(project),
    }
    monkeypatch.setattr(sys, "stdin", io.StringIO(json.dumps(payload)))
    code = cli(["--storage", str(store), "hook", "pre", "--preset", "safety"])
    answer = json.loads(capsys.readouterr().out)["hookSpecificOutput"]
    assert code == 0 and answer["permissionDecision"] == "deny"
    assert "audit store" in answer["permissionDecisionReason"]
    report = verify_chain(store, "S")
    assert report.valid and report.record_count == 1


@pytest.mark.parametrize(
    "template",
    [
        "cp -a {parent} /tmp/backup",
        "cp -r {grandparent} /tmp/backup",
        "tar czf /tmp/evidence.tgz {parent}",
        "rsync -a {parent}/ /tmp/backup/",
        "zip -qr /tmp/evidence.zip {parent}",
        "cd {parent} && tar cf /tmp/e.tar .",
        "tar -C {grandparent} -cf /tmp/b.tar {parentname}",
        "tar -C {parent} -xf /tmp/b.tar",
        "cd {parent} && tar xf /tmp/b.tar",
        "unzip -o /tmp/b.zip -d {grandparent}",
    ],
)
def test_a_whole_copy_of_a_folder_holding_the_store_is_refused(harness: Harness, template) -> None:
    store = harness.storage_dir.resolve()
    command = template.format(
        parent=store.parent, grandparent=store.parent.parent, parentname=store.parent.name
    )
    decision = harness.gate.decide("Bash", {"command": command})
    assert decision.blocked, command
    assert "tamper_attempt" in decision.alerts


def test_copies_beside_the_store_stay_allowed(harness: Harness) -> None:
    for command in (
        "cp -r app /tmp/app-copy",
        "tar czf /tmp/app.tgz app",
        "cp -a . /tmp/ws",
        "tar -C app -xf /tmp/app.tgz",
        "unzip -o /tmp/a.zip -d unpacked",
    ):
        decision = harness.gate.decide("Bash", {"command": command})
        assert "tamper_attempt" not in decision.alerts, command


def test_a_bare_star_from_the_parent_is_refused_and_the_store_stays(harness: Harness) -> None:
    for command in (
        "cd .. && rm -rf *",
        "pushd .. >/dev/null; rm -rf *; popd",
        'cd "$(dirname "$PWD")" && rm -rf *',
        "cd ..; printf '%s\\0' * | xargs -0 rm -rf",
    ):
        result = harness.execute("Bash", {"command": command})
        assert result.status == "blocked", command
        assert "tamper_attempt" in result.record["alerts"], command
    report = verify_chain(harness.storage_dir, harness.session_id)
    assert report.valid and report.record_count >= 5
    assert (harness.root / "README.md").exists()


def test_a_script_file_building_the_store_name_is_refused(harness: Harness) -> None:
    script = "import os, shutil\nshutil.rmtree(os.path.join('..', 'au' + 'dit'))\n"
    (harness.root / "wipe.py").write_text(script, encoding="utf-8")
    inline = 'python3 -c "' + script.replace("\n", "; ") + '"'
    for command in ("python3 wipe.py", inline):
        result = harness.execute("Bash", {"command": command})
        assert result.status == "blocked" and "tamper_attempt" in result.record["alerts"]
    assert verify_chain(harness.storage_dir, harness.session_id).valid


@pytest.mark.parametrize(
    "command",
    [
        "chmod -R a-w ..",
        "chmod 000 ..",
        "chmod -w ..",
        "chown -R nobody ..",
        "chgrp -R nogroup ../",
        "cd .. && chmod -R 000 .",
        "setfacl -R -m u:nobody:rwx ..",
        "setfacl --set u::r-- ..",
        "chattr -R +i ..",
        "chattr -i ..",
        "chattr -R -a ..",
        "chattr =i ..",
        "chmod --reference=README.md ..",
        "chmod -R 000 {store}",
    ],
)
def test_a_mode_change_of_a_folder_holding_the_store_is_refused(
    harness: Harness, command: str
) -> None:
    command = command.format(store=harness.storage_dir.resolve())
    decision = harness.gate.decide("Bash", {"command": command})
    assert decision.blocked, command
    assert "tamper_attempt" in decision.alerts


@pytest.mark.parametrize(
    "command",
    [
        "chmod +x app/main.py",
        "chmod -R u+w .",
        "chmod 600 .env",
        "chown -R nobody app",
        "cd .. && chmod -R 755 workspace",
        "chmod -R 755 ../outside",
        "chmod -w README.md",
        "chattr -i app/main.py",
        "chattr -R +a app",
    ],
)
def test_mode_changes_beside_the_store_stay_allowed(harness: Harness, command: str) -> None:
    decision = harness.gate.decide("Bash", {"command": command})
    assert "tamper_attempt" not in decision.alerts, command
