"""``RecordingProxySession.stdio_command``: its files are written at start; reading it writes
nothing."""

from __future__ import annotations

import json
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
