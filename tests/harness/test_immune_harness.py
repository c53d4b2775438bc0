"""Immune escalation through the harness: records, blocking, scopes, lift, replay, CLI."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_harness_audit.audit.verify import verify_chain
from pytest_harness_audit.cli import main as cli
from pytest_harness_audit.policy import Policy
from pytest_harness_audit.session.harness import Harness

pytest_plugins = ["pytester"]


def immune_policy(scope: str = "session", **triggers: Any) -> Policy:
    return Policy.from_dict(
        {
            "defaultPolicy": "allow",
            "rules": [
                {
                    "id": "deny-secrets",
                    "name": "no secrets",
                    "priority": 1,
                    "decision": "deny",
                    "match": {"targetPatterns": ["**/secret*"]},
                },
                {
                    "id": "warn-net",
                    "name": "net",
                    "priority": 2,
                    "decision": "warn",
                    "match": {"categories": ["network"]},
                },
            ],
            "immune": {
                "window": {"calls": 20},
                "triggers": triggers or {"enforced_deny": 2},
                "thresholds": {"notice": 2, "quarantine": 4},
                "quarantine_scope": scope,
            },
        }
    )


def make(tmp_path: Path, policy: Policy, **kwargs: Any) -> Harness:
    harness = Harness.create(tmp_path, template="empty", policy=policy, session_id="s", **kwargs)
    (harness.root / "notes.txt").write_text("hello\n")
    return harness


def test_notice_then_quarantine_blocks_before_running(tmp_path: Path) -> None:
    harness = make(tmp_path, immune_policy())
    harness.call("Read", file_path="secret1")
    assert harness.immune_level == "notice"
    harness.call("Read", file_path="secret2")
    assert harness.immune_level == "quarantine"
    blocked = harness.call("Write", file_path="out.txt", content="x")
    assert blocked.blocked
    assert blocked.error_message.startswith("[blocked] [web4-immune] quarantined: ")
    assert not (harness.root / "out.txt").exists()
    record = harness.calls(tool="Write")[0]
    assert record.quarantined and record.status == "blocked"
    levels = [e.raw["immune"]["level"] for e in harness.escalations]
    assert levels == ["notice", "quarantine"]
    assert harness.escalations[1].raw["immune"]["evidence"]
    assert verify_chain(harness.storage_dir, "s").valid
    assert harness.verdict == "FAIL"


@pytest.mark.parametrize(
    ("triggers", "calls"),
    [
        ({"warn": 1}, [("WebFetch", {"url": "https://a"})] * 4),
        ({"credential_access": 2}, [("Read", {"file_path": ".env"})] * 2),
        ({"memory_write": 2}, [("Write", {"file_path": "MEMORY.md", "content": "x"})] * 2),
        (
            {"repeated_failure": {"weight": 2, "count": 2}},
            [("Read", {"file_path": "missing.txt"})] * 3,
        ),
        (
            {
                "flows": [
                    {
                        "id": "exfil",
                        "first": {"alerts": ["credential_access"]},
                        "then": {"categories": ["network"]},
                        "weight": 5,
                    }
                ]
            },
            [("Read", {"file_path": ".env"}), ("WebFetch", {"url": "https://x"})],
        ),
    ],
    ids=["warn", "credential", "memory", "repeated-failure", "flow"],
)
def test_each_trigger_reaches_quarantine(
    tmp_path: Path, triggers: dict[str, Any], calls: list[tuple[str, dict[str, Any]]]
) -> None:
    harness = make(tmp_path, immune_policy(**triggers))
    (harness.root / ".env").write_text("K=v\n")
    for tool, params in calls:
        harness.call(tool, **params)
    assert harness.immune_level == "quarantine", harness.records
    name = next(iter(triggers))
    trigger = harness.escalations[-1].raw["immune"]["trigger"]
    assert trigger == ("flow:exfil" if name == "flows" else name)


def test_dry_run_deny_trigger(tmp_path: Path) -> None:
    policy = Policy.from_dict({**immune_policy(dry_run_deny=2).to_dict(), "enforce": False})
    harness = make(tmp_path, policy)
    harness.call("Read", file_path="secret-a")
    harness.call("Read", file_path="secret-b")
    assert harness.immune_level == "quarantine"


def test_category_scope_blocks_only_that_category(tmp_path: Path) -> None:
    harness = make(tmp_path, immune_policy("category"))
    harness.call("Read", file_path="secret1")
    harness.call("Read", file_path="secret2")
    assert harness.call("Read", file_path="notes.txt").blocked
    assert harness.call("Write", file_path="new.txt", content="ok").ok


def test_tool_scope_blocks_only_that_tool(tmp_path: Path) -> None:
    harness = make(tmp_path, immune_policy("tool"))
    harness.call("Grep", pattern="x", path="secret1")
    harness.call("Grep", pattern="x", path="secret2")
    assert harness.call("Grep", pattern="hello").blocked
    assert harness.call("Read", file_path="notes.txt").ok


def test_window_expiry_forgets_old_evidence(tmp_path: Path) -> None:
    now = [1000.0]
    policy = Policy.from_dict(
        {
            **immune_policy().to_dict(),
            "immune": {
                "window": {"seconds": 60},
                "triggers": {"enforced_deny": 2},
                "thresholds": {"notice": 2, "quarantine": 4},
            },
        }
    )
    harness = make(tmp_path, policy, clock=lambda: now[0])
    harness.call("Read", file_path="secret1")
    now[0] += 120
    harness.call("Read", file_path="secret2")
    assert harness.immune_level == "notice"  # the first denial left the window


def test_lift_is_recorded_and_the_ladder_can_climb_again(tmp_path: Path) -> None:
    harness = make(tmp_path, immune_policy())
    for name in ("secret1", "secret2"):
        harness.call("Read", file_path=name)
    lift = harness.lift(reason="reviewed: test fixture probing")
    assert lift.kind == "lift" and lift.raw["immune"]["reason"] == "reviewed: test fixture probing"
    assert harness.immune_level == "observe"
    assert harness.call("Read", file_path="notes.txt").ok
    for name in ("secret3", "secret4"):
        harness.call("Read", file_path=name)
    assert harness.immune_level == "quarantine"
    kinds = [r.kind for r in harness.records if r.kind != "call"]
    assert kinds == ["escalation", "escalation", "lift", "escalation", "escalation"]
    with pytest.raises(Exception, match="reason"):
        harness.lift(reason=" ")
    assert verify_chain(harness.storage_dir, "s").valid


def test_a_second_gate_on_the_session_sees_the_quarantine(tmp_path: Path) -> None:
    harness = make(tmp_path, immune_policy())
    for name in ("secret1", "secret2"):
        harness.call("Read", file_path=name)
    other = Harness(
        harness.root, storage_dir=harness.storage_dir, policy=harness.policy, session_id="s"
    )
    assert other.immune_level == "quarantine"
    assert other.call("Read", file_path="notes.txt").blocked
    other.lift(reason="cleared from elsewhere")
    assert harness.call("Read", file_path="notes.txt").ok  # synced from the chain


def test_cli_status_and_lift(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    harness = make(tmp_path, immune_policy())
    for name in ("secret1", "secret2"):
        harness.call("Read", file_path=name)
    storage = str(harness.storage_dir)
    assert cli(["--storage", storage, "immune", "status", "s"]) == 0
    out = capsys.readouterr().out
    assert "level: quarantine" in out and "history:" in out
    assert cli(["--storage", storage, "immune", "lift", "s", "--reason", "ok now"]) == 0
    assert "Lifted quarantine of session s: ok now" in capsys.readouterr().out
    assert cli(["--storage", storage, "immune", "status", "s", "--json"]) == 0
    status = json.loads(capsys.readouterr().out)[0]
    assert status["level"] == "observe" and status["history"][-1]["reason"] == "ok now"
    assert cli(["--storage", storage, "immune", "lift", "s", "--reason", "x"]) == 1
    assert cli(["--storage", storage, "immune", "status", "nope"]) == 2
    assert "no session 'nope'" in capsys.readouterr().err


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.lists(st.sampled_from(["bad", "good", "lift"]), max_size=14),
    st.sampled_from(["session", "category", "tool"]),
)
def test_level_never_drops_without_a_lift_and_quarantine_never_runs(
    tmp_path_factory: pytest.TempPathFactory, actions: list[str], scope: str
) -> None:
    ran: list[str] = []
    harness = make(tmp_path_factory.mktemp("p"), immune_policy(scope))
    harness.register_tool(
        "probe", lambda params: ran.append(params["path"]) or "ok", category="file_read"
    )
    rank = {"observe": 0, "notice": 1, "quarantine": 2}
    level = "observe"
    try:  # forty examples: each session's watchers closed with it
        for index, action in enumerate(actions):
            if action == "lift":
                if harness.immune_level != "observe":
                    harness.lift(reason="property test")
                    level = "observe"
                continue
            path = f"secret{index}" if action == "bad" else f"fine{index}"
            quarantine = harness.gate.ladder.check("probe", "file_read")
            before = len(ran)
            result = harness.call("probe", path=path)
            if quarantine is not None:
                assert result.blocked and len(ran) == before
            assert rank[harness.immune_level] >= rank[level]
            level = harness.immune_level
    finally:
        harness.close()
