"""What `hook pre` prints, exactly, per decision and answer mode (`--approve-allowed`,
`--warn ask|pass`, `$HARNESS_AUDIT_HOOK_WARN`), and 20 pre/post pairs of one session at once."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from hook_processes import answer_of, as_post, call_records, hook, host_env, recorded

from pytest_harness_audit.audit.records import display_target

WARNING = "[web4-policy] Network access flagged by safety preset"
ASK = {
    "hookSpecificOutput": {
        "hookEventName": "PreToolUse",
        "permissionDecision": "ask",
        "permissionDecisionReason": WARNING,
        "additionalContext": WARNING,
    }
}
PASS = {
    "hookSpecificOutput": {"hookEventName": "PreToolUse", "additionalContext": WARNING},
    "systemMessage": WARNING,
}
APPROVED = {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow"}}
DENIED = {
    "hookSpecificOutput": {
        "hookEventName": "PreToolUse",
        "permissionDecision": "deny",
        "permissionDecisionReason": "[blocked] [web4-policy] Credential/secret file access "
        "denied by safety preset",
    }
}


@pytest.mark.parametrize(
    ("payload", "options", "env", "expected"),
    [
        ("read-source.json", (), {}, {}),  # allowed: the host's own permission flow decides
        ("read-source.json", ("--approve-allowed",), {}, APPROVED),
        ("webfetch.json", (), {}, ASK),
        ("webfetch.json", ("--approve-allowed",), {}, ASK),  # only allowed calls are approved
        ("webfetch.json", ("--warn", "pass"), {}, PASS),
        ("webfetch.json", (), {"HARNESS_AUDIT_HOOK_WARN": "pass"}, PASS),
        ("webfetch.json", ("--warn", "ask"), {"HARNESS_AUDIT_HOOK_WARN": "pass"}, ASK),
        ("read-secret.json", ("--approve-allowed", "--warn", "pass"), {}, DENIED),
    ],
    ids=[
        "allow",
        "allow-approved",
        "warn-ask",
        "warn-not-approved",
        "warn-pass",
        "warn-pass-from-env",
        "flag-over-env",
        "deny-in-any-mode",
    ],
)
def test_pre_prints_exactly_the_host_fields(
    payload: str,
    options: tuple[str, ...],
    env: dict[str, str],
    expected: dict[str, Any],
    tmp_path: Path,
) -> None:
    pre = recorded(payload, tmp_path)
    code, out, err = hook(tmp_path / "store", "pre", pre, *options, env=host_env(**env))
    assert (code, err) == (0, "")
    assert answer_of(out) == expected


@pytest.mark.parametrize(
    ("options", "env", "message"),
    [
        (("--warn", "maybe"), {}, "warn mode must be 'ask' or 'pass', got 'maybe'"),
        ((), {"HARNESS_AUDIT_HOOK_WARN": "yes"}, "warn mode must be 'ask' or 'pass', got 'yes'"),
        (("--snapshot-limit", "0"), {}, "snapshot limit must be a positive number, got 0"),
    ],
    ids=["bad-flag", "bad-env", "bad-limit"],
)
def test_a_bad_answer_mode_refuses_the_call_in_one_line(
    options: tuple[str, ...], env: dict[str, str], message: str, tmp_path: Path
) -> None:
    pre = recorded("read-source.json", tmp_path)
    code, out, err = hook(tmp_path / "store", "pre", pre, *options, env=host_env(**env))
    assert (code, out) == (2, "")  # exit 2: the host blocks the call
    assert err == f"harness-audit: error: hook pre: {message}\n"


def _pair(storage: Path, cwd: Path, number: int) -> tuple[dict[str, Any], dict[str, Any]]:
    pre = recorded("bash-ls.json", cwd, session_id="host-parallel")
    pre["tool_use_id"] = f"toolu_p{number:02d}"
    if number % 2:
        pre.update(tool_name="Read", tool_input={"file_path": str(cwd / f"f{number:02d}.txt")})
    else:
        pre["tool_input"] = {"command": f"ls d{number:02d}"}
    code, out, err = hook(storage, "pre", pre)
    post = as_post(pre, {"stdout": "", "stderr": "", "interrupted": False})
    done = hook(storage, "post", post)
    return {"code": code, "out": out, "err": err}, {"code": done[0], "out": done[1]}


@pytest.mark.slow
def test_twenty_concurrent_pairs_are_each_recorded_once(tmp_path: Path) -> None:
    storage, cwd = tmp_path / "store", tmp_path / "demo"
    cwd.mkdir()
    (cwd / "README.md").write_text("# demo\n")
    with ThreadPoolExecutor(max_workers=20) as pool:
        answers = list(pool.map(lambda n: _pair(storage, cwd, n), range(20)))
    for pre, post in answers:
        assert (pre["code"], answer_of(pre["out"]), pre["err"]) == (0, {}, "")
        assert (post["code"], json.loads(post["out"])) == (0, {"suppressOutput": True})
    records = call_records(storage, "host-parallel")
    targets = Counter(str(record["target"]) for record in records)
    full = {(str(cwd / f"f{n:02d}.txt") if n % 2 else f"ls d{n:02d}") for n in range(20)}
    # records keep a target's first 80 characters: long paths may share their display form
    wanted = Counter(display_target(target) for target in full)
    assert targets == wanted and len(records) == 20
    assert all(record["result"]["status"] == "success" for record in records)
    assert all("effects" not in record and "judged" not in record for record in records)
    verified = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest_harness_audit",
            "--storage",
            str(storage),
            "audit",
            "verify",
            "host-parallel",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env=host_env(),
    )
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert not list((storage / "pending").rglob("*.json"))
    assert not list((storage / "pending").rglob("*.tmp"))
