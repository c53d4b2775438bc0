"""Policy unit tests in the style of `opa test`: each row is a call and its expected decision."""

import pytest

from pytest_harness_audit import Policy

SAFETY = Policy.preset("safety")

DECISIONS = [
    # tool, parameters, expected decision, deciding rule (None = default policy)
    ("Bash", {"command": "rm -rf build/"}, "deny", "deny-destructive-commands"),
    ("Bash", {"command": "sudo /bin/rm -fr /var/lib"}, "deny", "deny-destructive-commands"),
    ("Bash", {"command": "git rm -r --cached dist"}, "allow", None),
    ("Bash", {"command": "rm notes.txt"}, "warn", "warn-file-delete"),
    ("Bash", {"command": "pytest -q"}, "allow", None),
    ("Read", {"file_path": "src/app.py"}, "allow", None),
    ("Read", {"file_path": ".env"}, "deny", "deny-secret-files"),
    ("Read", {"file_path": "src/../.env"}, "deny", "deny-secret-files"),
    ("Write", {"file_path": "config/credentials.json"}, "deny", "deny-secret-files"),
    ("Edit", {"file_path": "MEMORY.md"}, "warn", "warn-memory-write"),
    ("Write", {"file_path": "Soul.md"}, "deny", "deny-persona-write"),
    ("Write", {"file_path": "memory/SOUL.md"}, "deny", "deny-persona-write"),
    ("WebFetch", {"url": "https://example.com/"}, "warn", "warn-network"),
]


@pytest.mark.parametrize(("tool", "params", "decision", "rule"), DECISIONS)
def test_safety_decides(tool, params, decision, rule):
    evaluation = SAFETY.evaluate(tool, params)
    assert evaluation.decision == decision
    assert evaluation.rule_id == rule


def test_dry_run_records_but_does_not_block():
    audit_only = Policy.preset("audit-only")
    evaluation = audit_only.evaluate("Bash", {"command": "rm -rf /"})
    assert evaluation.decision == "deny"
    assert not evaluation.blocked
    assert "enforced:false" in evaluation.constraints
