"""`harness-audit view`: what it writes, what it prints, and its one-line errors."""

from __future__ import annotations

from pathlib import Path

import pytest
from viewer_support import Dom, StoredRun

from pytest_harness_audit.cli import main


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    try:
        code = main(list(argv))
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 2
    out, err = capsys.readouterr()
    return code, out, err


def test_every_session_by_default(
    stored_run: StoredRun, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "report.html"
    code, stdout, stderr = run(capsys, "--storage", str(stored_run.storage), "view", "-o", str(out))
    assert (code, stderr) == (0, "")
    assert stdout == (
        f"Wrote {out}: 3 sessions, 13 calls, 2 denied; 1 PASS, 0 WARN, 2 FAIL; 0 invalid chains\n"
    )
    rows = Dom(out.read_text(encoding="utf-8")).find("tr", cls="session-row")
    assert sorted(r.attrs["data-session"] for r in rows) == sorted(stored_run.sessions)


def test_chosen_sessions_in_the_order_given_storage_after_the_command(
    stored_run: StoredRun, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "sub" / "one.html"
    code, stdout, _ = run(
        capsys,
        "view",
        "quarantined",
        "clean",
        "quarantined",
        "--storage",
        str(stored_run.storage),
        "-o",
        str(out),
        "--title",
        "nightly <run>",
    )
    assert code == 0 and "2 sessions" in stdout
    page = out.read_text(encoding="utf-8")
    rows = Dom(page).find("tr", cls="session-row")
    assert [r.attrs["data-session"] for r in rows] == ["quarantined", "clean"]
    assert "<title>nightly &lt;run&gt;</title>" in page


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["view", "nope"], "harness-audit: error: no audit session 'nope' in {storage}\n"),
        (["view", "../clean"], "harness-audit: error: no audit session '../clean' in {storage}\n"),
    ],
)
def test_unknown_session_is_one_line_exit_2(
    stored_run: StoredRun,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    argv: list[str],
    message: str,
) -> None:
    out = tmp_path / "x.html"
    code, stdout, stderr = run(capsys, "--storage", str(stored_run.storage), *argv, "-o", str(out))
    assert (code, stdout) == (2, "")
    assert stderr == message.format(storage=stored_run.storage)
    assert not out.exists()


def test_missing_and_empty_storage_are_one_line_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "nothing"
    code, _, stderr = run(capsys, "view", "--storage", str(missing))
    assert code == 2
    assert stderr == (
        f"harness-audit: error: no audit storage at {missing} "
        "(give --storage DIR or set HARNESS_AUDIT_DIR)\n"
    )
    empty = tmp_path / "empty"
    empty.mkdir()
    code, _, stderr = run(capsys, "view", "--storage", str(empty))
    assert code == 2
    assert stderr == f"harness-audit: error: no audit sessions in {empty}: nothing to view\n"


def test_unwritable_output_is_one_line_exit_2(
    stored_run: StoredRun, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    target = blocker / "view.html"
    code, _, stderr = run(capsys, "view", "--storage", str(stored_run.storage), "-o", str(target))
    assert code == 2
    assert stderr.startswith(f"harness-audit: error: cannot write the session view to {target}: ")
    assert stderr.count("\n") == 1


def test_default_output_name_in_the_current_directory(
    stored_run: StoredRun,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HARNESS_AUDIT_DIR", str(stored_run.storage))
    code, stdout, _ = run(capsys, "view", "clean")
    assert code == 0 and stdout.startswith("Wrote harness-audit-view.html: 1 session, 2 calls")
    assert (tmp_path / "harness-audit-view.html").is_file()


def test_since_keeps_the_sessions_of_a_recent_run_oldest_first(
    stored_run: StoredRun, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import json
    import shutil

    storage = tmp_path / "store"
    shutil.copytree(stored_run.storage, storage)
    files = {s: storage / "sessions" / f"{s}.json" for s in stored_run.sessions}
    data = {s: json.loads(f.read_text(encoding="utf-8")) for s, f in files.items()}
    data["clean"]["createdAt"] = "2099-01-01T00:00:00.000Z"  # the newest, though first by name
    data["denied"]["createdAt"] = "2098-01-01T00:00:00.000Z"
    for session, path in files.items():
        path.write_text(json.dumps(data[session]), encoding="utf-8")
    out = tmp_path / "view.html"

    def shown(*argv: str) -> list[str]:
        code, _, stderr = run(capsys, "view", "--storage", str(storage), "-o", str(out), *argv)
        assert (code, stderr) == (0, "")
        rows = Dom(out.read_text(encoding="utf-8")).find("tr", cls="session-row")
        return [r.attrs["data-session"] for r in rows]

    assert shown() == ["quarantined", "denied", "clean"]
    assert shown("--since", "2098-01-01T00:00:00Z") == ["denied", "clean"]
    assert shown("--since", "1d") == ["quarantined", "denied", "clean"]
    code, _, stderr = run(capsys, "view", "--storage", str(storage), "--since", "2100-01-01")
    assert code == 2
    assert stderr == (
        f"harness-audit: error: no audit sessions started since 2100-01-01 in {storage}: "
        "nothing to view\n"
    )
    code, _, stderr = run(capsys, "view", "--storage", str(storage), "--since", "soon")
    assert code == 2 and stderr.count("\n") == 1 and "--since: 'soon'" in stderr


def test_last_run_keeps_the_newest_recorded_runs_sessions(
    stored_run: StoredRun, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import os
    import shutil

    from pytest_harness_audit.audit.prune import record_run

    storage = tmp_path / "store"
    shutil.copytree(stored_run.storage, storage)
    out = tmp_path / "view.html"
    code, _, stderr = run(capsys, "view", "--last-run", "--storage", str(storage), "-o", str(out))
    assert code == 2
    assert stderr == (
        f"harness-audit: error: no pytest run recorded in {storage} "
        "(pytest --harness-audit records each run)\n"
    )
    older = record_run(storage, ["clean"])
    assert older is not None
    os.utime(older, (1, 1))
    for path in storage.rglob("clean.*"):
        os.utime(path, (1, 1))
    record_run(storage, ["quarantined", "denied"])
    code, stdout, _ = run(capsys, "view", "--last-run", "--storage", str(storage), "-o", str(out))
    assert code == 0 and "2 sessions" in stdout
    rows = Dom(out.read_text(encoding="utf-8")).find("tr", cls="session-row")
    assert [r.attrs["data-session"] for r in rows] == ["denied", "quarantined"]
    code, _, stderr = run(capsys, "view", "clean", "--last-run", "--storage", str(storage))
    assert code == 2
    assert stderr == "harness-audit: error: give SESSION names or --last-run, not both\n"
