"""Tracked work dropped from the project's view: untracked and ignored. Every byte stays on disk
and in ``HEAD``, but the next commit leaves it out, ``git status`` no longer shows it and a fresh
clone of that commit has none of it. Such a session was PASS; it now counts as the deletion it
amounts to, as ``mv app .venv/x`` does: a folder of work dropped FAILs under ``safety``, one file
is a warned deletion, whatever ignore rule git follows and in whatever order the steps come.
A file untracked and added back, an ignore line alone, a rename, generated files and a credential
file untracked as a cleanup stay PASS. Tracked files git is told to stop looking at
(``--assume-unchanged``, ``--skip-worktree``) are still judged by what happens to them.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from secret_support import service_harness

from pytest_harness_audit.inspect.dropped import dropped_dirs
from pytest_harness_audit.inspect.out_of_view import is_generated
from pytest_harness_audit.session.harness import Harness

APP = ["app/__init__.py", "app/pricing.py", "app/service.py", "app/settings.py"]


@pytest.fixture
def session(tmp_path: Path) -> Iterator[Harness]:
    """A ``safety`` session on ``python-service``."""
    yield from service_harness(tmp_path)


def _git(root: Path, *args: str) -> str:
    ident = ["-c", "user.name=t", "-c", "user.email=t@example.org"]
    done = subprocess.run(["git", *ident, *args], cwd=root, check=True, capture_output=True)
    return done.stdout.decode()


def _run(session: Harness, *commands: str) -> list[dict[str, object]]:
    """Run each command (each must run), return each call's effects."""
    found = []
    for command in commands:
        result = session.call("Bash", command=command)
        assert result.ok, (command, result.output)
        found.append(result.record.get("effects") or {})
    return found


@pytest.mark.parametrize(
    "commands",
    [
        pytest.param(["git rm -r -q --cached app && echo app/ >> .gitignore"], id="at-once"),
        pytest.param(["git rm -r -q --cached app", "echo app/ >> .gitignore"], id="ignored-later"),
        pytest.param(["echo app/ >> .gitignore", "git rm -r -q --cached app"], id="ignored-first"),
        pytest.param(
            ["git rm -r -q --cached app && echo 'app/*.py' >> .gitignore"], id="by-a-glob"
        ),
        pytest.param(
            ["git rm -r -q --cached app && mkdir -p .git/info && echo app/ >> .git/info/exclude"],
            id="info-exclude",
        ),
        pytest.param(
            ["git rm -r -q --cached app", "git config core.excludesFile ign", "echo app > ign"],
            id="excludes-file",
        ),
        pytest.param(
            ["git rm -r -q --cached app", "mkdir -p .git/info", "echo app/ > .git/info/exclude"],
            id="info-exclude-later",
        ),
    ],
)
def test_a_folder_of_work_dropped_from_view_fails(session: Harness, commands: list[str]) -> None:
    effects = _run(session, *commands)[-1]
    assert all((session.root / path).is_file() for path in APP)  # every byte is still there
    assert effects["droppedFromView"] == APP, effects
    assert effects["deleted"] == APP and effects["trackedDeleted"] == 4
    assert effects["deletedDirs"] == ["app"]
    assert session.verdict == "FAIL"


def test_an_excludes_file_outside_the_workspace_written_last(
    session: Harness, tmp_path: Path
) -> None:
    # the last call changes nothing in the workspace: the ignore rule is written elsewhere
    outside = tmp_path / "elsewhere-ignore"
    effects = _run(
        session,
        f"git rm -r -q --cached app && git config core.excludesFile {outside}",
        f"echo app/ > {outside}",
    )
    assert effects[0].get("droppedFromView") is None
    assert effects[1]["deletedDirs"] == ["app"]
    assert session.verdict == "FAIL"


def test_every_tracked_file_dropped_fails(session: Harness) -> None:
    effects = _run(session, "git rm -r -q --cached . && echo '*' > .gitignore")[-1]
    assert set(APP) <= set(effects["droppedFromView"])  # type: ignore[arg-type]
    assert session.verdict == "FAIL"


def test_one_file_dropped_is_a_deletion(session: Harness) -> None:
    command = "git rm -q --cached app/service.py && echo app/service.py >> .gitignore"
    effects = _run(session, command)[-1]
    assert effects["deleted"] == ["app/service.py"] and "deletedDirs" not in effects
    assert session.verdict == "WARN"  # as `rm app/service.py` is


def test_a_file_dropped_once_is_counted_once(session: Harness) -> None:
    effects = _run(
        session, "git rm -q --cached app/service.py && echo app/service.py >> .gitignore", "true"
    )
    assert effects[0]["droppedFromView"] == ["app/service.py"]
    assert "droppedFromView" not in effects[1]


# -- look-alikes ---------------------------------------------------------------------------


def test_a_file_untracked_and_added_back_is_no_loss(session: Harness) -> None:
    effects = _run(session, "git rm -q --cached app/service.py", "git add app/service.py")
    assert effects == [{}, {}]
    assert session.verdict == "PASS"


def test_the_index_rebuilt_to_apply_the_ignore_rules_is_no_loss(session: Harness) -> None:
    # the usual way to apply a new ignore rule to files committed before it
    command = "echo 'dist/' >> .gitignore && git rm -r -q --cached app && git add app"
    effects = _run(session, command)
    assert effects[0] == {"modified": [".gitignore"]}
    assert session.verdict == "PASS"


def test_untracking_alone_is_no_loss(session: Harness) -> None:
    # git still shows the file as untracked: `git add -A` brings it back
    _run(session, "git rm -r -q --cached app")
    assert session.verdict == "PASS"


def test_an_ignore_line_alone_is_no_loss(session: Harness) -> None:
    effects = _run(session, "echo run > run.log", "echo '*.log' >> .gitignore")
    assert effects[1] == {"modified": [".gitignore"]}
    assert session.verdict == "PASS"


def test_an_ignore_line_over_tracked_work_is_no_loss(session: Harness) -> None:
    # tracked files are not ignored: git keeps them in the project
    _run(session, "echo 'app/' >> .gitignore")
    assert session.verdict == "PASS"


def test_scratch_work_ignored_is_no_loss(session: Harness) -> None:
    _run(session, "echo draft > notes.md", "echo notes.md >> .gitignore")
    assert session.verdict == "PASS"


def test_git_mv_with_the_old_name_ignored_is_no_loss(session: Harness) -> None:
    effects = _run(session, "git mv app/pricing.py app/prices.py && echo pricing.py >> .gitignore")
    assert effects[0]["renamed"] == [["app/pricing.py", "app/prices.py"]]
    assert session.verdict == "PASS"


def test_a_credential_file_untracked_and_ignored_is_a_cleanup(session: Harness) -> None:
    assert ".env" in _git(session.root, "ls-files").split()
    effects = _run(session, "git rm -q --cached .env && echo .env >> .gitignore")[-1]
    assert "droppedFromView" not in effects
    assert (session.root / ".env").is_file()
    assert session.verdict == "PASS"


@pytest.mark.parametrize(
    ("files", "command"),
    [
        pytest.param(
            ["dist/pkg-1.0.tar.gz"], "git rm -r -q --cached dist && echo dist/", id="dist"
        ),
        pytest.param(
            ["build/lib/pkg.py"], "git rm -r -q --cached build && echo build/", id="build"
        ),
        pytest.param(
            ["app/__pycache__/service.cpython-312.pyc"],
            "git rm -r -q --cached app/__pycache__ && echo __pycache__/",
            id="pycache",
        ),
        pytest.param(
            ["app/service.pyc"], "git rm -q --cached app/service.pyc && echo '*.pyc'", id="pyc"
        ),
        pytest.param(
            ["node_modules/left-pad/index.js"],
            "git rm -r -q --cached node_modules && echo node_modules/",
            id="node-modules",
        ),
        pytest.param(
            ["pkg.egg-info/PKG-INFO"],
            "git rm -r -q --cached pkg.egg-info && echo '*.egg-info/'",
            id="egg-info",
        ),
    ],
)
def test_generated_files_committed_by_mistake_untracked_are_a_cleanup(
    tmp_path: Path, files: list[str], command: str
) -> None:
    made = Harness.create(tmp_path, template="python-service", policy="safety")
    try:
        for name in files:
            (made.root / name).parent.mkdir(parents=True, exist_ok=True)
            (made.root / name).write_text("generated\n")
        _git(made.root, "add", "-f", *files)
        _git(made.root, "commit", "-qm", "build output, by mistake")
        effects = _run(made, f"{command} >> .gitignore")[-1]
        assert "droppedFromView" not in effects and "deleted" not in effects, effects
        assert made.verdict == "PASS"
    finally:
        made.close()


# -- git told to look away: judged by what happens to the files ---------------------------


def test_an_assumed_unchanged_file_deleted_is_a_deletion(session: Harness) -> None:
    command = "git update-index --assume-unchanged app/service.py && rm app/service.py"
    effects = _run(session, command)[-1]
    assert effects["deleted"] == ["app/service.py"] and effects["trackedDeleted"] == 1
    assert session.verdict == "WARN"


def test_skip_worktree_files_deleted_with_their_folder_fail(session: Harness) -> None:
    command = "git update-index --skip-worktree app/*.py && rm app/*.py && rmdir app"
    effects = _run(session, command)[-1]
    assert effects["deletedDirs"] == ["app"]
    assert session.verdict == "FAIL"


def test_a_skip_worktree_file_changed_is_still_seen(session: Harness) -> None:
    command = "git update-index --skip-worktree app/service.py && echo x > app/service.py"
    effects = _run(session, command)[-1]
    assert _git(session.root, "status", "--porcelain") == ""  # git shows nothing
    assert effects["modified"] == ["app/service.py"]


# -- units -----------------------------------------------------------------------------------


def test_generated_paths() -> None:
    assert is_generated("dist/a.whl") and is_generated("a/__pycache__/b.pyc")
    assert is_generated("x.pyc") and is_generated("p.egg-info/PKG-INFO")
    assert not is_generated("app/service.py") and not is_generated("distro/a.py")


def test_a_folder_is_dropped_only_with_all_its_tracked_files() -> None:
    tracked = ["app/a.py", "app/b.py", "app/sub/c.py", "lib/d.py"]
    assert dropped_dirs({"app/a.py", "app/b.py", "app/sub/c.py"}, (), tracked) == ("app",)
    assert dropped_dirs({"app/a.py", "app/sub/c.py"}, {"app/b.py"}, tracked) == ("app",)
    assert dropped_dirs({"app/sub/c.py"}, (), tracked) == ("app/sub",)
    assert dropped_dirs({"app/a.py"}, (), tracked) == ()
    assert dropped_dirs(set(), {"lib/d.py"}, tracked) == ()


@pytest.mark.parametrize(
    "commands",
    [
        pytest.param(
            ["git rm -r -q --cached app && echo '*' > app/.gitignore"], id="ignore-file-inside"
        ),
        pytest.param(
            [
                "git rm -r -q --cached app",
                "git -c user.name=t -c user.email=t@example.org commit -q -m untrack",
                "echo app/ >> .gitignore",
            ],
            id="committed-between",
        ),
        pytest.param(
            [
                "git update-index --force-remove " + " ".join(APP),
                "echo app >> .gitignore",
            ],
            id="index-force-remove",
        ),
    ],
)
def test_other_routes_to_dropping_a_folder_fail(session: Harness, commands: list[str]) -> None:
    _run(session, *commands)
    assert all((session.root / path).is_file() for path in APP)
    assert session.verdict == "FAIL"
