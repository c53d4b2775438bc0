"""An archive extracted writes its members, and a file copied into a folder writes the file of
its name there: into a folder git or Python take code from (``.git``, its hooks, the home
folder, ``site-packages``), it is denied as ``cp x .git/hooks/pre-commit`` is; an ordinary
extraction or copy stays allowed."""

from __future__ import annotations

import gzip
import io
import tarfile
import zipfile
from pathlib import Path
from typing import Literal

import pytest
from policy_support import safety_in, secret_workspace

from pytest_harness_audit.policy.shell import extractions
from pytest_harness_audit.policy.shell.reading import read_command

_HOOK = b"#!/bin/sh\ncp .env /tmp/x\n"


def _tar(path: Path, names: list[str], mode: Literal["w", "w:gz", "w:bz2", "w:xz"] = "w") -> None:
    with tarfile.open(path, mode) as archive:
        for name in names:
            info = tarfile.TarInfo(name)
            info.size = len(_HOOK)
            archive.addfile(info, io.BytesIO(_HOOK))


def _zip(path: Path, names: list[str]) -> None:
    with zipfile.ZipFile(path, "w") as archive:
        for name in names:
            archive.writestr(name, _HOOK)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    workspace = secret_workspace(tmp_path, {"README.md": "# x\n"}, ("app", ".git/hooks", "vendor"))
    _tar(workspace / "hook.tar", ["pre-commit"])
    _tar(workspace / "gitdir.tgz", ["hooks/pre-commit", "config"], "w:gz")
    _tar(workspace / "nested.tar.bz2", ["pkg/hooks/pre-commit"], "w:bz2")
    _tar(workspace / "repo.tar.xz", ["src/a.py", ".git/hooks/post-checkout"], "w:xz")
    _tar(workspace / "deps.tgz", ["lib/a.py", "lib/b.py"], "w:gz")
    _zip(workspace / "hook.zip", ["hooks/pre-commit", "config"])
    _zip(workspace / "assets.zip", ["css/a.css", "js/a.js"])
    (workspace / "hooks").mkdir()
    (workspace / "hooks" / "pre-commit").write_bytes(_HOOK)
    (workspace / "pre-commit").write_bytes(_HOOK)
    return workspace


@pytest.mark.parametrize(
    "command",
    [
        "tar -xf hook.tar -C .git/hooks",
        "tar -x -f hook.tar --directory .git/hooks",
        "tar -C .git -xzf gitdir.tgz",
        "tar xzf gitdir.tgz --directory=.git",
        "tar --extract --file=gitdir.tgz -C .git",
        "tar -xjf nested.tar.bz2 --strip-components=1 -C .git",
        "tar -xJf repo.tar.xz",
        "cd app && tar xf ../repo.tar.xz -C ..",
        "bsdtar -xf hook.tar -C .git/hooks",
        "unzip hook.zip -d .git",
        "unzip -o -j hook.zip -d .git/hooks",
        "cd .git && unzip -o ../hook.zip",
        "cd .git/hooks; unzip -qo ../../hook.zip",
        "7z x -o.git hook.zip",
        "python3 -m zipfile -e hook.zip .git",
        "python -m tarfile -e hook.tar .git/hooks",
        # members not known: the folder decides
        "git archive HEAD app | tar -x -C .git",
        "curl -sL https://example.invalid/h.tgz | tar xz -C .git/hooks",
        "cd .git && cpio -idm < ../x.cpio",
        "tar -xf missing.tar -C .git",
        "tar -xf hook.tar --transform 's,^,hooks/,' -C .git",
        "cp hook.tar new.tar && tar -xf new.tar -C .git",
    ],
)
def test_an_extraction_into_a_code_place_is_denied(root: Path, command: str) -> None:
    assert safety_in(command, root) == ("deny", "deny-exec-config-write")


@pytest.mark.parametrize(
    "command",
    [
        "tar -xzf deps.tgz -C vendor",
        "tar xzf deps.tgz",
        "unzip assets.zip -d static",
        "unzip -o assets.zip",
        "tar -tf hook.tar",
        "tar -tzvf gitdir.tgz",
        "unzip -l hook.zip",
        "tar -czf /tmp/out.tgz app",
        "tar -xf hook.tar -C vendor",
        "unzip hook.zip -d vendor/pkg",
        "python3 -m zipfile -l hook.zip",
        "python3 -m tarfile -e deps.tgz vendor",
        "curl -sL https://example.invalid/d.tgz | tar xz -C vendor",
    ],
)
def test_ordinary_extractions_stay_allowed(root: Path, command: str) -> None:
    assert safety_in(command, root)[0] != "deny"


def test_a_large_archive_is_not_listed(root: Path) -> None:
    # past the real bound (a compiled build reads its constant, which no test can patch)
    size = extractions.MAX_ARCHIVE + 1
    with tarfile.open(root / "big.tgz", "w:gz", compresslevel=1) as archive:
        info = tarfile.TarInfo("zeros")
        info.size = size
        archive.addfile(info, io.BytesIO(bytes(size)))
    assert read_command("tar xzf big.tgz -C vendor", str(root)).writes == []
    (root / "bomb.gz").write_bytes(gzip.compress(bytes(size), compresslevel=1))
    assert read_command("tar xzf bomb.gz -C vendor", str(root)).writes == []


def test_members_are_written_where_the_extractor_puts_them(root: Path) -> None:
    writes = read_command("unzip -j hook.zip -d vendor", str(root)).writes
    assert "vendor/pre-commit" in writes and "vendor/config" in writes
    writes = read_command("tar -xjf nested.tar.bz2 --strip-components=2", str(root)).writes
    assert "pre-commit" in writes


@pytest.mark.parametrize(
    "command",
    [
        "cp pre-commit .git/hooks/",
        "cp pre-commit .git/hooks",
        "mv pre-commit .git/hooks",
        "install -m 755 pre-commit .git/hooks/",
        "ln pre-commit .git/hooks/",
        "cp -t .git/hooks pre-commit",
        "cd .git && cp ../pre-commit hooks/",
        "cp -r hooks .git/",
        "cp -a hooks .git",
        "rsync -a hooks .git/",
        "rsync -a hooks/ .git/hooks/",
        "cp x.pth ~/.local/lib/python3.12/site-packages/",
    ],
)
def test_a_copy_into_a_code_place_is_denied(root: Path, command: str) -> None:
    assert safety_in(command, root) == ("deny", "deny-exec-config-write")


@pytest.mark.parametrize(
    "command",
    [
        "cp README.md .git/",
        "cp -r app vendor/",
        "cp .git/hooks/pre-commit /tmp/",
        "cp -r .git/hooks /tmp/hooks-backup",
        "mv app/a.py app/b.py",
        "rsync -a app/ /tmp/app/",
        "install -m 755 pre-commit /tmp/bin/",
    ],
)
def test_ordinary_copies_stay_allowed(root: Path, command: str) -> None:
    assert safety_in(command, root) == ("allow", None)
