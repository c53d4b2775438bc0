"""The kernel's watch of the auditor's installation (:mod:`.install_events`): a call that
changed nothing takes no stamp, and the watch sees what a stamp sees, with stamps taken where
the kernel's events cannot be trusted."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_harness_audit.gate import install_events, install_watch
from pytest_harness_audit.gate.install_events import InstallEvents, shared_events
from pytest_harness_audit.gate.install_watch import InstallWatch
from pytest_harness_audit.gate.seam import NO_FINDINGS, CallFindings, Outcome

pytestmark = pytest.mark.skipif(
    install_events.inotify_libc() is None, reason="the kernel's watch is Linux's"
)
DONE = Outcome("success")


@pytest.fixture
def fresh(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """A watcher of the test's own (the process's is put back afterwards)."""
    monkeypatch.setattr(install_events, "_SHARED", None)
    monkeypatch.setattr(install_events, "_REFUSED_PID", -1)
    yield
    made = install_events._SHARED
    if made is not None:
        made.close()


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A stand-in installation: a package folder and an environment's ``site-packages``."""
    (tmp_path / "pkg" / "sub").mkdir(parents=True)
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "sub" / "mod.py").write_text("VALUE = 1\n")
    site = tmp_path / "site"
    (site / "dep").mkdir(parents=True)
    (site / "dep" / "__init__.py").write_text("")
    (site / "existing.pth").write_text("/nowhere\n")
    return tmp_path


def _call(watch: InstallWatch, act: object = None, command: str = "true") -> CallFindings:
    params = {"command": command}
    token = watch.before("Bash", "command", params)
    if callable(act):
        act()
    return watch.after(token, "Bash", "command", params, DONE)


def _changed(found: CallFindings) -> list[str]:
    return list(found.effects.get("installationChanged", ()))


def test_a_quiet_call_takes_no_stamp(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    watch = InstallWatch(str(tree / "pkg"), (str(tree / "site"),), ())
    assert _call(watch) is NO_FINDINGS  # the first takes the baseline
    taken: list[int] = []
    real = InstallWatch.stamp
    monkeypatch.setattr(
        InstallWatch, "stamp", lambda self, spec=None: taken.append(1) or real(self, spec)
    )
    for _ in range(3):
        assert _call(watch) is NO_FINDINGS
    assert taken == []
    found = _call(watch, lambda: (tree / "site" / "evil.pth").write_text("import os"))
    assert _changed(found) == [str(tree / "site" / "evil.pth")]
    assert taken == []
    _call(watch)  # something changed since the baseline: it is taken again
    assert taken == [1]


def test_another_watch_s_folders_are_not_this_watch_s(tree: Path) -> None:
    (tree / "other").mkdir()
    wide = InstallWatch(str(tree / "pkg"), (str(tree / "site"),), ())
    narrow = InstallWatch(str(tree / "other"), (), ())
    wide_token = wide.before("Bash", "command", {})
    narrow_token = narrow.before("Bash", "command", {})
    (tree / "site" / "evil.pth").write_text("import os")
    assert _changed(wide.after(wide_token, "Bash", "command", {}, DONE))
    assert narrow.after(narrow_token, "Bash", "command", {}, DONE) is NO_FINDINGS


def test_the_package_s_caches_are_no_change_and_its_new_folders_are_watched(tree: Path) -> None:
    package = tree / "pkg"
    watch = InstallWatch(str(package), (), ())

    def cache() -> None:
        (package / "sub" / "__pycache__").mkdir()
        (package / "sub" / "__pycache__" / "mod.cpython-311.pyc").write_bytes(b"x")

    assert _call(watch, cache) is NO_FINDINGS
    found = _call(watch, lambda: (package / "new").mkdir())
    assert _changed(found) == [str(package / "new")]
    found = _call(watch, lambda: (package / "new" / "evil.py").write_text("import os"))
    assert _changed(found) == [str(package / "new" / "evil.py")]


def test_a_file_watched_by_name_is_seen_replaced_and_then_written(tree: Path) -> None:
    policy = tree / "elsewhere" / "policy.yaml"
    policy.parent.mkdir()
    policy.write_text("rules: []\n")
    watch = InstallWatch(str(tree / "pkg"), (), (str(policy),))
    assert _call(watch, lambda: (tree / "elsewhere" / "other.txt").write_text("x")) is NO_FINDINGS

    def replace() -> None:
        (tree / "elsewhere" / "new.yaml").write_text("rules: [x]\n")
        os.replace(tree / "elsewhere" / "new.yaml", policy)

    assert _changed(_call(watch, replace)) == [str(policy)]
    assert _changed(_call(watch, lambda: policy.write_text("rules: [y]\n"))) == [str(policy)]
    assert _changed(_call(watch, policy.unlink)) == [str(policy)]
    assert _changed(_call(watch, lambda: policy.write_text("back\n"))) == [str(policy)]


def test_a_missing_inner_file_is_seen_when_made(tree: Path) -> None:
    dist = tree / "site" / "dep-1.0.dist-info"
    dist.mkdir()
    (dist / "RECORD").write_text("")
    watch = InstallWatch(str(tree / "pkg"), (str(tree / "site"),), ())
    assert _call(watch, lambda: (dist / "RECORD").write_text("x")) is NO_FINDINGS
    found = _call(watch, lambda: (dist / "entry_points.txt").write_text("[pytest11]\n"))
    assert _changed(found) == [str(dist / "entry_points.txt")]


@pytest.mark.usefixtures("fresh")
def test_events_lost_are_judged_by_stamps(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    watch = InstallWatch(str(tree / "pkg"), (str(tree / "site"),), ())
    assert _call(watch) is NO_FINDINGS
    real = install_events.read_events
    monkeypatch.setattr(install_events, "read_events", lambda fd: [*real(fd), (-1, 0x4000, "")])
    events = shared_events()
    assert events is not None
    assert events.since(events.mark()) is None
    (tree / "site" / "before.pth").write_text("")  # before the call: not its change
    assert _call(watch) is NO_FINDINGS
    found = _call(watch, lambda: (tree / "site" / "dep" / "__init__.py").write_text("import os"))
    assert _changed(found) == [str(tree / "site" / "dep" / "__init__.py")]


@pytest.mark.usefixtures("fresh")
def test_short_of_watches_the_watch_takes_stamps(
    tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    watch = InstallWatch(str(tree / "pkg"), (str(tree / "site"),), ())
    monkeypatch.setattr(install_events, "MAX_WATCHES", 3)
    assert isinstance(watch.before("Bash", "command", {}), dict)
    assert shared_events() is None  # not tried again for every call
    found = _call(watch, lambda: (tree / "site" / "evil.pth").write_text("import os"))
    assert _changed(found) == [str(tree / "site" / "evil.pth")]


@pytest.mark.usefixtures("fresh")
def test_a_closed_watch_is_watched_no_more_and_the_others_still_are(
    tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tree / "other").mkdir()
    kept = InstallWatch(str(tree / "pkg"), (str(tree / "site"),), ())
    closed = InstallWatch(str(tree / "other"), (str(tree / "other"),), ())
    assert _call(kept) is NO_FINDINGS and _call(closed) is NO_FINDINGS
    planned: list[str] = []
    real = install_events._Plan.add

    def add(plan: install_events._Plan, spec: install_events.Spec) -> None:
        planned.append(spec[0])
        real(plan, spec)

    monkeypatch.setattr(install_events._Plan, "add", add)
    closed.close()
    closed.close()
    # a folder made in a watched folder: the watches are set again, for the open watch only
    found = _call(kept, lambda: (tree / "site" / "new").mkdir())
    assert _changed(found) == [str(tree / "site" / "new")]
    assert planned == [str(tree / "pkg")]
    # used again, a closed watch watches again
    found = _call(closed, lambda: (tree / "other" / "evil.pth").write_text("import os"))
    assert _changed(found) == [str(tree / "other" / "evil.pth")]
    assert str(tree / "other") in planned


@pytest.mark.usefixtures("fresh")
def test_one_watcher_is_made_for_the_process(monkeypatch: pytest.MonkeyPatch) -> None:
    made: list[InstallEvents | None] = []
    threads = [threading.Thread(target=lambda: made.append(shared_events())) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert made[0] is not None
    assert all(watcher is made[0] for watcher in made)


def test_without_the_kernel_s_watch_stamps_are_taken(
    tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(install_watch, "shared_events", lambda: None)
    watch = InstallWatch(str(tree / "pkg"), (str(tree / "site"),), ())
    assert isinstance(watch.before("Bash", "command", {}), dict)
    found = _call(watch, lambda: (tree / "pkg" / "sub" / "mod.py").write_text("import os"))
    assert _changed(found) == [str(tree / "pkg" / "sub" / "mod.py")]
