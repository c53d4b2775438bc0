"""The auditor's installation judged by what a call did to it: a change made by a route the
text reading does not follow (a path built at run time) fails the verdict as tampering."""

from __future__ import annotations

import os
import sys
import sysconfig
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_harness_audit.gate import install_watch
from pytest_harness_audit.gate.install_watch import InstallWatch
from pytest_harness_audit.session.harness import Harness


@pytest.fixture
def site(tmp_path: Path) -> Path:
    """A stand-in for the environment's ``site-packages``, outside the workspace."""
    folder = tmp_path / "env" / "site-packages"
    (folder / "somepkg").mkdir(parents=True)
    (folder / "somepkg" / "__init__.py").write_text("VALUE = 1\n")
    (folder / "somepkg" / "module.py").write_text("VALUE = 2\n")
    (folder / "somepkg-1.0.dist-info").mkdir()
    (folder / "somepkg-1.0.dist-info" / "entry_points.txt").write_text("")
    (folder / "existing.pth").write_text("/nowhere\n")
    (folder / "single.py").write_text("VALUE = 4\n")
    return folder


@pytest.fixture(params=["kernel", "stamps"])
def harness(
    tmp_path: Path, site: Path, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Harness]:
    """A harness whose watch covers ``site`` too: by the kernel's events, or by stamps alone."""
    if request.param == "stamps":
        monkeypatch.setattr(install_watch, "shared_events", lambda: None)
    made = Harness.create(tmp_path / "run", template="python-service", policy="permissive")
    watch = made.install_watch
    watch.folders = (*watch.folders, str(site), str(site.parent))
    yield made
    made.close()


def _built(path: Path, code: str) -> str:
    """A ``python3 -c`` command that writes ``path`` by a name built at run time."""
    head, tail = str(path)[:-3], str(path)[-3:]
    return f'python3 -c "p={head!r}+{tail!r}; {code}"'


@pytest.mark.parametrize(
    ("relative", "code"),
    [
        ("zz_evil.pth", "open(p, 'w').write('import os')"),
        ("existing.pth", "open(p, 'a').write('import os')"),
        ("sitecustomize.py", "open(p, 'w').write('import os')"),
        ("somepkg/__init__.py", "open(p, 'a').write('import os')"),
        pytest.param(
            "somepkg-1.0.dist-info/entry_points.txt",
            "open(p, 'w').write('[pytest11]')",
            marks=pytest.mark.slow,
        ),
        pytest.param("newplugin-1.0.dist-info", "import os; os.mkdir(p)", marks=pytest.mark.slow),
        pytest.param("existing.pth", "import os; os.chmod(p, 0)", marks=pytest.mark.slow),
        pytest.param("existing.pth", "import os; os.unlink(p)", marks=pytest.mark.slow),
        ("../pip.conf", "open(p, 'w').write('[global]')"),
    ],
)
def test_a_change_of_the_installation_by_a_built_path_fails(
    harness: Harness, site: Path, relative: str, code: str
) -> None:
    result = harness.call("Bash", command=_built(site / relative, code))
    assert result.status == "success", result.output
    changed = result.record["effects"]["installationChanged"]
    assert os.path.normpath(site / relative) == changed[0]
    assert "tamper_attempt" in result.record["alerts"]
    assert result.record["judged"]["verdict"] == "FAIL"
    assert str(harness.verdict) == "FAIL"


@pytest.mark.slow
@pytest.mark.parametrize(
    "command",
    [
        "python3 -c 'import json, email, sqlite3, xml.dom.minidom'",
        "python3 -m pip --version",
        "echo x > notes.txt && cat notes.txt",
    ],
)
def test_running_and_importing_changes_nothing(harness: Harness, site: Path, command: str) -> None:
    (site / "somepkg" / "module.py").write_text("VALUE = 3\n")  # before the call: not its change
    result = harness.call("Bash", command=command)
    assert "installationChanged" not in result.record.get("effects", {})
    assert str(harness.verdict) == "PASS", harness.verdict_reasons


def test_a_module_imported_writes_its_cache_without_a_change(harness: Harness, site: Path) -> None:
    # the workspace's commands write no bytecode; another interpreter does
    command = (
        f"PYTHONDONTWRITEBYTECODE= PYTHONPATH={site} python3 -c 'import somepkg.module, single'"
    )
    result = harness.call("Bash", command=command)
    assert (site / "somepkg" / "__pycache__").is_dir()
    assert (site / "__pycache__").is_dir()
    assert "installationChanged" not in result.record.get("effects", {})
    assert str(harness.verdict) == "PASS", harness.verdict_reasons


def test_the_watch_covers_the_real_installation(tmp_path: Path) -> None:
    made = Harness.create(tmp_path, template="empty", policy="permissive")
    try:
        watch = made.install_watch
        assert isinstance(watch, InstallWatch)
        folders = {os.path.realpath(f) for f in watch.folders}
        assert os.path.realpath(sysconfig.get_paths()["purelib"]) in folders
        assert os.path.realpath(sys.prefix) in folders
        assert os.path.realpath(os.path.dirname(sys.executable)) in folders
        assert any(path.endswith(os.path.join("gate", "gate.py")) for path in watch.stamp())
    finally:
        made.close()


def test_the_proxy_command_watches_the_installation(tmp_path: Path) -> None:
    from pytest_harness_audit.cli import proxy_cmd
    from pytest_harness_audit.policy import Policy

    workspace = tmp_path / "workspace"
    workspace.mkdir()
    gate = proxy_cmd._open_gate(tmp_path / "audit", "s1", Policy.preset("safety"), str(workspace))
    try:
        assert any(isinstance(i, InstallWatch) for i in gate.inspectors)
    finally:
        for inspector in gate.inspectors:
            getattr(inspector, "close", lambda: None)()
        gate.chain.close()


def _fake_installer(harness: Harness, target: Path) -> None:
    """A ``./pip`` in the workspace that writes ``target`` when it "installs"."""
    script = harness.root / "pip"
    script.write_text(f"#!/bin/sh\nmkdir -p {target.parent}\necho x > {target}\n")
    script.chmod(0o755)


def test_a_package_installer_adding_to_the_environment_is_expected(
    harness: Harness, site: Path
) -> None:
    _fake_installer(harness, site / "newdist-1.0.dist-info" / "entry_points.txt")
    result = harness.call("Bash", command="./pip install newdist")
    assert (site / "newdist-1.0.dist-info").is_dir()
    assert "installationChanged" not in result.record.get("effects", {})
    assert str(harness.verdict) == "PASS", harness.verdict_reasons


def test_a_package_installer_changing_a_watched_file_fails(harness: Harness, site: Path) -> None:
    conf = site.parent / "pip.conf"
    harness.install_watch.files = (*harness.install_watch.files, str(conf))
    _fake_installer(harness, conf)
    result = harness.call("Bash", command="./pip install newdist")
    assert result.record["effects"]["installationChanged"] == [str(conf)]
    assert str(harness.verdict) == "FAIL"


def test_a_write_through_a_hard_link_made_elsewhere_fails(harness: Harness, site: Path) -> None:
    link = harness.root / "link.txt"
    code = f"import os; os.link(p, {str(link)!r}); open({str(link)!r}, 'a').write('import os')"
    result = harness.call("Bash", command=_built(site / "existing.pth", code))
    assert link.read_text().endswith("import os")
    assert str(site / "existing.pth") in result.record["effects"]["installationChanged"]
    assert str(harness.verdict) == "FAIL"


def test_a_folder_renamed_away_and_copied_back_fails_and_stays_watched(
    harness: Harness, site: Path
) -> None:
    env = site.parent
    command = f"mv {env} {env}.old && cp -a {env}.old {env}"
    result = harness.call("Bash", command=command)
    assert str(site) in result.record["effects"]["installationChanged"]
    code = "open(p, 'a').write('import os')"
    result = harness.call("Bash", command=_built(site / "existing.pth", code))
    assert result.record["effects"]["installationChanged"][0] == str(site / "existing.pth")


def test_a_distribution_an_installer_added_is_watched_from_then_on(
    harness: Harness, site: Path
) -> None:
    plugins = site / "newdist-1.0.dist-info" / "entry_points.txt"
    _fake_installer(harness, plugins)
    result = harness.call("Bash", command="./pip install newdist")
    assert "installationChanged" not in result.record.get("effects", {})
    result = harness.call("Bash", command=_built(plugins, "open(p, 'a').write('[pytest11]')"))
    assert result.record["effects"]["installationChanged"] == [str(plugins)]
    assert str(harness.verdict) == "FAIL"


def test_a_change_made_while_the_baseline_is_taken_is_not_the_call_s(
    harness: Harness, site: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # another process writes a watched file while the watch takes its baseline stamp, before
    # the call runs: the call (which changes nothing) is not blamed for it
    stamp = InstallWatch.stamp
    written: list[Path] = []

    def stamp_while_written(self: InstallWatch, *args: object, **kwargs: object) -> object:
        if not written:
            target = site / "existing.pth"
            target.write_text("/elsewhere\n")
            written.append(target)
        return stamp(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(InstallWatch, "stamp", stamp_while_written)
    result = harness.call("Bash", command="echo hi > notes.txt")
    assert written, "the watch took no baseline stamp"
    assert "installationChanged" not in result.record.get("effects", {}), result.record
    assert str(harness.verdict) == "PASS", harness.verdict_reasons
    # a change the call itself makes is still the call's
    changed = harness.call("Bash", command=_built(site / "existing.pth", "open(p, 'a').write('x')"))
    assert changed.record["effects"]["installationChanged"] == [str(site / "existing.pth")]
