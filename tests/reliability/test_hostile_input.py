"""Hostile input: whatever arrives, the answer is a result or the documented error — no hang, no
traceback.

Fuzzed (hypothesis): policy files (library and ``harness-audit policy``), scenario files,
addresses (``canonical_address`` / ``resolve_address``), message texts
(``parse_message_text``) and host hook payloads (``harness-audit hook pre|post``). Every call
runs under a time limit. JSON-RPC frames to the proxy are in ``test_hostile_jsonrpc.py``.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest
from hostile_inputs import (
    addresses,
    hook_payloads,
    message_texts,
    policy_texts,
    scenario_texts,
)
from hypothesis import HealthCheck, given, settings
from reliability_support import assert_clean_error, run_cli, time_limit

from pytest_harness_audit.doors.scenarios import Scenario, parse_scenario
from pytest_harness_audit.errors import PolicyError, ScenarioError
from pytest_harness_audit.policy import Policy
from pytest_harness_audit.social import (
    SEND_FAILURE_REASONS,
    CanonicalAddress,
    MessageTextError,
    SendError,
    canonical_address,
    is_address_input,
    parse_message_text,
    resolve_address,
)

LIMIT = 10.0
FAST = 30  # the default run; the slow variants try SLOW
SLOW = 1500
SUITE = "hostile input"
LOCAL_AGENT = "me-1"
REGISTRY = frozenset({"bob", "carol", "dave", "abc", "xyz"})

_files = itertools.count()


def _settings(examples: int) -> Any:
    return settings(
        max_examples=examples,
        deadline=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )


def _tally(counts: Any, target: str, outcome: str) -> None:
    counts.add(SUITE, "cases")
    counts.add(SUITE, "documented errors" if outcome == "error" else "accepted")
    counts.detail(SUITE, target)


# -- policy files ----------------------------------------------------------------------------


def _check_policy_text(directory: Path, text: str, counts: Any) -> None:
    suffix = ".json" if text.lstrip().startswith(("{", "[")) else ".yaml"
    path = directory / f"policy-{next(_files)}{suffix}"
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    with time_limit(LIMIT, "Policy.load"):
        try:
            policy = Policy.load(path)
        except PolicyError as error:
            assert_clean_error(str(error))
            assert str(error).startswith(str(path)), error
            outcome = "error"
        else:
            assert policy.evaluate("Bash", {"command": "ls"}).decision in ("allow", "deny", "warn")
            outcome = "ok"
    with time_limit(LIMIT, "harness-audit policy status"):
        cli = run_cli(["policy", "status", "--policy", str(path)])
    if outcome == "ok":
        assert cli.code == 0, cli
    else:
        assert cli.code == 2, cli
        assert_clean_error(cli.stderr)
    _tally(counts, "policy files", outcome)


def _policy_property(examples: int) -> Any:
    @_settings(examples)
    @given(text=policy_texts)
    def check(directory: Path, counts: Any, text: str) -> None:
        _check_policy_text(directory, text, counts)

    return check


def test_fuzzed_policy_files(tmp_path: Path, reliability_counts: Any) -> None:
    _policy_property(FAST)(tmp_path, reliability_counts)


@pytest.mark.slow
def test_fuzzed_policy_files_many(tmp_path: Path, reliability_counts: Any) -> None:
    _policy_property(SLOW)(tmp_path, reliability_counts)


# -- scenario files --------------------------------------------------------------------------


def _check_scenario_text(directory: Path, text: str, counts: Any) -> None:
    source = str(directory / f"scenario-{next(_files)}.yaml")
    with time_limit(LIMIT, "parse_scenario"):
        try:
            scenario = parse_scenario(text, source=source, base_dir=directory)
        except ScenarioError as error:
            assert_clean_error(str(error))
            assert str(error).startswith(source), error
            outcome = "error"
        else:
            assert isinstance(scenario, Scenario) and scenario.steps
            outcome = "ok"
    _tally(counts, "scenario files", outcome)


def _scenario_property(examples: int) -> Any:
    @_settings(examples)
    @given(text=scenario_texts)
    def check(directory: Path, counts: Any, text: str) -> None:
        _check_scenario_text(directory, text, counts)

    return check


def test_fuzzed_scenario_files(tmp_path: Path, reliability_counts: Any) -> None:
    _scenario_property(FAST)(tmp_path, reliability_counts)


@pytest.mark.slow
def test_fuzzed_scenario_files_many(tmp_path: Path, reliability_counts: Any) -> None:
    _scenario_property(SLOW)(tmp_path, reliability_counts)


# -- addresses -------------------------------------------------------------------------------


def _check_address(to: Any, counts: Any) -> None:
    with time_limit(LIMIT, "canonical_address"):
        try:
            address = canonical_address(to, LOCAL_AGENT)
        except SendError as error:
            assert error.reason in ("invalid-address", "membership-invalid"), error
            assert str(error)
            outcome = "error"
        else:
            assert isinstance(address, CanonicalAddress)
            assert is_address_input(address.address)
            assert LOCAL_AGENT in address.members
            assert list(address.members) == sorted(set(address.members))
            assert 2 <= len(address.members) <= 32
            # canonical form is a fixed point
            assert canonical_address(address.address, LOCAL_AGENT) == address
            outcome = "ok"
        try:
            resolved = resolve_address(to, LOCAL_AGENT, REGISTRY)
        except SendError as error:
            assert error.reason in SEND_FAILURE_REASONS
            assert error.reason in ("invalid-address", "membership-invalid", "unknown-agent")
            assert outcome == "ok" or error.reason != "unknown-agent"
        else:
            assert outcome == "ok" and set(resolved.remote) <= REGISTRY
    _tally(counts, "addresses", outcome)


def _address_property(examples: int) -> Any:
    @_settings(examples)
    @given(to=addresses)
    def check(counts: Any, to: Any) -> None:
        _check_address(to, counts)

    return check


def test_fuzzed_addresses(reliability_counts: Any) -> None:
    _address_property(FAST * 2)(reliability_counts)


@pytest.mark.slow
def test_fuzzed_addresses_many(reliability_counts: Any) -> None:
    _address_property(SLOW * 2)(reliability_counts)


# -- message texts ---------------------------------------------------------------------------


def _check_message_text(text: str, counts: Any) -> None:
    with time_limit(LIMIT, "parse_message_text"):
        try:
            send = parse_message_text("agent:bob", text)
        except MessageTextError as error:
            assert str(error).split(" not sent: ")[0] in (
                "message",
                "gather",
                "all_gather",
                "answer",
            )
            assert error.error_data()["reason"] == "text-invalid"
            outcome = "error"
        else:
            assert send.to == "agent:bob"
            outcome = "ok"
    _tally(counts, "message texts", outcome)


def _message_property(examples: int) -> Any:
    @_settings(examples)
    @given(text=message_texts)
    def check(counts: Any, text: str) -> None:
        _check_message_text(text, counts)

    return check


def test_fuzzed_message_texts(reliability_counts: Any) -> None:
    _message_property(FAST * 2)(reliability_counts)


@pytest.mark.slow
def test_fuzzed_message_texts_many(reliability_counts: Any) -> None:
    _message_property(SLOW * 2)(reliability_counts)


# -- host hook payloads ----------------------------------------------------------------------


def _check_hook_payload(storage: Path, event: str, text: str, counts: Any) -> None:
    with time_limit(LIMIT, f"harness-audit hook {event}"):
        cli = run_cli(["--storage", str(storage), "hook", event, "--preset", "safety"], stdin=text)
    if cli.code == 0:
        answer = json.loads(cli.stdout)
        if event == "pre":
            # no decision (the host's own rules apply), ask (a warning) or deny; never allow
            decision = answer.get("hookSpecificOutput", {}).get("permissionDecision")
            assert decision in (None, "ask", "deny"), answer
        else:
            assert answer == {"suppressOutput": True}
        outcome = "ok"
    else:
        # pre refuses the call (exit 2: the host blocks it); post records a fault (exit 1: the
        # tool has run, the host goes on)
        assert cli.code == (2 if event == "pre" else 1), cli
        assert cli.stdout == ""
        assert_clean_error(cli.stderr)
        outcome = "error"
    _tally(counts, "hook payloads", outcome)


def _hook_property(examples: int) -> Any:
    @_settings(examples)
    @given(text=hook_payloads)
    def check(storage: Path, event: str, counts: Any, text: str) -> None:
        _check_hook_payload(storage, event, text, counts)

    return check


@pytest.mark.slow
@pytest.mark.parametrize("event", ["pre", "post"])
def test_fuzzed_hook_payloads(tmp_path: Path, event: str, reliability_counts: Any) -> None:
    _hook_property(FAST // 2)(tmp_path, event, reliability_counts)
    report = run_cli(["--storage", str(tmp_path), "audit", "verify"])
    assert report.code == 0, report  # every chain the hooks wrote verifies


@pytest.mark.slow
@pytest.mark.parametrize("event", ["pre", "post"])
def test_fuzzed_hook_payloads_many(tmp_path: Path, event: str, reliability_counts: Any) -> None:
    _hook_property(SLOW // 2)(tmp_path, event, reliability_counts)
    assert run_cli(["--storage", str(tmp_path), "audit", "verify"]).code == 0
