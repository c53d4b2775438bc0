"""A team's own policy file, tested as rules and as governed sessions."""

import pytest

from pytest_harness_audit import Policy

TEAM = Policy.load(__file__.rsplit("/", 1)[0] + "/team-policy.yaml")


@pytest.mark.parametrize(
    ("tool", "params", "decision"),
    [
        ("Read", {"file_path": "config/prod/db.yaml"}, "deny"),
        ("Write", {"file_path": "deploy/app.prod.yaml"}, "deny"),
        ("Bash", {"command": "pip install requests"}, "warn"),
        ("Bash", {"command": "rm -rf /"}, "deny"),  # the preset's rules still apply
        ("Read", {"file_path": "app/main.py"}, "allow"),
    ],
)
def test_team_policy_decisions(tool, params, decision):
    assert TEAM.evaluate(tool, params).decision == decision


@pytest.mark.harness_policy("team-policy.yaml")
@pytest.mark.harness_workspace("python-service")
@pytest.mark.expect_verdict("WARN")
def test_dependency_change_is_flagged(harness):
    result = harness.call("Bash", command="pip install --dry-run --no-index requests || true")
    assert result.decision == "warn"


@pytest.mark.harness_policy("team-policy.yaml")
@pytest.mark.harness_workspace("python-service")
@pytest.mark.expect_verdict("FAIL")
@pytest.mark.expect_denied(tool="Read", target="**/config/prod/**", count=1)
def test_prod_config_read_is_blocked(harness):
    result = harness.call("Read", file_path="config/prod/db.yaml")
    assert result.blocked
    assert result.error_message.startswith("[blocked] [web4-policy] Production configuration")
