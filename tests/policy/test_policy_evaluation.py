"""Evaluation semantics (DESIGN §4 "Policy"): order, first match, criteria, defaults, dry-run."""

from __future__ import annotations

import pytest
from policy_support import decide, policy, rule

from pytest_harness_audit.policy import Evaluation, Policy


def test_the_lowest_priority_number_is_evaluated_first() -> None:
    p = policy(
        rule("late", decision="allow", priority=10),
        rule("early", decision="deny", priority=1),
        rule("middle", decision="warn", priority=5),
    )
    assert [r.id for r in p.rules] == ["early", "middle", "late"]
    assert decide(p, "Bash", command="ls") == ("deny", "early")


def test_ties_keep_file_order() -> None:
    p = policy(
        rule("b-first", decision="warn", priority=3),
        rule("a-second", decision="deny", priority=3),
        rule("c-third", decision="allow", priority=3),
    )
    assert [r.id for r in p.rules] == ["b-first", "a-second", "c-third"]
    assert decide(p, "Read", file_path="x") == ("warn", "b-first")


def test_first_match_wins_and_later_rules_are_not_consulted() -> None:
    p = policy(
        rule("bash-only", decision="warn", priority=1, tools=["Bash"]),
        rule("everything", decision="deny", priority=2),
    )
    assert decide(p, "Bash", command="ls") == ("warn", "bash-only")
    assert decide(p, "Read", file_path="x") == ("deny", "everything")


def test_criteria_are_and_ed() -> None:
    p = policy(
        rule("both", tools=["Read"], targetPatterns=["**/*.key"]),
    )
    assert decide(p, "Read", file_path="/p/a.key") == ("deny", "both")
    assert decide(p, "Read", file_path="/p/a.txt") == ("allow", None)  # tool only
    assert decide(p, "Write", file_path="/p/a.key") == ("allow", None)  # pattern only


def test_all_three_criteria_together() -> None:
    p = policy(
        rule("all", tools=["Read", "Write"], categories=["file_write"], targetPatterns=["*.md"])
    )
    assert decide(p, "Write", file_path="a.md")[1] == "all"
    assert decide(p, "Read", file_path="a.md")[1] is None  # category fails
    assert decide(p, "Edit", file_path="a.md")[1] is None  # tool fails
    assert decide(p, "Write", file_path="a.txt")[1] is None  # pattern fails


def test_lists_are_or_ed() -> None:
    p = policy(rule("web", tools=["WebFetch", "WebSearch"]), rule("io", categories=["state"]))
    assert decide(p, "WebFetch", url="u")[1] == "web"
    assert decide(p, "WebSearch", query="q")[1] == "web"
    assert decide(p, "TodoWrite")[1] == "io"
    assert decide(p, "Read", file_path="x")[1] is None


@pytest.mark.parametrize("tool", ["Bas", "Bash_x", "Bashful", "mcp__x__bash_history"])
def test_tool_names_are_exact(tool: str) -> None:
    p = policy(rule("bash", tools=["Bash"]))
    assert decide(p, "Bash", command="x") == ("deny", "bash")
    assert decide(p, tool, command="x") == ("allow", None)


@pytest.mark.parametrize(
    "tool", ["bash", "BASH", "Bash ", " Bash", "functions.Bash", "shell", "mcp__x__run_command"]
)
def test_a_tool_spelling_a_built_in_one_is_judged_by_the_rules_naming_it(tool: str) -> None:
    """A rule naming ``Bash`` judges the agent's ``bash`` (or a shell tool's) too: the stricter
    decision is kept, so a spelling never makes a call milder either."""
    p = policy(rule("bash", tools=["Bash"]))
    assert decide(p, tool, command="x") == ("deny", "bash")
    allowing = policy(rule("bash", decision="allow", tools=["Bash"]), defaultPolicy="deny")
    assert decide(allowing, tool, command="x")[0] == "deny"


@pytest.mark.parametrize("tool", ["Bash", "Read", "mcp__fs__read_file", "Anything", ""])
def test_an_empty_match_matches_everything(tool: str) -> None:
    p = policy(rule("all", decision="warn"))
    assert decide(p, tool) == ("warn", "all")
    assert decide(p, tool, file_path="/x") == ("warn", "all")


def test_empty_lists_match_nothing() -> None:
    p = policy(
        rule("no-tools", tools=[]),
        rule("no-categories", categories=[], priority=2),
        rule("no-patterns", targetPatterns=[], priority=3),
    )
    assert decide(p, "Read", file_path="/p/.env") == ("allow", None)


def test_a_pattern_rule_never_matches_a_call_without_a_target() -> None:
    p = policy(rule("anything", targetPatterns=["**"]))
    assert decide(p, "TodoWrite", todos=[]) == ("allow", None)
    assert decide(p, "Read", file_path="") == ("deny", "anything")


def test_non_string_parameters_are_not_targets() -> None:
    p = policy(rule("any", targetPatterns=["**"]))
    assert decide(p, "Read", file_path=7, path=None) == ("allow", None)


@pytest.mark.parametrize("default", ["allow", "deny", "warn"])
def test_default_decision_reason_and_constraints(default: str) -> None:
    p = policy(rule("never", tools=["Nothing"]), defaultPolicy=default)
    evaluation = p.evaluate("Read", {"file_path": "/x"})
    assert evaluation.decision == default
    assert evaluation.is_default
    assert evaluation.rule_id is None
    assert evaluation.rule_name is None
    assert evaluation.priority is None
    assert evaluation.reason == f"Default policy: {default}"
    assert evaluation.constraints == (f"policy:{default}", "rule:default")
    assert evaluation.enforced is True
    assert evaluation.blocked is (default == "deny")


def test_a_matched_rule_reports_itself() -> None:
    p = policy(rule("named", decision="warn", priority=7, name="Flag it", reason="Because."))
    evaluation = p.evaluate("Bash", {"command": "ls"})
    assert (evaluation.rule_id, evaluation.rule_name, evaluation.priority) == (
        "named",
        "Flag it",
        7,
    )
    assert evaluation.reason == "Because."
    assert evaluation.constraints == ("policy:warn", "rule:named")
    assert evaluation.category == "command"
    assert evaluation.target == "ls"


def test_reason_falls_back_to_the_rule_name() -> None:
    p = policy(rule("quiet", name="Quiet rule"))
    assert p.evaluate("Bash", {"command": "x"}).reason == "Matched rule: Quiet rule"


def test_an_empty_reason_also_falls_back_to_the_rule_name() -> None:
    p = policy(rule("quiet", name="Quiet rule", reason=""))
    assert p.evaluate("Bash", {"command": "x"}).reason == "Matched rule: Quiet rule"


@pytest.mark.parametrize(
    ("decision", "blocked"), [("deny", True), ("warn", False), ("allow", False)]
)
def test_blocked_means_deny_and_enforced(decision: str, blocked: bool) -> None:
    evaluation = policy(rule("r", decision=decision)).evaluate("Bash", {"command": "x"})
    assert evaluation.enforced is True
    assert evaluation.blocked is blocked


def test_dry_run_records_a_rule_deny_without_blocking() -> None:
    p = policy(rule("no-rm", reason="No."), enforce=False)
    evaluation = p.evaluate("Bash", {"command": "rm -rf /"})
    assert evaluation.decision == "deny"
    assert evaluation.enforced is False
    assert evaluation.blocked is False
    assert evaluation.constraints == ("policy:deny", "rule:no-rm", "enforced:false")


def test_dry_run_covers_the_default_deny_too() -> None:
    p = policy(rule("reads", decision="allow", tools=["Read"]), defaultPolicy="deny", enforce=False)
    evaluation = p.evaluate("Write", {"file_path": "x"})
    assert evaluation.decision == "deny"
    assert evaluation.is_default
    assert evaluation.enforced is False
    assert evaluation.blocked is False
    assert evaluation.constraints == ("policy:deny", "rule:default", "enforced:false")
    assert p.evaluate("Read", {"file_path": "x"}).constraints == ("policy:allow", "rule:reads")


@pytest.mark.parametrize("decision", ["allow", "warn"])
def test_dry_run_leaves_allow_and_warn_alone(decision: str) -> None:
    p = policy(rule("r", decision=decision), enforce=False)
    evaluation = p.evaluate("Bash", {"command": "x"})
    assert evaluation.enforced is True
    assert evaluation.constraints == (f"policy:{decision}", "rule:r")
    default = policy(defaultPolicy=decision, enforce=False).evaluate("Bash", {"command": "x"})
    assert default.constraints == (f"policy:{decision}", "rule:default")


def test_params_may_be_omitted() -> None:
    evaluation = policy(rule("todo", tools=["TodoWrite"])).evaluate("TodoWrite")
    assert evaluation.rule_id == "todo"
    assert evaluation.target is None
    assert evaluation.targets == ()


def test_evaluation_to_dict_is_json_ready() -> None:
    evaluation = policy(rule("r", reason="x")).evaluate("Read", {"file_path": "a/../b"})
    assert evaluation.to_dict() == {
        "decision": "deny",
        "enforced": True,
        "blocked": True,
        "ruleId": "r",
        "ruleName": "Rule r",
        "priority": 1,
        "reason": "x",
        "constraints": ["policy:deny", "rule:r"],
        "category": "file_read",
        "target": "a/../b",
        "targets": ["a/../b", "b"],
    }


def test_evaluating_is_repeatable_and_independent_per_tool() -> None:
    p = Policy.preset("safety")
    first = [p.evaluate(t, {"command": "rm -rf /"}).decision for t in ("Bash", "Read", "Bash")]
    assert first == ["deny", "allow", "deny"]
    assert isinstance(p.evaluate("Bash", {"command": "ls"}), Evaluation)
