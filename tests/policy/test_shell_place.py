"""Where a command runs: ``cd``, ``pushd`` and ``-C DIR`` move the relative paths it names
(:mod:`pytest_harness_audit.policy.shell.place`), so a path written from another directory is
judged as the file it opens — the audit store above the workspace included."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_harness_audit.gate.store_guard import StoreGuard
from pytest_harness_audit.policy import Policy
from pytest_harness_audit.policy.shell import read_command
from pytest_harness_audit.policy.shell.place import MAX_ANCESTORS, Place
from pytest_harness_audit.policy.targets import all_targets
from pytest_harness_audit.session import workspace as workspaces

SAFETY = Policy.preset("safety")


@pytest.fixture(scope="module")
def layout(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A workspace and, beside it, an audit store with one chain (as ``Harness.create`` lays
    them out)."""
    base = tmp_path_factory.mktemp("place")
    root = base / "workspace"
    workspaces.create_workspace(root, "python-service")
    store = base / "audit"
    (store / "audit").mkdir(parents=True)
    (store / "audit" / "s1.jsonl").write_text("{}\n", encoding="utf-8")
    return root, store


def _paths(command: str, root: str | None = None) -> set[str]:
    reading = read_command(command, root)
    return {*reading.reads, *reading.writes, *reading.deletes, *reading.destroys}


@pytest.mark.parametrize(
    ("command", "path"),
    [
        ("cd .. && echo x >> audit/s.jsonl", "../audit/s.jsonl"),
        ("cd ..; : > audit/s.jsonl", "../audit/s.jsonl"),
        ("cd ..; cd audit; echo x >> s.jsonl", "../audit/s.jsonl"),
        ("pushd .. >/dev/null; touch audit/x", "../audit/x"),
        ("(cd .. && cat audit/x)", "../audit/x"),
        ("bash -c 'cd .. && cat audit/x'", "../audit/x"),
        ("cd /tmp && cat x", "/tmp/x"),
        ("cd app && cat ../.env", ".env"),
        ("cd app && cat settings.py", "app/settings.py"),
        ("d=..; cd $d && cat audit/x", "../audit/x"),
        ("cd $(echo ..) && cat audit/x", "../audit/x"),
        ("cd app; cd -; cd ..; cat audit/x", "../audit/x"),
        ("git -C .. add audit", "../audit"),
        ("tar -C .. -cf - audit", "../audit"),
        ("env --chdir=.. cat audit/x", "../audit/x"),
        ("make -C .. -f audit/x", "../audit/x"),
    ],
)
def test_a_path_after_cd_is_read_from_where_the_shell_is(command: str, path: str) -> None:
    found = {p.removeprefix("./") for p in _paths(command)}
    normal = {str(Path(p)) if not p.startswith("/") else p for p in found}
    assert path in found | normal


@pytest.mark.parametrize(
    "command",
    [
        'cd "$(dirname "$X")" && echo x >> audit/s.jsonl',
        "cd $OLDPWD && echo x >> audit/s.jsonl",
        'cd "$(git rev-parse --show-toplevel)"/.. && echo x >> audit/s.jsonl',
    ],
)
def test_after_an_unknown_cd_a_path_is_read_from_every_directory_above(command: str) -> None:
    found = _paths(command, "/a/b/c/workspace")
    assert {"audit/s.jsonl", "../audit/s.jsonl", "../../audit/s.jsonl"} <= found
    assert "../../../../audit/s.jsonl" in found  # up to the file-system root
    assert "../../../../../audit/s.jsonl" not in found


def test_the_ancestor_forms_are_bounded() -> None:
    found = _paths('cd "$X" && cat a', "/" + "/".join("d" * 20))
    assert max(p.count("../") for p in found) == MAX_ANCESTORS
    many = " ".join(f"f{i}" for i in range(2000))
    reading = read_command(f'cd "$X" && cat {many}', "/w")
    assert len(reading.reads) <= 2000 + 256 * MAX_ANCESTORS


def test_without_cd_nothing_is_added() -> None:
    assert _paths("cat app/settings.py && echo x > out.txt") == {"app/settings.py", "out.txt"}
    assert _paths("cd app && cat /etc/hostname") == {"/etc/hostname"}


def test_popd_returns_and_a_bare_cd_goes_home() -> None:
    place = Place()
    place.change(["pushd", ".."], [False, False])
    assert place.cwd == ".."
    place.change(["popd"], [False])
    assert (place.cwd, place.unknown) == (".", False)
    place.change(["cd", "app"], [False, False])
    place.change(["cd"], [False])
    assert place.cwd == "."  # HOME is the workspace root
    place.change(["cd", "$X"], [False, True])
    assert place.unknown and place.here is None


def test_a_glob_after_cd_lists_the_directory_moved_to(layout: tuple[Path, Path]) -> None:
    root, _ = layout
    assert "config/credentials.json" in _paths("cd app && cat ../*/*.json", str(root))
    assert "config/credentials.json" in _paths("cd config && cat *", str(root))
    # outside the workspace nothing is listed (the store guard matches such globs itself)
    assert _paths("cat ../*/*.jsonl", str(root)) == {"../*/*.jsonl"}


@pytest.mark.parametrize(
    "command",
    [
        "cd .. && echo '{}' >> audit/audit/s1.jsonl",
        "cd ..; : > audit/audit/s1.jsonl",
        "pushd .. >/dev/null; touch audit/audit/forged.jsonl",
        "(cd .. && cp /dev/null audit/audit/s1.jsonl)",
        "cd .. && chmod -R 000 audit",
        "cd .. && mv audit gone",
        'cd "$(dirname "$PWD")" && echo x >> audit/audit/s1.jsonl',
        "echo x >> ../a*/audit/*.jsonl",
        "cd .. && echo x | tee au?it/audit/*",
        "sed -i 1d ../*/audit/s1.jsonl",
        "git -C .. add audit",
        # a bare `*` where the store's folder is (or may be) names everything there
        "cd .. && rm -rf *",
        "cd .. && rm -f *",
        "cd ..; rm -rf ./*",
        "pushd ..; rm -rf *; popd",
        "pushd .. >/dev/null && chmod -R 000 * && popd",
        "cd - && rm -rf *",
        'cd "$(dirname "$PWD")" && rm -rf *',
        "cd $OLDPWD && rm -rf *",
        "(cd .. && find . -delete)",
        "cd ../audit/audit && sed -i 1d *",
        "cd ../audit && cat */*",
        'cd .. && cd / && rm -rf "$OLDPWD"',
        "cd / && rm -rf *",
    ],
)
def test_the_store_guard_sees_the_store_from_another_directory(
    layout: tuple[Path, Path], command: str
) -> None:
    root, store = layout
    guard = StoreGuard(store, str(root))
    targets = all_targets({"command": command}, str(root))
    assert guard.offending(targets, {}) is not None, targets


@pytest.mark.parametrize(
    "command",
    [
        "cd app && cat settings.py",
        "cd .. && ls",
        "cd app && cat ../README.md",
        "cd app && ls ../*",
        "cat *.py",
        "echo x > ../notes.txt",
        "cd /tmp && echo x > out.txt",
        "cat ../*/README.md",
        # a bare `*` in the workspace, or in a folder that holds no store
        "cd app && rm -rf *",
        "cd app && rm *.pyc",
        "cd .. && ls *",
        "cd tests && cat *",
        "rm -rf ./*",
        "rm -rf *",
        "cd .. && cd - && rm -rf *",
        'cd / && rm -rf "$OLDPWD"',  # the workspace itself: judged by its effects
        "cd app && cd .. && rm -f *",
    ],
)
def test_the_store_guard_leaves_other_directories_alone(
    layout: tuple[Path, Path], command: str
) -> None:
    root, store = layout
    guard = StoreGuard(store, str(root))
    assert guard.offending(all_targets({"command": command}, str(root)), {}) is None


def test_a_dotted_store_inside_the_workspace_is_not_matched_by_a_bare_star(
    layout: tuple[Path, Path],
) -> None:
    root, _ = layout
    store = root / ".harness-audit"
    (store / "audit").mkdir(parents=True, exist_ok=True)
    (store / "audit" / "s1.jsonl").write_text("{}\n", encoding="utf-8")
    guard = StoreGuard(store, str(root))
    assert guard.offending(all_targets({"command": "echo x > *"}, str(root)), {}) is None
    assert guard.offending(all_targets({"command": "echo x > .h*/a*/*"}, str(root)), {})


@pytest.mark.parametrize(
    ("command", "decision"),
    [
        ("cd app && cat ../*/*.json", "deny"),
        ("cd config && cat *", "deny"),
        ("find .. -name '*.jsonl' | xargs truncate -s0", "deny"),
        ("cd app && cat *.py", "allow"),
        ("cd .. && cat workspace/README.md", "allow"),
        ("cd app && ls ../*", "allow"),
        ("truncate -s 1M big.bin", "allow"),
    ],
)
def test_safety_reads_a_command_where_it_runs(
    layout: tuple[Path, Path], command: str, decision: str
) -> None:
    root, _ = layout
    assert SAFETY.evaluate("Bash", {"command": command}, root=str(root)).decision == decision


def test_a_bare_star_is_placed_where_the_shell_is() -> None:
    assert "../*" in _paths("cd .. && rm -rf *")
    assert "app/*" in _paths("cd app && rm -f *")
    assert {"../*", "../../*"} <= _paths('cd "$X" && rm -rf *', "/a/workspace")
    targets = all_targets({"command": "cd .. && rm -f *"})
    assert "delete:../*" in targets  # a deletion outside the workspace, for the policy's rules
    assert "destroy:../*" in all_targets({"command": "pushd ..; rm -rf *; popd"})


def test_oldpwd_is_where_the_last_cd_left() -> None:
    assert "/w/ws" in _paths('cd / && rm -rf "$OLDPWD"', "/w/ws")
    assert "/w" in _paths('cd .. && cd / && rm -rf "$OLDPWD"', "/w/ws")
    assert "/w/ws/app/x" in _paths('cd app && cd .. && cat "$OLDPWD"/x', "/w/ws")
    # before any cd, or after one the reading cannot follow, it stays unknown
    assert "$OLDPWD" in _paths('rm -rf "$OLDPWD"', "/w/ws")
    assert "$OLDPWD" in _paths('cd "$X" && cd / && rm -rf "$OLDPWD"', "/w/ws")
    place = Place()
    place.change(["cd", "$X"], [False, True])
    place.change(["cd", "/"], [False, False])
    place.change(["cd", "-"], [False, False])
    assert place.unknown  # back to where the unknown cd went
    place.change(["cd", "-"], [False, False])
    assert (place.cwd, place.unknown) == ("/", False)


def test_a_cd_home_also_reads_paths_from_the_users_home() -> None:
    assert {".local", "~/.local"} <= _paths("cd ~ && rm -rf .local")
    assert "~/.local" in _paths("cd && rm -rf .local")
    assert "~/.local/state" in _paths("cd ~ && cd .local && rm -rf state")
    assert "~/.local/state" in _paths("cd ~/.local && rm -rf state")
    assert not any(p.startswith("~") for p in _paths("cd ~ && cd /tmp && rm -rf x"))
    assert "~/../../x" in _paths("cd ~ && cd ../.. && rm -rf x")  # above the home: kept
    assert not any(p.startswith("~") for p in _paths("HOME=/h; cd ~ && rm -rf x"))
    assert "../.local" in _paths("cd ~user && rm -rf .local", "/home/me/project")  # not known


@pytest.mark.parametrize(
    "command",
    [
        "cd ~ && rm -rf .local",
        "cd && rm -rf .local",
        "cd ~ && cd .local && rm -rf state",
        "cd ~/.local/state && rm -rf *",
        "cd ~ && rm -rf .*",
        "rm -rf ~/.local",
    ],
)
def test_the_witness_folder_in_the_home_is_out_of_reach_after_cd_home(
    home_witness: tuple[Path, Path], command: str
) -> None:
    root, witness = home_witness
    guard = StoreGuard(witness, str(root))
    assert guard.offending(all_targets({"command": command}, str(root)), {}) is not None


@pytest.mark.parametrize(
    "command",
    ["cd ~ && rm -rf *", "cd ~ && rm -rf .cache", "cd ~ && rm -rf app", "cd ~ && cat README.md"],
)
def test_other_folders_of_the_home_stay_reachable(
    home_witness: tuple[Path, Path], command: str
) -> None:
    root, witness = home_witness
    guard = StoreGuard(witness, str(root))
    assert guard.offending(all_targets({"command": command}, str(root)), {}) is None


def test_a_bare_star_in_a_folder_without_the_store_is_no_tamper(tmp_path: Path) -> None:
    root = tmp_path / "workspace"
    root.mkdir()
    guard = StoreGuard("/nonexistent-harness-folder/audit", str(root))
    command = "cd /tmp && rm -rf *"
    assert guard.offending(all_targets({"command": command}, str(root)), {}) is None
    moved = "cd /nonexistent-harness-folder && rm -rf *"
    assert guard.offending(all_targets({"command": moved}, str(root)), {}) is not None


def test_oldpwd_names_a_store_inside_the_workspace(layout: tuple[Path, Path]) -> None:
    root, _ = layout
    store = root / ".harness-audit"
    (store / "audit").mkdir(parents=True, exist_ok=True)
    guard = StoreGuard(store, str(root))
    command = 'cd / && rm -rf "$OLDPWD"'
    assert guard.offending(all_targets({"command": command}, str(root)), {}) is not None


def test_an_absolute_cd_after_an_unknown_one_is_known(layout: tuple[Path, Path]) -> None:
    root, store = layout
    guard = StoreGuard(store, str(root))
    command = f'cd "$X"; cd {store}/audit && sed -i 1d *'
    assert f"{store}/audit/*" in _paths(command, str(root))
    assert guard.offending(all_targets({"command": command}, str(root)), {}) is not None


def test_a_glob_outside_the_workspace_is_not_listed_from_it(layout: tuple[Path, Path]) -> None:
    root, _ = layout
    assert _paths("cd .. && cat *", str(root)) == {"*", "../*"}
    assert "README.md" not in _paths("cd /tmp && rm -f *", str(root))
    assert "app/settings.py" in _paths("cd app && cat *", str(root))
    assert "README.md" in _paths('cd "$X" && cat *', str(root))  # it may be the workspace
