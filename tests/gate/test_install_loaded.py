"""What the auditor has loaded from its installation is watched however deep it lies: a module
inside another package, its bytecode, and the files every interpreter start runs. The
environment here is a throwaway one (a ``site-packages`` in the test's folder whose modules this
process imports), so the real one is never written."""

from __future__ import annotations

import ctypes
import errno
import importlib
import importlib.util
import os
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pytest_harness_audit.gate import install_events, install_watch
from pytest_harness_audit.gate.seam import NO_FINDINGS, CallFindings, Outcome
from pytest_harness_audit.session.harness import Harness

PACKAGE = "zzdeep"
STORE = f"{PACKAGE}/sub/store.py"


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A throwaway ``site-packages`` on ``sys.path`` whose ``zzdeep.sub.store`` (with its
    bytecode) and ``zzdeep.sub.plain`` (without) this process has imported."""
    folder = tmp_path / "env" / "site-packages"
    sub = folder / PACKAGE / "sub"
    sub.mkdir(parents=True)
    (folder / PACKAGE / "__init__.py").write_text("")
    (sub / "__init__.py").write_text("")
    (sub / "store.py").write_text("def append(record):\n    return record\n")
    (sub / "plain.py").write_text("VALUE = 1\n")
    (sub / "lazy.py").write_text("VALUE = 2\n")
    monkeypatch.syspath_prepend(str(folder))
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    importlib.import_module(f"{PACKAGE}.sub.store")
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    importlib.import_module(f"{PACKAGE}.sub.plain")
    assert Path(importlib.util.cache_from_source(str(sub / "store.py"))).is_file()
    assert not Path(importlib.util.cache_from_source(str(sub / "plain.py"))).exists()
    yield folder
    for name in [name for name in sys.modules if name.split(".")[0].startswith(PACKAGE)]:
        del sys.modules[name]


@pytest.fixture(params=["kernel", pytest.param("stamps", marks=pytest.mark.slow)])
def harness(
    tmp_path: Path, site: Path, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Harness]:
    """A harness whose watch covers the throwaway environment: by the kernel's events, or by
    stamps alone."""
    if request.param == "stamps":
        monkeypatch.setattr(install_watch, "shared_events", lambda: None)
    made = Harness.create(tmp_path / "run", template="empty", policy="permissive")
    watch = made.install_watch
    watch.folders = (*watch.folders, str(site), str(site.parent))
    yield made
    made.close()


def _built(path: Path, code: str) -> str:
    """A ``python3 -c`` command that acts on ``path`` by a name built at run time."""
    head, tail = str(path)[:-3], str(path)[-3:]
    return f'python3 -c "p={head!r}+{tail!r}; {code}"'


def _cache(site: Path, relative: str) -> Path:
    return Path(importlib.util.cache_from_source(str(site / relative)))


def _failed(harness: Harness, result: Any, path: Path) -> None:
    assert result.status == "success", result.output
    assert result.record["effects"]["installationChanged"][0] == str(path)
    assert "tamper_attempt" in result.record["alerts"]
    assert result.record["judged"]["verdict"] == "FAIL"
    assert str(harness.verdict) == "FAIL"


def _passed(harness: Harness, result: Any) -> None:
    assert result.status == "success", result.output
    assert "installationChanged" not in result.record.get("effects", {})
    assert str(harness.verdict) == "PASS", harness.verdict_reasons


@pytest.mark.parametrize(
    "code",
    [
        "open(p, 'a').write('import os')",
        "import os; open(p + '.new', 'w').write('import os'); os.replace(p + '.new', p)",
        "import os; os.unlink(p)",
    ],
)
def test_a_loaded_module_deep_in_a_package_changed_fails(
    harness: Harness, site: Path, code: str
) -> None:
    result = harness.call("Bash", command=_built(site / STORE, code))
    _failed(harness, result, site / STORE)


def _forged(source: str) -> str:
    """Code that writes ``p`` as bytecode Python loads unchecked (flags 1: unchecked hash)."""
    return (
        "import importlib.util, marshal; "
        f"code = marshal.dumps(compile({source!r}, 'x', 'exec')); "
        "open(p, 'wb').write(importlib.util.MAGIC_NUMBER + (1).to_bytes(4, 'little') "
        "+ bytes(8) + code)"
    )


def test_a_loaded_module_s_bytecode_replaced_fails(harness: Harness, site: Path) -> None:
    cache = _cache(site, STORE)
    result = harness.call("Bash", command=_built(cache, _forged("def append(r): return None")))
    _failed(harness, result, cache)


def test_bytecode_forged_where_a_loaded_module_had_none_fails(harness: Harness, site: Path) -> None:
    cache = _cache(site, f"{PACKAGE}/sub/plain.py")
    code = f"import os; os.makedirs({str(cache.parent)!r}, exist_ok=True); {_forged('VALUE=9')}"
    result = harness.call("Bash", command=_built(cache, code))
    _failed(harness, result, cache)


def test_bytecode_an_interpreter_writes_for_a_loaded_module_is_no_change(
    harness: Harness, site: Path
) -> None:
    # the auditor imported `plain` without writing its bytecode; an interpreter that writes
    # bytecode imports it: what it writes is what the source compiles to
    command = f"PYTHONDONTWRITEBYTECODE= PYTHONPATH={site} python3 -c 'import {PACKAGE}.sub.plain'"
    result = harness.call("Bash", command=command)
    assert _cache(site, f"{PACKAGE}/sub/plain.py").is_file()
    _passed(harness, result)


def test_bytecode_of_a_loaded_module_written_again_by_an_interpreter_is_no_change(
    harness: Harness, site: Path
) -> None:
    # another interpreter writes the cache file anew (it was removed, or it raced the watch's
    # baseline): what it writes is what the source compiles to
    cache = _cache(site, STORE)
    assert cache.is_file()
    command = (
        f"rm {cache} && PYTHONDONTWRITEBYTECODE= PYTHONPATH={site} "
        f"python3 -c 'import {PACKAGE}.sub.store'"
    )
    result = harness.call("Bash", command=command)
    assert cache.is_file()
    _passed(harness, result)


def test_bytecode_of_a_loaded_module_written_again_with_other_code_fails(
    harness: Harness, site: Path
) -> None:
    # the same route with a checked header and code the source does not compile to
    cache = _cache(site, STORE)
    source = site / STORE
    code = (
        "import importlib.util, marshal, os; "
        f"s = os.stat({str(source)!r}); "
        "h = (int(s.st_mtime) & 0xFFFFFFFF).to_bytes(4, 'little'); "
        "h += s.st_size.to_bytes(4, 'little'); "
        "c = marshal.dumps(compile('def append(r): return None', 'x', 'exec')); "
        "open(p, 'wb').write(importlib.util.MAGIC_NUMBER + bytes(4) + h + c)"
    )
    result = harness.call("Bash", command=_built(cache, code))
    _failed(harness, result, cache)


class _LazyImport:
    """An inspector that imports a module of the environment during the call, writing its
    bytecode, as the auditor's own code does when it imports lazily."""

    def __init__(self, name: str) -> None:
        self.name = name

    def before(self, tool: str, category: str, params: Any) -> object:
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(sys, "dont_write_bytecode", False)
            importlib.import_module(self.name)
        return None

    def after(self, *args: object) -> CallFindings:
        return NO_FINDINGS


def test_the_auditor_s_own_import_during_a_call_is_no_change(harness: Harness, site: Path) -> None:
    harness.gate.inspectors.append(_LazyImport(f"{PACKAGE}.sub.lazy"))
    result = harness.call("Bash", command="echo x > notes.txt")
    assert _cache(site, f"{PACKAGE}/sub/lazy.py").is_file()  # written during the call
    _passed(harness, result)
    # and from then on it is watched as loaded
    result = harness.call(
        "Bash", command=_built(site / f"{PACKAGE}/sub/lazy.py", "open(p, 'a').write('import os')")
    )
    _failed(harness, result, site / f"{PACKAGE}/sub/lazy.py")


@pytest.mark.parametrize("name", ["sitecustomize.py", "usercustomize.py", "zz_evil.pth"])
def test_a_start_up_file_in_a_folder_on_sys_path_fails(
    harness: Harness, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    extra = tmp_path / "extra"
    extra.mkdir()
    monkeypatch.syspath_prepend(str(extra))
    result = harness.call("Bash", command=_built(extra / name, "open(p, 'w').write('import os')"))
    _failed(harness, result, extra / name)


def _fake_installer(harness: Harness, target: Path, text: str = "import os") -> None:
    """A ``./pip`` in the workspace that writes ``target`` when it "installs"."""
    script = harness.root / "pip"
    script.write_text(f"#!/bin/sh\nmkdir -p {target.parent}\necho '{text}' > {target}\n")
    script.chmod(0o755)


def test_a_package_installer_adding_a_start_up_file_warns(harness: Harness, site: Path) -> None:
    _fake_installer(harness, site / "zz_hook.pth")
    result = harness.call("Bash", command="./pip install newdist")
    assert result.record["effects"]["installationStartup"] == [str(site / "zz_hook.pth")]
    assert "installationChanged" not in result.record["effects"]
    assert result.record["judged"]["verdict"] == "WARN"
    assert str(harness.verdict) == "WARN"


def test_a_package_installer_changing_a_loaded_module_fails(harness: Harness, site: Path) -> None:
    _fake_installer(harness, site / STORE)
    result = harness.call("Bash", command="./pip install --upgrade zzdeep")
    _failed(harness, result, site / STORE)


def test_a_package_installer_adding_a_module_not_loaded_is_expected(
    harness: Harness, site: Path
) -> None:
    _fake_installer(harness, site / PACKAGE / "sub" / "extra.py")
    _passed(harness, harness.call("Bash", command="./pip install zzdeep-extra"))


@pytest.mark.slow
def test_a_test_run_in_the_workspace_is_no_change(harness: Harness) -> None:
    tests = harness.root / "tests"
    tests.mkdir()
    (tests / "conftest.py").write_text("")
    (tests / "test_it.py").write_text("import json\n\ndef test_it():\n    assert json\n")
    command = "PYTHONDONTWRITEBYTECODE= python3 -m pytest -q -p no:harness_audit tests"
    result = harness.call("Bash", command=command)
    assert (tests / "__pycache__").is_dir()
    assert (harness.root / ".pytest_cache").is_dir()
    _passed(harness, result)


def _wheel(folder: Path) -> Path:
    """A wheel of ``scratchpkg`` that brings a ``.pth`` file."""
    wheel = folder / "scratchpkg-1.0-py3-none-any.whl"
    info = "scratchpkg-1.0.dist-info"
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr("scratchpkg/__init__.py", "VALUE = 1\n")
        archive.writestr("scratchpkg.pth", "import os\n")
        archive.writestr(
            f"{info}/METADATA", "Metadata-Version: 2.1\nName: scratchpkg\nVersion: 1.0\n"
        )
        archive.writestr(
            f"{info}/WHEEL",
            "Wheel-Version: 1.0\nGenerator: t\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
        )
        archive.writestr(f"{info}/RECORD", "")
    return wheel


@pytest.mark.slow
def test_installing_into_a_scratch_venv_in_the_workspace_is_no_change(harness: Harness) -> None:
    wheel = _wheel(harness.root)
    command = (
        "python3 -m venv --without-pip scratch && "
        f"python3 -m pip --python scratch/bin/python install -q --no-index {wheel.name}"
    )
    result = harness.call("Bash", command=command)
    assert list(harness.root.glob("scratch/lib/*/site-packages/scratchpkg.pth"))
    _passed(harness, result)


def test_the_watch_of_the_real_installation_covers_deep_modules(tmp_path: Path) -> None:
    made = Harness.create(tmp_path, template="empty", policy="permissive")
    try:
        import yaml.constructor

        stamp = made.install_watch.stamp()
        assert os.path.abspath(yaml.constructor.__file__) in stamp
        assert os.path.abspath(yaml.constructor.__cached__) in stamp
        assert any(path.endswith(os.path.join("audit", "chain.py")) for path in stamp)
    finally:
        made.close()


def test_a_call_that_changes_nothing_finds_nothing(harness: Harness) -> None:
    watch = harness.install_watch
    token = watch.before("Bash", "command", {"command": "true"})
    assert watch.after(token, "Bash", "command", {}, Outcome("success")) is NO_FINDINGS


class _ShortLibc:
    """The C library, but the kernel refuses watches after the first ``allowed`` (``ENOSPC``,
    the user's ``max_user_watches`` reached)."""

    def __init__(self, real: Any, allowed: int) -> None:
        self._real = real
        self.allowed = allowed

    def inotify_add_watch(self, fd: int, path: bytes, mask: int) -> int:
        self.allowed -= 1
        if self.allowed < 0:
            ctypes.set_errno(errno.ENOSPC)
            return -1
        return int(self._real.inotify_add_watch(fd, path, mask))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)


@pytest.mark.skipif(install_events.inotify_libc() is None, reason="the kernel's watch is Linux's")
def test_short_of_kernel_watches_a_loaded_module_s_change_is_seen_by_stamps(
    tmp_path: Path, site: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(install_events, "_SHARED", None)
    monkeypatch.setattr(install_events, "_REFUSED_PID", -1)
    short = _ShortLibc(install_events.inotify_libc(), 50)
    monkeypatch.setattr(install_events, "inotify_libc", lambda: short)
    made = Harness.create(tmp_path / "run", template="empty", policy="permissive")
    try:
        watch = made.install_watch
        watch.folders = (*watch.folders, str(site), str(site.parent))
        assert isinstance(watch.before("Bash", "command", {}), dict)  # stamps, not events
        assert install_events.shared_events() is None  # not tried again for every call
        result = made.call("Bash", command=_built(site / STORE, "open(p, 'a').write('x')"))
        _failed(made, result, site / STORE)
    finally:
        made.close()
        watcher = install_events._SHARED
        if watcher is not None:
            watcher.close()


def test_a_folder_above_a_loaded_module_renamed_away_and_copied_back_fails(
    harness: Harness, site: Path
) -> None:
    # namespace packages: no module lies in `zzdeep_ns` or `zzdeep_ns/a`, only in its `a/b`
    deep = site / f"{PACKAGE}_ns" / "a" / "b"
    deep.mkdir(parents=True)
    (deep / "mod.py").write_text("VALUE = 1\n")
    importlib.import_module(f"{PACKAGE}_ns.a.b.mod")
    harness.call("Bash", command="true")  # the watch of the module set up
    folder = site / f"{PACKAGE}_ns" / "a"
    code = (
        f"import os, shutil; s = {str(folder)!r}; os.rename(s, s + '.old'); "
        "shutil.copytree(s + '.old', s); open(p, 'a').write('import os')"
    )
    result = harness.call("Bash", command=_built(deep / "mod.py", code))
    assert str(deep / "mod.py") in result.record["effects"]["installationChanged"]
    assert str(harness.verdict) == "FAIL"


@pytest.fixture
def rewritten(site: Path) -> Path:
    """A package of the throwaway environment loaded by pytest's assertion rewriter (as pytest
    loads a plugin's modules), without its cache file: pytest's own cache file of it."""
    package = site / f"{PACKAGE}_rw"
    package.mkdir()
    (package / "__init__.py").write_text("def check(value):\n    assert value\n")
    pytest.register_assert_rewrite(package.name)
    module = importlib.import_module(package.name)
    if type(module.__spec__.loader).__name__ != "AssertionRewritingHook":
        pytest.skip("assertions are not rewritten in this run")
    from _pytest.assertion.rewrite import PYC_TAIL

    cache = package / "__pycache__" / f"__init__{PYC_TAIL}"
    assert not cache.exists()
    return cache


def test_pytest_s_cache_of_a_rewritten_module_forged_fails(
    harness: Harness, rewritten: Path
) -> None:
    source = rewritten.parent.parent / "__init__.py"
    code = (
        "import importlib.util, marshal, os; "
        f"os.makedirs({str(rewritten.parent)!r}, exist_ok=True); "
        f"h = importlib.util.source_hash(open({str(source)!r}, 'rb').read()); "
        "c = marshal.dumps(compile('def check(value): pass', 'x', 'exec')); "
        "open(p, 'wb').write(importlib.util.MAGIC_NUMBER + (3).to_bytes(4, 'little') + h + c)"
    )
    result = harness.call("Bash", command=_built(rewritten, code))
    _failed(harness, result, rewritten)


def test_pytest_s_cache_written_by_a_test_run_is_no_change(
    harness: Harness, site: Path, rewritten: Path
) -> None:
    tests = harness.root / "tests"
    tests.mkdir()
    name = rewritten.parent.parent.name
    (tests / "conftest.py").write_text(f"import pytest\npytest.register_assert_rewrite({name!r})\n")
    (tests / "test_it.py").write_text(f"import {name}\n\ndef test_it():\n    {name}.check(1)\n")
    command = (
        f"PYTHONDONTWRITEBYTECODE= PYTHONPATH={site} "
        "python3 -m pytest -q -p no:harness_audit -p no:cacheprovider tests"
    )
    result = harness.call("Bash", command=command)
    assert rewritten.is_file(), result.output
    _passed(harness, result)


def test_a_loaded_module_written_through_a_hard_link_fails(harness: Harness, site: Path) -> None:
    link = harness.root / "link.py"
    code = f"import os; os.link(p, {str(link)!r}); open({str(link)!r}, 'a').write('import os')"
    result = harness.call("Bash", command=_built(site / STORE, code))
    assert (site / STORE).read_text().endswith("import os")
    _failed(harness, result, site / STORE)
