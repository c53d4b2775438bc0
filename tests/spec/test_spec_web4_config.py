"""web4-governance spec sentences of the plugin config section, one test each.

Reference config: ``{"plugins": {"web4-governance": {auditLevel, showR6Status, storagePath,
policy}}}`` — "`auditLevel` minimal|standard|verbose (default standard …), `showR6Status`,
`storagePath`, `policy {preset, defaultPolicy, enforce, rules}`".
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pytest_harness_audit.audit.storage import choose_storage
from pytest_harness_audit.errors import PolicyError
from pytest_harness_audit.policy import Policy


def plugin(**section: Any) -> dict[str, Any]:
    return {"plugins": {"web4-governance": section}}


def write(tmp_path: Path, document: dict[str, Any], name: str = "config.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


# -- the section is validated like the policy ------------------------------------------------------


def test_an_unknown_key_of_the_section_is_a_policy_error_naming_it(tmp_path: Path) -> None:
    path = write(tmp_path, plugin(auditlevel="verbose", policy={"preset": "safety"}))
    with pytest.raises(PolicyError) as refused:
        Policy.load(path)
    assert refused.value.field == "auditlevel"
    assert str(path) in str(refused.value)
    assert "unknown key 'auditlevel'" in str(refused.value)
    assert "\n" not in str(refused.value)


@pytest.mark.parametrize("key", ["AuditLevel", "show_r6_status", "storage_path", "preset"])
def test_near_miss_keys_are_refused(tmp_path: Path, key: str) -> None:
    with pytest.raises(PolicyError) as refused:
        Policy.load(write(tmp_path, plugin(**{key: "verbose"})))
    assert refused.value.field == key


@pytest.mark.parametrize("storage", ["~", "records with spaces", "/abs/path", "./rel"])
def test_benign_storage_paths_are_accepted(tmp_path: Path, storage: str) -> None:
    policy = Policy.load(write(tmp_path, plugin(storagePath=storage)))
    assert policy.storage_path is not None and policy.storage_path.is_absolute()


@pytest.mark.parametrize(
    ("section", "field", "words"),
    [
        ({"showR6Status": "yes"}, "showR6Status", "must be true or false, got 'yes'"),
        ({"showR6Status": 1}, "showR6Status", "must be true or false, got 1"),
        ({"auditLevel": "loud"}, "auditLevel", "must be one of minimal, standard, verbose"),
        ({"storagePath": 7}, "storagePath", "must be a non-empty directory path, got 7"),
        ({"storagePath": ""}, "storagePath", "must be a non-empty directory path"),
        ({"policy": {"enforce": "no"}}, "enforce", "must be true or false, got 'no'"),
    ],
)
def test_a_wrong_type_is_a_policy_error_naming_the_field(
    tmp_path: Path, section: dict[str, Any], field: str, words: str
) -> None:
    with pytest.raises(PolicyError) as refused:
        Policy.load(write(tmp_path, plugin(**section)))
    assert refused.value.field == field
    assert words in str(refused.value)


def test_the_section_settings_reach_the_policy(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        plugin(
            auditLevel="verbose",
            showR6Status=True,
            storagePath="~/audit-here",
            policy={"preset": "safety"},
        ),
    )
    policy = Policy.load(path)
    assert policy.audit_level == "verbose"
    assert policy.show_r6_status is True
    assert policy.storage_path == Path.home() / "audit-here"
    assert len(policy.rules) == len(Policy.preset("safety").rules)


def test_the_defaults(tmp_path: Path) -> None:
    policy = Policy.load(write(tmp_path, plugin(policy={"preset": "safety"})))
    assert (policy.audit_level, policy.show_r6_status, policy.storage_path) == (
        "standard",
        False,
        None,
    )


def test_a_relative_storage_path_is_relative_to_the_config_file(tmp_path: Path) -> None:
    policy = Policy.load(write(tmp_path, plugin(storagePath="records")))
    assert policy.storage_path == tmp_path / "records"


# -- storagePath precedence: CLI/env > config > default -------------------------------------------


def test_precedence_of_the_storage_directory(tmp_path: Path) -> None:
    configured = tmp_path / "configured"
    env = {"HOME": str(tmp_path), "XDG_STATE_HOME": str(tmp_path / "state")}
    assert (
        choose_storage("~/given", configured=configured, environ=env)
        == Path("~/given").expanduser()
    )
    with_env = {**env, "HARNESS_AUDIT_DIR": str(tmp_path / "env")}
    assert choose_storage(None, configured=configured, environ=with_env) == tmp_path / "env"
    assert choose_storage(None, configured=configured, environ=env) == configured
    default = choose_storage(None, configured=None, environ=env)
    assert default.is_relative_to(tmp_path / "state" / "harness-audit")


def _hook_pre(tmp_path: Path, config: Path, *extra: str, env_dir: str | None = None) -> Path:
    payload = {
        "session_id": "cfg-1",
        "hook_event_name": "PreToolUse",
        "tool_name": "Read",
        "tool_input": {"file_path": str(tmp_path / "README.md")},
        "cwd": str(tmp_path),
    }
    env = {"HOME": str(tmp_path / "home"), "PATH": "/usr/bin:/bin"}
    if env_dir is not None:
        env["HARNESS_AUDIT_DIR"] = env_dir
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest_harness_audit",
            *extra,
            "hook",
            "pre",
            "--policy",
            str(config),
        ],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return tmp_path


def _chains(directory: Path) -> list[Path]:
    return sorted(directory.rglob("*.jsonl")) if directory.exists() else []


@pytest.mark.slow
def test_the_hook_door_honours_storage_path_with_tilde(tmp_path: Path) -> None:
    config = write(tmp_path, plugin(storagePath="~/w4-audit", policy={"preset": "safety"}))
    _hook_pre(tmp_path, config)
    assert _chains(tmp_path / "home" / "w4-audit")
    assert not (tmp_path / ".harness-audit").exists()


@pytest.mark.slow
def test_the_command_line_and_the_environment_win_over_storage_path(tmp_path: Path) -> None:
    config = write(tmp_path, plugin(storagePath="~/w4-audit", policy={"preset": "safety"}))
    _hook_pre(tmp_path, config, "--storage", str(tmp_path / "cli"))
    _hook_pre(tmp_path, config, env_dir=str(tmp_path / "env"))
    assert _chains(tmp_path / "cli") and _chains(tmp_path / "env")
    assert not _chains(tmp_path / "home" / "w4-audit")
