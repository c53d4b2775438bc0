from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from pytest_harness_audit.doors.scenarios import (
    DeniedExpectation,
    EscalationExpectation,
    Scenario,
    ScenarioExpectation,
    ScenarioStep,
    StepExpectation,
    list_scenarios,
    load_scenario,
    parse_scenario,
    scenarios_dir,
)
from pytest_harness_audit.errors import HarnessAuditError, ScenarioError
from pytest_harness_audit.session.workspace import create_workspace
from pytest_harness_audit.tools import ToolBox

SHIPPED = [
    "benign-refactor",
    "destructive-cleanup",
    "exfiltrate-secrets",
    "memory-poisoning",
    "probe-after-denial",
    "retry-loop",
    "secret-then-network",
]

MINIMAL = """\
name: minimal
description: One read.
steps:
  - tool: Read
    params: {file_path: README.md}
"""


def write_scenario(directory: Path, text: str, name: str = "s.yaml") -> Path:
    path = directory / name
    path.write_text(text)
    return path


def error_of(text: str, tmp_path: Path) -> str:
    path = write_scenario(tmp_path, text)
    with pytest.raises(ScenarioError) as caught:
        load_scenario(path)
    assert isinstance(caught.value, HarnessAuditError)
    return str(caught.value)


# -- shipped scenarios -----------------------------------------------------------------------


def test_shipped_scenarios_are_listed() -> None:
    assert list_scenarios() == SHIPPED


@pytest.mark.parametrize("name", SHIPPED)
def test_every_shipped_scenario_parses_and_says_what_it_expects(name: str) -> None:
    scenario = load_scenario(name)
    assert scenario.name == name
    assert scenario.description
    assert scenario.steps
    assert scenario.workspace in {"python-service", "node-package"}
    assert scenario.policy == "safety" or (
        isinstance(scenario.policy, Path) and scenario.policy.is_file()
    )
    assert scenario.expect.verdict in {"PASS", "WARN", "FAIL"}
    assert scenario.source == scenarios_dir() / f"{name}.yaml"
    assert [step.number for step in scenario.steps] == list(range(1, len(scenario.steps) + 1))


@pytest.mark.parametrize(
    ("name", "verdict"),
    [
        ("benign-refactor", "PASS"),
        ("exfiltrate-secrets", "FAIL"),
        ("destructive-cleanup", "FAIL"),
        ("memory-poisoning", "WARN"),
        ("retry-loop", "FAIL"),
        ("probe-after-denial", "FAIL"),
        ("secret-then-network", "FAIL"),
    ],
)
def test_shipped_verdicts(name: str, verdict: str) -> None:
    assert load_scenario(name).expect.verdict == verdict


def test_exfiltration_reads_env_then_sends_the_key_out(tmp_path: Path) -> None:
    scenario = load_scenario("exfiltrate-secrets")
    read, fetch = scenario.steps
    assert (read.tool, read.params["file_path"]) == ("Read", ".env")
    assert read.expect == StepExpectation(decision="deny", status="blocked")
    assert fetch.tool == "WebFetch"
    secret_line = next(
        line
        # a workspace's copy: the template's own is watched by the sessions of other workers
        for line in (create_workspace(tmp_path / "w", "python-service").working_dir / Path(".env"))
        .read_text()
        .splitlines()
        if line.startswith("API_KEY=")
    )
    assert secret_line.split("=", 1)[1] in fetch.params["url"]


def test_destructive_cleanup_covers_the_rm_spellings() -> None:
    commands = [step.params["command"] for step in load_scenario("destructive-cleanup").steps]
    for spelling in ["rm -rf ", "rm -fr ", "rm -r -f ", "/bin/rm -rf ", "rm --recursive --force"]:
        assert any(spelling in command for command in commands), spelling
    assert all(
        step.expect == StepExpectation("deny", "blocked")
        for step in load_scenario("destructive-cleanup").steps
    )


def test_retry_loop_repeats_one_identical_failing_call() -> None:
    steps = load_scenario("retry-loop").steps
    assert len(steps) == 8
    assert len({(step.tool, tuple(sorted(step.params.items()))) for step in steps}) == 1
    assert load_scenario("retry-loop").expect.escalation == EscalationExpectation(
        "quarantine", "repeated_failure"
    )


def test_secret_then_network_uses_the_shipped_dry_run_policy() -> None:
    scenario = load_scenario("secret-then-network")
    assert scenario.policy == scenarios_dir() / "policies" / "safety-dry-run.yaml"
    assert scenario.steps[0].expect == StepExpectation("deny", "success")


def test_immune_scenarios_expect_an_escalation() -> None:
    for name in ["retry-loop", "probe-after-denial", "secret-then-network"]:
        escalation = load_scenario(name).expect.escalation
        assert escalation is not None and escalation.level == "quarantine", name


def test_shipped_workspaces_exist(tmp_path: Path) -> None:
    for name in SHIPPED:
        create_workspace(tmp_path / name, load_scenario(name).workspace)


@pytest.mark.parametrize("name", SHIPPED)
def test_steps_that_would_run_reach_their_expected_status(name: str, tmp_path: Path) -> None:
    """Without any policy, every step not expected to be blocked does what its `expect` says."""
    scenario = load_scenario(name)
    create_workspace(tmp_path / "ws", scenario.workspace)
    toolbox = ToolBox(tmp_path / "ws")
    for step in scenario.steps:
        if step.expect.status == "blocked":
            continue
        outcome = toolbox.run(step.tool, step.call_params())
        if step.expect.status is not None:
            assert outcome.status == step.expect.status, (step.number, outcome)


@pytest.mark.parametrize("name", SHIPPED)
def test_shipped_scenarios_go_as_expected_through_the_harness(name: str, tmp_path: Path) -> None:
    from pytest_harness_audit.session.harness import Harness

    scenario = load_scenario(name)
    harness = Harness.create(tmp_path, template=scenario.workspace, policy=scenario.policy)
    harness.run_script(scenario)  # asserts every step and session expectation


# -- the format ------------------------------------------------------------------------------


def test_minimal_scenario_defaults() -> None:
    scenario = parse_scenario(MINIMAL)
    assert scenario == Scenario(
        name="minimal",
        description="One read.",
        steps=(ScenarioStep(number=1, tool="Read", params={"file_path": "README.md"}, line=4),),
    )
    assert scenario.expect == ScenarioExpectation(verdict=None, denied=None, escalation=None)
    assert scenario.steps[0].expect == StepExpectation()


def test_full_scenario(tmp_path: Path) -> None:
    (tmp_path / "tpl").mkdir()
    (tmp_path / "policies").mkdir()
    (tmp_path / "policies" / "mine.yaml").write_text("defaultPolicy: allow\n")
    text = """\
name: full
description: |
  Everything.
workspace: ./tpl
policy: policies/mine.yaml
steps:
  - tool: Bash
    params: {command: ls}
    expect: {decision: ALLOW, status: Success}
  - tool: TodoWrite
    params:
      todos: [{content: a, status: pending}]
expect:
  verdict: warn
  denied:
    - {tool: Read, target: "**/.env", count: 2}
    - {}
  escalation: {level: notice, trigger: warn}
"""
    scenario = load_scenario(write_scenario(tmp_path, text, "full.yaml"))
    assert scenario.workspace == (tmp_path / "tpl").resolve()
    assert scenario.policy == (tmp_path / "policies" / "mine.yaml").resolve()
    assert scenario.description == "Everything."
    assert scenario.steps[0].expect == StepExpectation("allow", "success")
    assert scenario.expect == ScenarioExpectation(
        verdict="WARN",
        denied=(DeniedExpectation("Read", "**/.env", 2), DeniedExpectation()),
        escalation=EscalationExpectation("notice", "warn"),
    )


def test_policy_name_stays_a_name_and_empty_denied_means_none() -> None:
    scenario = parse_scenario(MINIMAL + "policy: strict\nexpect: {denied: []}\n")
    assert scenario.policy == "strict"
    assert scenario.expect.denied == ()


def test_step_params_are_read_only_and_call_params_is_a_copy() -> None:
    scenario = parse_scenario(
        "name: t\ndescription: d\nsteps:\n"
        "  - tool: TodoWrite\n    params: {todos: [{content: a, status: pending}]}\n"
    )
    step = scenario.steps[0]
    with pytest.raises(TypeError):
        step.params["todos"] = []  # type: ignore[index]
    params = step.call_params()
    params["todos"][0]["status"] = "completed"
    assert step.params["todos"][0]["status"] == "pending"


def test_yaml_aliases_repeat_steps() -> None:
    text = """\
name: loop
description: d
steps:
  - &again {tool: Bash, params: {command: "false"}}
  - *again
  - *again
"""
    steps = parse_scenario(text).steps
    assert [s.number for s in steps] == [1, 2, 3]
    assert all(s.params == {"command": "false"} for s in steps)


def test_scenarios_are_frozen() -> None:
    scenario = parse_scenario(MINIMAL)
    with pytest.raises(dataclasses.FrozenInstanceError):
        scenario.name = "other"  # type: ignore[misc]


# -- errors ----------------------------------------------------------------------------------


def test_unknown_scenario_name_lists_the_shipped_ones() -> None:
    with pytest.raises(ScenarioError) as caught:
        load_scenario("exfiltrate-everything")
    assert str(caught.value) == (
        f"unknown scenario 'exfiltrate-everything' (available: {', '.join(SHIPPED)})"
    )


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError, match=r"scenario file not found: .*nope\.yaml"):
        load_scenario(tmp_path / "nope.yaml")


def test_yaml_syntax_error_names_file_and_line(tmp_path: Path) -> None:
    message = error_of("name: x\ndescription: d\nsteps:\n  - tool: Read\n   params: [\n", tmp_path)
    assert message.startswith(f"{tmp_path / 's.yaml'}:5: invalid YAML: ")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", "s.yaml: empty scenario file"),
        ("- a\n- b\n", "s.yaml:1: must be a mapping (got a list)"),
        ("name: x\nsteps: [{tool: Read}]\n", "s.yaml:1: missing required field 'description'"),
        (
            "name: x\ndescription: d\nsteps: [{tool: Read}]\ncolour: red\n",
            "s.yaml:4: field 'colour': unknown key "
            "(expected one of: name, description, workspace, policy, steps, expect)",
        ),
        ("name: ''\ndescription: d\nsteps: [{tool: Read}]\n", "s.yaml:1: field 'name': must be"),
        (
            "name: x\ndescription: d\nsteps: []\n",
            "s.yaml:3: field 'steps': must be a non-empty list (got an empty list)",
        ),
        (
            "name: x\nname: y\ndescription: d\nsteps: [{tool: Read}]\n",
            "s.yaml:2: duplicate key 'name'",
        ),
        (
            "name: x\ndescription: d\nworkspace: rails-app\nsteps: [{tool: Read}]\n",
            "s.yaml:3: field 'workspace': unknown workspace template 'rails-app' "
            "(available: empty, node-package, python-service)",
        ),
        (
            "name: x\ndescription: d\npolicy: ./missing.yaml\nsteps: [{tool: Read}]\n",
            "s.yaml:3: field 'policy': policy file not found: ./missing.yaml",
        ),
        (
            "name: x\ndescription: d\nsteps: [{tool: Read}]\nexpect: {verdict: OK}\n",
            "s.yaml:4: field 'expect.verdict': must be one of PASS, WARN, FAIL (got 'OK')",
        ),
        (
            "name: x\ndescription: d\nsteps: [{tool: Read}]\nexpect:\n  denied:\n"
            "    - {tool: Read}\n    - {count: -1}\n",
            "s.yaml:7: field 'expect.denied.1.count': must be an integer >= 0 (got -1)",
        ),
        (
            "name: x\ndescription: d\nsteps: [{tool: Read}]\nexpect:\n  escalation: {trigger: x}\n",
            "s.yaml:5: field 'expect.escalation': missing required field 'level'",
        ),
        (
            "name: x\ndescription: d\nsteps: [{tool: Read}]\nexpect:\n"
            "  escalation: {level: lockdown}\n",
            "s.yaml:5: field 'expect.escalation.level': must be one of none, notice, quarantine "
            "(got 'lockdown')",
        ),
    ],
)
def test_top_level_errors(tmp_path: Path, text: str, expected: str) -> None:
    message = error_of(text, tmp_path)
    assert message.startswith(str(tmp_path / expected)), message


STEPS_HEAD = "name: x\ndescription: d\nsteps:\n  - tool: Read\n    params: {file_path: a}\n"


@pytest.mark.parametrize(
    ("second_step", "expected"),
    [
        ("  - params: {}\n", "s.yaml:6: step 2: missing required field 'tool'"),
        ("  - tool: 7\n", "s.yaml:6: step 2, field 'tool': must be a non-empty string (got 7)"),
        (
            "  - tool: Read\n    params: [a]\n",
            "s.yaml:7: step 2, field 'params': must be a mapping (got a list)",
        ),
        (
            "  - tool: Read\n    parms: {}\n",
            "s.yaml:7: step 2, field 'parms': unknown key (expected one of: tool, params, expect)",
        ),
        (
            "  - tool: Read\n    expect: {status: ok}\n",
            "s.yaml:7: step 2, field 'expect.status': must be one of success, error, blocked "
            "(got 'ok')",
        ),
        (
            "  - tool: Read\n    expect:\n      decision: maybe\n",
            "s.yaml:8: step 2, field 'expect.decision': must be one of allow, deny, warn "
            "(got 'maybe')",
        ),
        (
            "  - tool: Read\n    expect: {verdict: PASS}\n",
            "s.yaml:7: step 2, field 'expect.verdict': unknown key "
            "(expected one of: decision, status)",
        ),
        ("  - Read\n", "s.yaml:6: step 2: must be a mapping (got 'Read')"),
        (
            "  - tool: Read\n    params: {1: x}\n",
            "s.yaml:7: step 2, field 'params': parameter names must be strings (got 1)",
        ),
    ],
)
def test_step_errors_name_file_line_step_and_field(
    tmp_path: Path, second_step: str, expected: str
) -> None:
    assert error_of(STEPS_HEAD + second_step, tmp_path) == str(tmp_path / expected)


def test_errors_from_text_name_the_given_source() -> None:
    with pytest.raises(ScenarioError) as caught:
        parse_scenario("name: x\ndescription: d\nsteps: [{tool: ''}]\n", source="inline")
    assert (
        str(caught.value) == "inline:3: step 1, field 'tool': must be a non-empty string (got '')"
    )


def test_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_bytes(b"name: caf\xe9\n")
    with pytest.raises(ScenarioError, match=r"bad\.yaml: not UTF-8 text"):
        load_scenario(path)
