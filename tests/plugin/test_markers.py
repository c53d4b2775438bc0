"""Every marker passes when right and fails with a readable message when wrong."""

from __future__ import annotations

import pytest

pytest_plugins = ["pytester"]

HEADER = "import pytest\n"


def run(pytester: pytest.Pytester, body: str, *args: str) -> pytest.RunResult:
    pytester.makepyfile(test_it=HEADER + body)
    return pytester.runpytest("-p", "no:randomly", *args)


def test_expect_verdict_passes_when_right(pytester: pytest.Pytester) -> None:
    result = run(
        pytester,
        """
@pytest.mark.expect_verdict("FAIL")
def test_it(harness):
    harness.call("Bash", command="rm -rf /")

@pytest.mark.expect_verdict("PASS")
def test_clean(harness):
    harness.call("Glob", pattern="*")

@pytest.mark.expect_verdict("WARN")
def test_warned(harness):
    harness.call("WebFetch", url="https://example.com")
""",
    )
    result.assert_outcomes(passed=3)


def test_expect_verdict_fails_with_expected_actual_and_records(pytester: pytest.Pytester) -> None:
    result = run(
        pytester,
        """
@pytest.mark.expect_verdict("PASS")
def test_it(harness):
    harness.call("Bash", command="rm -rf /")
""",
    )
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*expected verdict PASS, got FAIL*",
            "*Deciding records:*",
            "*FAIL: #0 Bash rm -rf / → deny (deny-destructive-commands) blocked*",
        ]
    )


def test_expect_denied_passes_and_fails(pytester: pytest.Pytester) -> None:
    result = run(
        pytester,
        """
@pytest.mark.expect_denied(tool="Read", target="**/.env", count=1)
@pytest.mark.expect_verdict("FAIL")
def test_right(harness):
    (harness.root / ".env").write_text("K=v")
    harness.call("Read", file_path=".env")

@pytest.mark.expect_denied(tool="Bash")
def test_wrong(harness):
    harness.call("Bash", command="echo hello")
""",
    )
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*expected at least one denied call matching tool='Bash', found 0*",
            "*Recorded calls (closest first):*",
            "*#0 Bash echo hello → allow (default) success*",
        ]
    )


def test_harness_policy_marker_with_overrides(pytester: pytest.Pytester) -> None:
    result = run(
        pytester,
        """
@pytest.mark.harness_policy("safety", enforce=False)
@pytest.mark.expect_verdict("WARN")
def test_dry_run(harness):
    result = harness.call("Bash", command="rm -rf nothing-here")
    assert result.decision == "deny" and not result.blocked

@pytest.mark.harness_policy("strict")
@pytest.mark.expect_verdict("FAIL")
def test_strict(harness):
    assert harness.call("Bash", command="ls").blocked
""",
    )
    result.assert_outcomes(passed=2)


def test_harness_policy_from_a_file_next_to_the_test(pytester: pytest.Pytester) -> None:
    pytester.makefile(
        ".yaml",
        mypolicy="""
defaultPolicy: deny
rules:
  - {id: allow-glob, name: Allow Glob, priority: 1, decision: allow, match: {tools: [Glob]}}
""",
    )
    result = run(
        pytester,
        """
@pytest.mark.harness_policy("mypolicy.yaml")
def test_it(harness):
    assert harness.call("Glob", pattern="*").ok
    assert harness.call("Read", file_path="x").blocked
""",
    )
    result.assert_outcomes(passed=1)


def test_harness_workspace_marker(pytester: pytest.Pytester) -> None:
    result = run(
        pytester,
        """
@pytest.mark.harness_workspace("node-package")
def test_it(harness, git_workspace):
    assert (harness.root / "package.json").is_file()
    assert harness.repo.head.commit == git_workspace.head.commit
""",
    )
    result.assert_outcomes(passed=1)


@pytest.mark.parametrize(
    ("marker", "message"),
    [
        (
            'expect_verdict("MAYBE")',
            "*test_it.py::test_it: expect_verdict: not a verdict: 'MAYBE'*",
        ),
        (
            'expect_denied(tools="Bash")',
            "*test_it.py::test_it: expect_denied: unknown argument 'tools'*",
        ),
        (
            'expect_escalation("high")',
            "*test_it.py::test_it: expect_escalation: level must be one of*",
        ),
    ],
)
def test_bad_marker_argument_is_a_usage_error_naming_the_test(
    pytester: pytest.Pytester, marker: str, message: str
) -> None:
    result = run(
        pytester,
        f"""
@pytest.mark.{marker}
def test_it(harness):
    pass
""",
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])


def test_unknown_workspace_template_is_a_usage_error(pytester: pytest.Pytester) -> None:
    result = run(
        pytester,
        """
@pytest.mark.harness_workspace("nope")
def test_it(harness):
    pass
""",
    )
    assert result.ret != 0
    assert "unknown workspace template 'nope'" in result.stdout.str() + result.stderr.str()


def test_strict_markers_accepts_every_marker(pytester: pytest.Pytester) -> None:
    result = run(
        pytester,
        """
@pytest.mark.expect_verdict("PASS")
@pytest.mark.expect_denied(count=0)
@pytest.mark.expect_escalation("none")
@pytest.mark.harness_policy("safety")
@pytest.mark.harness_workspace("empty")
def test_it(harness):
    harness.call("Glob", pattern="*")
""",
        "--strict-markers",
    )
    result.assert_outcomes(passed=1)


def test_every_session_of_a_test_is_checked(pytester: pytest.Pytester) -> None:
    result = run(
        pytester,
        """
@pytest.mark.expect_verdict("PASS")
def test_it(harness, harness_factory):
    harness.call("Glob", pattern="*")
    other = harness_factory(policy="strict")
    other.call("Bash", command="ls")
""",
    )
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*expected verdict PASS, got FAIL*"])


@pytest.mark.slow
def test_expect_escalation_passes_and_fails_with_the_ladder_history(
    pytester: pytest.Pytester,
) -> None:
    result = run(
        pytester,
        """
@pytest.mark.harness_workspace("python-service")
@pytest.mark.expect_escalation("quarantine", trigger="repeated_failure")
@pytest.mark.expect_verdict("FAIL")
def test_right(harness):
    harness.run_script("retry-loop")

@pytest.mark.expect_escalation("none")
def test_calm(harness):
    harness.call("Glob", pattern="*")

@pytest.mark.harness_workspace("python-service")
@pytest.mark.expect_escalation("notice")
@pytest.mark.expect_verdict("FAIL")
def test_wrong(harness):
    harness.run_script("retry-loop")
""",
    )
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*expected escalation notice, got quarantine (triggers repeated_failure)*",
            "*Ladder history:*",
            "*immune escalation → notice*evidence: audit:*",
            "*immune escalation → quarantine*evidence: audit:*",
        ]
    )


def test_harness_agents_and_expect_refused(pytester: pytest.Pytester) -> None:
    result = run(
        pytester,
        """
from pytest_harness_audit.social import SendError

@pytest.mark.harness_agents("alice", "bob", "carol")
@pytest.mark.expect_refused(reason="unknown-agent", to="agent:dave")
def test_right(harness):
    with pytest.raises(SendError):
        harness.send("agent:dave", "hello")

@pytest.mark.harness_agents("alice", "bob")
@pytest.mark.expect_refused(reason="firewall-refused")
def test_wrong(harness):
    harness.send("agent:bob", "hello")
""",
    )
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*expected a refused send*"])


def test_bad_harness_agents_is_a_usage_error(pytester: pytest.Pytester) -> None:
    result = run(
        pytester,
        """
@pytest.mark.harness_agents("Alice")
def test_it(harness):
    pass
""",
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*test_it.py::test_it: harness_agents: 'Alice' is not an agent name*"]
    )
