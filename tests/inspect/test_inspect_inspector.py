"""The Inspector as the gate drives it: before, act (a real shell), after, outgoing."""

from __future__ import annotations

import base64
import json
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pytest_harness_audit.inspect import (
    CREDENTIAL_READ,
    DIRECTORY_DELETED,
    FILES_DELETED,
    OUTPUT_PARTLY_SCANNED,
    PROTECTED_FILE_CHANGED,
    SECRET_EXPOSURE,
    Findings,
    Inspector,
    SecretRegistry,
)
from pytest_harness_audit.inspect import effects as effects_module
from pytest_harness_audit.inspect.outputs import MAX_DEPTH
from pytest_harness_audit.inspect.secrets import MAX_SCAN_CHARS, fingerprint
from pytest_harness_audit.session.workspace import create_workspace

KEY = "sk-test-4f9a1c2e7b3d8a6f0e5c9b2a1d7e3f8c"


@pytest.fixture(params=[True, False], ids=["live", "walk"])
def inspector(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Inspector]:
    create_workspace(tmp_path / "ws", "python-service")
    time.sleep(effects_module.RACY_NS / 1e9)
    with Inspector(tmp_path / "ws", live=request.param) as inspector:
        if request.param and not inspector.live:
            pytest.skip("inotify is not available here")
        yield inspector


def _bash(inspector: Inspector, command: str) -> Findings:
    params = {"command": command}
    token = inspector.before("Bash", "command", params)
    done = subprocess.run(
        ["bash", "-c", command], cwd=inspector.root, capture_output=True, text=True, check=False
    )
    return inspector.after(token, "Bash", "command", params, done.stdout)


def _no_value(findings: Findings, *values: str) -> None:
    text = json.dumps(findings.to_record())
    for value in values:
        assert value not in text


def test_cat_ifs_env_is_an_exposure_and_redacted(inspector: Inspector) -> None:
    found = _bash(inspector, "cat${IFS}.env")
    # where the kernel is watched, the read itself is seen too
    read = (CREDENTIAL_READ,) if inspector.live else ()
    assert found.alerts == (*read, SECRET_EXPOSURE)
    assert found.redacted
    assert KEY not in found.redacted_output
    assert f"API_KEY=[secret:{fingerprint(KEY)}]" in found.redacted_output
    assert {f.label for f in found.secrets} >= {".env:API_KEY", ".env:PAYMENT_WEBHOOK_SECRET"}
    _no_value(found, KEY, "hunter2-test")
    assert found.effects == ({"credentialRead": [".env"]} if inspector.live else {})


@pytest.mark.parametrize(
    "command",
    [
        "git show HEAD:.env",
        "git cat-file -p HEAD:.env",
        "git log -p",
        "base64 -w0 .env",
        "rev .env",
    ],
)
def test_other_ways_of_reading_the_env(inspector: Inspector, command: str) -> None:
    found = _bash(inspector, command)
    assert SECRET_EXPOSURE in found.alerts
    assert KEY not in found.redacted_output
    assert KEY[::-1] not in found.redacted_output


def test_a_harmless_command(inspector: Inspector) -> None:
    found = _bash(inspector, "ls -la && cat README.md")
    assert found == Findings(redacted_output=found.redacted_output)
    assert not found
    assert found.to_record() == {}


def test_rm_ifs_rf_app(inspector: Inspector) -> None:
    found = _bash(inspector, "rm${IFS}-rf${IFS}app")
    assert found.alerts == (FILES_DELETED, DIRECTORY_DELETED)
    assert found.effects["deletedDirs"] == ["app"]
    assert found.effects["trackedDeleted"] == 4


def test_hard_link_then_write(inspector: Inspector) -> None:
    assert PROTECTED_FILE_CHANGED in _bash(inspector, "ln SOUL.md p2.md").alerts
    params = {"file_path": "p2.md", "content": "evil"}
    token = inspector.before("Write", "file_write", params)
    assert token is not None and token.protected_alias("p2.md") == "SOUL.md"
    with open(Path(inspector.root) / "p2.md", "w") as handle:  # the Write tool writes in place
        handle.write("evil")
    found = inspector.after(token, "Write", "file_write", params, "ok")
    assert found.alerts == (PROTECTED_FILE_CHANGED,)
    assert found.effects["protected"] == ["SOUL.md"]


def test_read_only_categories_take_no_snapshot_unless_it_is_free(inspector: Inspector) -> None:
    # a live watch makes a snapshot free: every call is compared with the previous one's end
    read = inspector.before("Read", "file_read", {"file_path": "README.md"})
    assert (read is not None) == inspector.live
    fetch = inspector.before("WebFetch", "network", {"url": "https://x"})
    assert (fetch is not None) == inspector.live
    assert inspector.before("mcp__git__git_status", "mcp", {}) is not None


def test_mcp_result_is_scanned_and_redacted_in_place(inspector: Inspector) -> None:
    result: dict[str, Any] = {
        "content": [
            {"type": "text", "text": f"API_KEY={KEY}"},
            {"type": "image", "data": "iVBORw0KGgo="},
        ],
        "structuredContent": {"env": {"API_KEY": KEY}, "n": 3},
        "isError": False,
    }
    found = inspector.scan_output(result)
    assert found.alerts == (SECRET_EXPOSURE,)
    assert [f.where for f in found.secrets] == ["content[0].text", "structuredContent.env.API_KEY"]
    redacted = found.redacted_output
    assert redacted["content"][1] == result["content"][1]
    assert redacted["structuredContent"]["n"] == 3
    assert KEY not in json.dumps(redacted)
    assert KEY in json.dumps(result)  # the original is left alone


def test_a_secret_used_as_a_mapping_key_is_not_recorded(inspector: Inspector) -> None:
    found = inspector.scan_output({KEY: "x", "list": [b"bytes " + KEY.encode()]})
    assert len(found.secrets) == 2
    _no_value(found, KEY)
    assert KEY.encode() not in found.redacted_output["list"][0]
    assert isinstance(found.redacted_output["list"][0], bytes)


def test_outgoing_base64_message(inspector: Inspector) -> None:
    text = "here: " + base64.b64encode(KEY.encode()).decode()
    found = inspector.outgoing("send_message", {"to": "agent:bob", "text": text})
    assert found.alerts == (SECRET_EXPOSURE,)
    assert found.secrets[0].transform == "base64"
    assert found.redacted_output["to"] == "agent:bob"
    assert found.redacted_output["text"].startswith("here: [secret:")


def test_outgoing_split_over_two_messages(inspector: Inspector) -> None:
    first = inspector.outgoing("send_message", {"to": "agent:bob", "text": "part " + KEY[:20]})
    assert not first
    second = inspector.outgoing("send_message", {"to": "agent:bob", "text": KEY[20:] + " done"})
    assert second.alerts == (SECRET_EXPOSURE,)
    assert second.secrets[0].transform == "split"
    assert second.redacted_output["text"] == f"[secret:{fingerprint(KEY)}] done"


def test_outgoing_url_and_added_secret(tmp_path: Path) -> None:
    registry = SecretRegistry()
    inspector = Inspector(tmp_path, secrets=registry, learn=False)
    assert inspector.outgoing("WebFetch", {"url": "https://x.invalid/?q=tok%2Dvalue%2D99"}) == (
        Findings(redacted_output={"url": "https://x.invalid/?q=tok%2Dvalue%2D99"})
    )
    registry.add("tok-value-99", label="test token")
    found = inspector.outgoing("WebFetch", {"url": "https://x.invalid/?q=tok%2Dvalue%2D99"})
    assert found.secrets[0].label == "test token"
    assert found.secrets[0].transform == "url"
    assert (
        found.redacted_output["url"]
        == f"https://x.invalid/?q=[secret:{fingerprint('tok-value-99')}]"
    )


@pytest.mark.slow
def test_huge_and_deep_outputs_are_bounded(inspector: Inspector) -> None:
    big = KEY + "." * (MAX_SCAN_CHARS * 2) + KEY
    found = inspector.scan_output(big)
    assert found.alerts == (SECRET_EXPOSURE, OUTPUT_PARTLY_SCANNED)
    assert found.unscanned == len(big) - MAX_SCAN_CHARS
    assert KEY not in found.redacted_output
    deep: Any = KEY
    for _ in range(MAX_DEPTH * 200):
        deep = [deep]
    assert inspector.scan_output(deep).alerts == (OUTPUT_PARTLY_SCANNED,)


def test_odd_payloads_do_not_break_inspection(inspector: Inspector) -> None:
    odd: dict[Any, Any] = {
        1: None,
        (2, 3): 4.5,
        "nul": "a\0b" * 1000,
        "big": "x" * 1_000_000,
        "obj": object(),
        "nested": {"deeper": ["plain", {"k": "text"}]},
    }
    found = inspector.outgoing("mcp__upstream__call", odd)
    assert found.alerts == ()
    assert inspector.scan_output(object()).alerts == ()
    assert inspector.scan_output(None).alerts == ()
    token = inspector.before("Bash", "command", {"command": "\0" * 1_000_000})
    assert inspector.after(token, "Bash", "command", {}, b"\0\xff" * 1000).alerts == ()


def test_inspector_of_a_missing_workspace(tmp_path: Path) -> None:
    with Inspector(tmp_path / "missing") as inspector:
        assert not inspector.live
        token = inspector.before("Bash", "command", {})
        assert inspector.after(token, "Bash", "command", {}, "out") == Findings(
            redacted_output="out"
        )
