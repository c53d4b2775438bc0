"""`harness-audit audit …`: output, --json and exit codes."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest

from pytest_harness_audit.audit import AuditChain
from pytest_harness_audit.cli import main


@pytest.fixture
def populated(storage, make_draft):
    """Two sessions: 'alpha' (3 calls: ok, blocked, error) and 'beta' (1 call)."""
    with AuditChain(storage, "alpha") as chain:
        chain.append(make_draft(0))
        chain.append(
            make_draft(
                1,
                tool="Read",
                category="file_read",
                target="/p/.env",
                constraints=("policy:deny", "rule:deny-secret-files"),
                status="blocked",
                error_message="[policy] Secret file access denied",
            )
        )
        chain.append(
            make_draft(
                2,
                tool="WebFetch",
                category="network",
                target="https://example.org",
                constraints=("policy:warn", "rule:warn-network"),
                status="error",
                error_message="timeout",
            )
        )
    time.sleep(0.002)  # beta's record is the store's newest (timestamps are to the millisecond)
    with AuditChain(storage, "beta") as chain:
        chain.append(make_draft(0))
    return storage


def run(storage, *args, capsys):
    code = main(["--storage", str(storage), "audit", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_summary(populated, capsys):
    code, out, _ = run(populated, "summary", capsys=capsys)
    assert code == 0
    assert out.count("Session: web4:session:") == 2
    assert "(alpha)" in out and "Audit records: 3" in out and "Chain valid: true" in out
    assert 'Tools: {"Bash": 1, "Read": 1, "WebFetch": 1}' in out
    code, out, _ = run(populated, "summary", "--json", capsys=capsys)
    sessions = json.loads(out)["sessions"]
    assert [s["session_id"] for s in sessions] == ["alpha", "beta"]
    assert sessions[0]["categories"]["network"] == 1


def test_verify_all_valid_exits_zero(populated, capsys):
    code, out, _ = run(populated, "verify", capsys=capsys)
    assert code == 0
    assert out.splitlines() == ["alpha: VALID (3 records)", "beta: VALID (1 record)"]


def test_verify_one_session_detail(populated, capsys):
    code, out, _ = run(populated, "verify", "alpha", capsys=capsys)
    assert code == 0
    assert "Chain valid: true" in out and "Records: 3" in out
    assert "Anchor: current (3 records)" in out


def test_verify_invalid_exits_one_and_names_the_failure(populated, capsys, read_lines):
    path = populated / "audit" / "alpha.jsonl"
    lines = read_lines(path)
    lines[1] = lines[1].replace(b"Secret", b"Public")
    path.write_bytes(b"".join(line + b"\n" for line in lines))
    record_id = json.loads(lines[2])["recordId"]
    code, out, _ = run(populated, "verify", capsys=capsys)
    assert code == 1
    assert f"alpha: INVALID (3 records) — record 2 ({record_id}): link_mismatch" in out
    assert "beta: VALID" in out
    code, out, _ = run(populated, "verify", "alpha", capsys=capsys)
    assert code == 1
    assert "Chain valid: false" in out
    assert f"First failure: record 2 ({record_id}): link_mismatch" in out
    assert "  expected: " in out and "  found:    " in out
    code, out, _ = run(populated, "verify", "alpha", "--json", capsys=capsys)
    data = json.loads(out)
    assert code == 1 and data["valid"] is False
    assert data["sessions"][0]["reason"] == "link_mismatch"
    assert data["sessions"][0]["first_bad_index"] == 2


def test_verify_usage_errors_exit_two(populated, capsys):
    code, _, err = run(populated, "verify", "nope", capsys=capsys)
    assert code == 2 and "no audit session 'nope'" in err
    with pytest.raises(SystemExit) as exit_info:
        main(["--storage", str(populated), "audit", "verify", "a", "b"])
    assert exit_info.value.code == 2


def test_verify_empty_storage(tmp_path, capsys):
    code, out, _ = run(tmp_path / "none", "verify", capsys=capsys)
    assert code == 0 and "No audit sessions" in out


def test_last(populated, capsys):
    code, out, _ = run(populated, "last", "2", "--session", "alpha", capsys=capsys)
    lines = out.splitlines()
    assert code == 0 and len(lines) == 2
    assert lines[0].endswith(" Read → /p/.env [blocked]")
    assert lines[1].endswith(" WebFetch → https://example.org [error]")
    code, out, _ = run(populated, "last", capsys=capsys)
    assert "Session: alpha" in out and "Session: beta" in out
    code, out, _ = run(populated, "last", "1", "--json", capsys=capsys)
    data = json.loads(out)
    # N counts across sessions: the one newest record of the store (beta's, written last)
    assert [(s["sessionId"], len(s["records"])) for s in data["sessions"]] == [("beta", 1)]
    code, out, _ = run(populated, "last", "3", capsys=capsys)
    lines = out.splitlines()
    assert lines[0] == "Session: beta" and lines[2] == "Session: alpha", out
    assert len([line for line in lines if line.startswith("  ")]) == 3
    assert lines[-1].endswith(" WebFetch → https://example.org [error]")


def test_query(populated, capsys):
    code, out, _ = run(populated, "query", "--status", "blocked", capsys=capsys)
    assert code == 0
    assert "Session: alpha (1 result)" in out
    assert "Read [file_read] → /p/.env [blocked]" in out
    assert "— [policy] Secret file access denied" in out
    code, out, _ = run(populated, "query", "--target", "**/.env", "--json", capsys=capsys)
    assert json.loads(out)["total"] == 1
    code, out, _ = run(populated, "query", "--tool", "Nope", capsys=capsys)
    assert out.strip() == "No matching audit records found."
    code, _, err = run(populated, "query", "--since", "soon", capsys=capsys)
    assert code == 2 and "--since" in err


def test_query_limit_counts_across_sessions_newest_first(populated, capsys):
    code, out, _ = run(populated, "query", "--limit", "2", "--json", capsys=capsys)
    data = json.loads(out)
    assert code == 0 and data["total"] == 2
    assert [(s["sessionId"], s["count"]) for s in data["sessions"]] == [("beta", 1), ("alpha", 1)]
    assert data["sessions"][1]["records"][0]["tool"] == "WebFetch"
    code, out, _ = run(populated, "query", "--limit", "0", capsys=capsys)
    assert out.strip() == "No matching audit records found."


def test_report(populated, capsys):
    code, out, _ = run(populated, "report", capsys=capsys)
    assert code == 0
    assert "Total records: 4" in out and "Warned: 1" in out and "Blocked: 1" in out
    code, out, _ = run(populated, "report", "--session", "beta", "--json", capsys=capsys)
    assert json.loads(out)["total_records"] == 1


def test_repair_removes_a_torn_tail_and_records_it(populated, capsys):
    path = populated / "audit" / "alpha.jsonl"
    intact = path.read_bytes()
    torn = b'{"recordId":"audit:00000000","r6Re'
    path.write_bytes(intact + torn)
    assert run(populated, "verify", "alpha", capsys=capsys)[0] == 1
    code, out, _ = run(populated, "repair", "alpha", capsys=capsys)
    assert code == 0 and f"Removed a torn final line ({len(torn)} bytes" in out
    assert path.read_bytes() == intact
    assert run(populated, "verify", "alpha", capsys=capsys)[0] == 0
    session = json.loads((populated / "sessions" / "alpha.json").read_text())
    assert session["repairs"][0]["removedBytes"] == len(torn)
    code, out, _ = run(populated, "repair", "alpha", capsys=capsys)
    assert code == 0 and "Nothing to repair" in out


def test_repair_refuses_anything_else(populated, capsys, read_lines):
    path = populated / "audit" / "alpha.jsonl"
    lines = read_lines(path)
    path.write_bytes(b"".join(line + b"\n" for line in lines[:-1]))  # truncated
    before = path.read_bytes()
    code, out, _ = run(populated, "repair", "alpha", capsys=capsys)
    assert code == 1 and "Refusing to repair" in out and "truncated" in out
    assert path.read_bytes() == before
    path.write_bytes(before[:-20])  # truncated *and* torn: removing the tail is not enough
    code, out, _ = run(populated, "repair", "alpha", "--json", capsys=capsys)
    assert code == 1 and json.loads(out)["repaired"] is False
    assert run(populated, "repair", "ghost", capsys=capsys)[0] == 2


def test_storage_defaults_to_environment(populated, capsys, monkeypatch):
    monkeypatch.setenv("HARNESS_AUDIT_DIR", str(populated))
    assert main(["audit", "verify"]) == 0
    assert "alpha: VALID" in capsys.readouterr().out


def test_entry_point_exit_codes(populated, read_lines):
    command = [sys.executable, "-m", "pytest_harness_audit", "--storage", str(populated), "audit"]
    ok = subprocess.run([*command, "verify"], capture_output=True, text=True, timeout=60)
    assert ok.returncode == 0, ok.stderr
    path = populated / "audit" / "beta.jsonl"
    path.write_bytes(path.read_bytes().replace(b"echo step 0", b"echo step 9"))
    bad = subprocess.run([*command, "verify", "beta"], capture_output=True, text=True, timeout=60)
    assert bad.returncode == 1 and "anchor_mismatch" in bad.stdout


def test_hook_door_stores_outside_the_project_by_default(tmp_path, monkeypatch, capsys):
    import io
    from pathlib import Path

    from pytest_harness_audit.audit import list_sessions
    from pytest_harness_audit.audit.storage import project_id

    payload = Path(__file__).parents[1] / "hooks" / "payloads" / "read-source.json"
    project = tmp_path / "myproj"
    project.mkdir()
    monkeypatch.chdir(project)
    monkeypatch.delenv("HARNESS_AUDIT_DIR", raising=False)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.setattr("sys.stdin", io.StringIO(payload.read_text()))
    assert main(["hook", "pre", "--preset", "safety"]) == 0
    capsys.readouterr()
    store = tmp_path / "state" / "harness-audit" / project_id(project)
    assert store.name.startswith("myproj-")
    assert list_sessions(store)
    assert list(project.iterdir()) == []  # nothing written into the project
    assert (store / ".gitignore").read_text().strip().endswith("*")


def test_storage_may_follow_the_command(populated, capsys):
    code = main(["audit", "verify", "alpha", "--storage", str(populated)])
    out, _ = capsys.readouterr()
    assert code == 0 and "Records: 3" in out
