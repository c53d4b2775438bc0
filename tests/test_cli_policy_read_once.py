"""A command line reads its ``--policy FILE`` once, whether the file loads or not."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pytest_harness_audit import cli
from pytest_harness_audit.cli import policy_cmd
from pytest_harness_audit.policy.source import resolve_policy


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """The sources ``policy_cmd.resolve_policy`` was asked for, in order."""
    seen: list[object] = []

    def counting(source: Any) -> Any:
        seen.append(source)
        return resolve_policy(source)

    monkeypatch.setattr(policy_cmd, "resolve_policy", counting)
    return seen


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("defaultPolicy: allow\nrules: []\n", 0),
        ("defaultPolicy: [\n", 2),  # not valid YAML
        ("rules: 3\n", 2),  # valid YAML, not a policy
    ],
    ids=["loads", "not-yaml", "not-a-policy"],
)
def test_policy_status_reads_its_policy_file_once(
    tmp_path: Path, reads: list[object], capsys: pytest.CaptureFixture[str], text: str, code: int
) -> None:
    path = tmp_path / "policy.yaml"
    path.write_text(text, encoding="utf-8")
    assert cli.main(["policy", "status", "--policy", str(path)]) == code
    err = capsys.readouterr().err
    assert reads == [path]
    if code:
        (line,) = err.strip().splitlines()  # one line naming the file, no traceback
        assert line.startswith(f"harness-audit: error: {path}"), line
