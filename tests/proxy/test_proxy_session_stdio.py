"""``RecordingProxySession.stdio_command``: its files are written at start; reading it writes
nothing."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_harness_audit.errors import UsageError
from pytest_harness_audit.session.harness import Harness

SERVER = str(Path(__file__).with_name("upstream_server.py"))


@pytest.fixture
def harness(tmp_path: Path) -> Iterator[Harness]:
    session = Harness.create(tmp_path)
    yield session
    session.close()


def test_the_files_exist_once_started_and_reading_writes_nothing(harness: Harness) -> None:
    proxy = harness.start_proxy()
    policy_file = harness.storage_dir / "policies" / f"{harness.session_id}.proxy-policy.json"
    assert json.loads(policy_file.read_text(encoding="utf-8")) == harness.policy.to_dict()
    policy_file.unlink()
    argv = proxy.stdio_command
    assert not policy_file.exists()
    assert str(policy_file) in argv
    assert "--workspace" in argv
    assert proxy.stdio_command == argv
    argv.append("changed")
    assert proxy.stdio_command != argv


def test_an_mcp_servers_mapping_is_written_beside_it(harness: Harness) -> None:
    servers = {"mcpServers": {"echo": {"command": sys.executable, "args": [SERVER]}}}
    proxy = harness.start_proxy(servers)
    config = harness.storage_dir / "policies" / f"{harness.session_id}.mcp.json"
    assert json.loads(config.read_text(encoding="utf-8")) == servers
    assert str(config) in proxy.stdio_command


def test_several_upstream_argvs_have_no_stdio_command(harness: Harness) -> None:
    asking = str(Path(SERVER).with_name("asking_server.py"))
    proxy = harness.start_proxy([[sys.executable, SERVER], [sys.executable, asking]])
    with pytest.raises(UsageError, match="one upstream argv or an mcpServers mapping"):
        _ = proxy.stdio_command
    assert not (
        harness.storage_dir / "policies" / f"{harness.session_id}.proxy-policy.json"
    ).exists()


def _run(argv: list[str]) -> subprocess.CompletedProcess[str]:
    # the client's first message never comes: a proxy that serves would wait for it
    return subprocess.run(argv, input="", capture_output=True, text=True, timeout=60)


def test_a_policy_file_changed_after_start_is_refused_and_fails_the_session(
    harness: Harness,
) -> None:
    proxy = harness.start_proxy()
    policy_file = harness.storage_dir / "policies" / f"{harness.session_id}.proxy-policy.json"
    # what a call's inline code could do, by a name it builds at run time
    opened = {**json.loads(policy_file.read_text(encoding="utf-8")), "defaultPolicy": "allow"}
    opened["rules"] = []
    policy_file.write_text(json.dumps(opened), encoding="utf-8")
    done = _run(proxy.stdio_command)
    assert done.returncode == 2, done.stderr
    assert "the policy changed since it was written for this proxy" in done.stderr
    assert "Traceback" not in done.stderr
    assert harness.verdict == "FAIL"
    assert any(r.code == "policy-changed" for r in harness.verdict_reasons)


@pytest.mark.slow
def test_a_config_changed_after_start_starts_no_server(harness: Harness, tmp_path: Path) -> None:
    servers = {"mcpServers": {"echo": {"command": sys.executable, "args": [SERVER]}}}
    proxy = harness.start_proxy(servers)
    config = harness.storage_dir / "policies" / f"{harness.session_id}.mcp.json"
    ran = tmp_path / "ran-ungated"
    swapped = {"mcpServers": {"echo": {"command": "touch", "args": [str(ran)]}}}
    config.write_text(json.dumps(swapped), encoding="utf-8")
    done = _run(proxy.stdio_command)
    assert done.returncode == 2, done.stderr
    assert "the MCP config changed since it was written for this proxy" in done.stderr
    assert not ran.exists()
    assert harness.verdict == "FAIL"


@pytest.mark.slow
def test_the_files_as_written_are_served(harness: Harness) -> None:
    done = _run(harness.start_proxy().stdio_command)
    assert "changed since it was written" not in done.stderr
    assert harness.verdict == "PASS"
