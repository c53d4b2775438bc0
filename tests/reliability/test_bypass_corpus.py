"""The bypass corpus: evasion attempts against the ``safety`` preset, each row a test.

Rows live in ``bypass_corpus.yaml`` (see its header). A row asserts today's behaviour — the
decision, the rule, and for rows that run, the tool's status — and that its ``outcome`` follows
from them, so neither the preset nor the README table can change silently. The README's table
must equal the one generated from the corpus.
"""

from __future__ import annotations

import itertools
import os
from pathlib import Path
from typing import Any

import pytest
from bypass_table import OUTCOMES, README, SECTION, Attempt, legend, load_corpus, table

from pytest_harness_audit.session.harness import Harness

CORPUS = load_corpus()
RUN_TOOLS = frozenset({"Read", "Write", "Edit", "Glob", "Grep"})
CONFINEMENT = "path escapes the workspace"

_sessions = itertools.count()


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A ``python-service`` workspace with the corpus's symlinks (see the YAML header)."""
    base = tmp_path_factory.mktemp("bypass")
    harness = Harness.create(base, template="python-service")
    harness.close()
    root = harness.root
    outside = base / "outside"
    outside.mkdir()
    (outside / "data.txt").write_text("not for the agent\n", encoding="utf-8")
    os.symlink(".env", root / "notes.txt")
    os.symlink("SOUL.md", root / "persona.md")
    os.symlink("../outside/data.txt", root / "outside.txt")
    return root


def _params(attempt: Attempt, root: Path) -> dict[str, Any]:
    return {
        key: value.replace("{root}", str(root)) if isinstance(value, str) else value
        for key, value in attempt.params.items()
    }


def _derived_outcome(
    decision: str, error: str | None, withheld: bool = False, declared: str = "documented limit"
) -> str:
    """The outcome the behaviour shows. An allowed call is a ``benign`` row (one that must stay
    allowed) or a ``documented limit`` (an evasion that gets through): that is the row's word."""
    if decision == "deny" or (error is not None and CONFINEMENT in error) or withheld:
        return "caught"
    if decision == "warn":
        return "flagged"
    return "benign" if declared == "benign" else "documented limit"


@pytest.mark.parametrize("attempt", CORPUS, ids=[row.test_id for row in CORPUS])
def test_bypass_attempt(attempt: Attempt, workspace: Path, reliability_counts: Any) -> None:
    expect = attempt.expect
    assert attempt.outcome in OUTCOMES
    harness = Harness(
        workspace,
        storage_dir=workspace.parent / "audit",
        policy="safety",
        session_id=f"bypass-{next(_sessions)}",
    )
    try:
        params = _params(attempt, workspace)
        error: str | None = None
        withheld = False
        if "status" in expect:
            assert attempt.tool in RUN_TOOLS
            result = harness.execute(attempt.tool, params)
            decision, rule = result.decision, result.evaluation.rule_id
            assert result.status == expect["status"], result
            error = result.error_message
            if "error" in expect:
                assert expect["error"] in (error or "")
            if "output" in expect:
                assert expect["output"] in (result.output or "")
            if "withheld" in expect:
                output = str(result.output or "")
                notice = output.splitlines()[-1]
                assert notice.startswith("[web4-policy] not searched")
                assert expect["withheld"] in notice
                secret = (workspace / expect["withheld"]).read_text()
                assert not any(line and line in output for line in secret.splitlines())
                withheld = True
        else:
            evaluation = harness.gate.decide(attempt.tool, params).evaluation
            decision, rule = evaluation.decision, evaluation.rule_id
    finally:
        harness.close()
    assert (decision, rule) == (expect["decision"], expect["rule"])
    assert _derived_outcome(decision, error, withheld, attempt.outcome) == attempt.outcome
    reliability_counts.add("bypass corpus", "attempts")
    reliability_counts.add("bypass corpus", attempt.outcome)


def _readme_section() -> str:
    text = README.read_text(encoding="utf-8")
    assert SECTION in text, f"README.md has no section {SECTION!r}"
    return text.split(SECTION, 1)[1].split("\n## ", 1)[0]


def test_readme_table_matches_the_corpus() -> None:
    section = _readme_section()
    expected = table(CORPUS)
    found = [line for line in section.splitlines() if line.startswith("|")]
    assert found == expected and legend() in section.splitlines(), (
        "README.md's security table differs from tests/reliability/bypass_corpus.yaml; "
        "regenerate it with `python tests/reliability/bypass_table.py --write`"
    )


def test_the_corpus_has_catches_and_limits_for_every_target() -> None:
    for against in {row.against for row in CORPUS}:
        outcomes = {row.outcome for row in CORPUS if row.against == against}
        assert {"caught", "documented limit"} <= outcomes, against


@pytest.mark.parametrize(
    ("decision", "error", "withheld", "declared", "expected"),
    [
        ("deny", None, False, "caught", "caught"),
        ("allow", "path escapes the workspace: x", False, "caught", "caught"),
        ("allow", None, True, "caught", "caught"),
        ("warn", None, False, "flagged", "flagged"),
        ("allow", None, False, "documented limit", "documented limit"),
        ("allow", None, False, "benign", "benign"),
        ("warn", None, False, "benign", "flagged"),
        ("deny", None, False, "benign", "caught"),
    ],
)
def test_the_outcome_follows_from_the_behaviour(
    decision: str, error: str | None, withheld: bool, declared: str, expected: str
) -> None:
    assert _derived_outcome(decision, error, withheld, declared) == expected
