"""The packages of a Node workspace (a monorepo), and the tools that run a script in each.

* **Workspace packages**: the ``workspaces`` of ``package.json`` (a list, or ``packages``),
  ``pnpm-workspace.yaml``'s ``packages`` and ``lerna.json``'s; globs are listed in the
  workspace. A package named by its ``name`` (``npm -w @org/web``, ``yarn workspace web``) is
  found by it.
* **Local packages**: ``file:``/``link:``/``portal:`` dependencies and workspace packages, whose
  install scripts an install runs (:func:`local_packages`).
* **turbo** (``turbo run build``, ``turbo build``: the tasks named and, from ``turbo.json``, those
  they depend on) and **lerna** (``lerna run test``, ``lerna exec -- cmd``): the script of every
  workspace package, as ``npm run`` runs it.
"""

from __future__ import annotations

import itertools
import os
import posixpath
import re
import shlex
from typing import Final, Protocol

from pytest_harness_audit.policy.path_forms import join_path, normal_path
from pytest_harness_audit.policy.shell.expand import Expander
from pytest_harness_audit.policy.shell.node_config import manifest_of
from pytest_harness_audit.policy.shell.nodes import Lit

_MAX_PACKAGES: Final = 64
_MAX_TASKS: Final = 32
_MAX_LISTED: Final = 4096
_TURBO_OWN: Final = frozenset(
    {"prune", "login", "logout", "link", "unlink", "daemon", "gen", "ls", "info", "query",
     "telemetry", "bin", "scan"}
)  # fmt: skip


class Runner(Protocol):
    """What the readers here need of the reading."""

    def script(self, text: str) -> None:
        """Read ``text`` as a script run by a shell."""
        ...

    def unknown(self, why: str) -> None:
        """A program runs something whose text is not in the command."""
        ...

    def workspace_text(self, path: str) -> str | None:
        """The text of a workspace file, when the reading can see it."""
        ...


def _expander(runner: object) -> Expander | None:
    """The reading's expander when it reads a workspace (``None``: nothing to list), found
    without making one for a reading that has none."""
    if getattr(runner, "workspace_root", None) is None:
        return None
    expander = getattr(runner, "expander", None)
    return expander if isinstance(expander, Expander) else None


def place_here(runner: object) -> str | None:
    """Where the reading has moved inside the workspace (``None``: its root, or not known)."""
    expander = _expander(runner)
    return expander.place.here if expander is not None else None


def folders_up(folder: str, runner: object) -> list[str]:
    """``folder`` and each folder above it up to the workspace's root, from where the reading
    is (npm looks for ``package.json`` there, and puts the ``node_modules/.bin`` of each on a
    script's ``PATH``)."""
    if not getattr(runner, "knows_files", True):
        return [folder]  # no workspace: no folder above to look in
    here = place_here(runner) or "."
    start = normal_path(join_path(here, folder))
    if start.startswith(("..", "/")):
        return [folder]
    parts = [] if start == "." else start.split("/")
    return [
        posixpath.relpath("/".join(parts[:count]) or ".", here)
        for count in range(len(parts), max(-1, len(parts) - 9), -1)
    ]


def project_folder(folder: str, runner: Runner) -> str:
    """The folder of the package a runner started in ``folder`` works on: the nearest one
    with a ``package.json``, ``folder`` itself or one above it (``cd src && npm test``)."""
    if runner.workspace_text(join_path(folder, "package.json")) is not None:
        return folder
    for above in folders_up(folder, runner)[1:]:
        if runner.workspace_text(join_path(above, "package.json")) is not None:
            return above
    return folder


def listed_names(folder: str, runner: object) -> frozenset[str] | None:
    """The names in the workspace folder ``folder`` (from where the reading is); ``None`` when
    the reading cannot list it (one name looked up at a time, then)."""
    expander = _expander(runner)
    if expander is None or not expander.root or folder.startswith("/"):
        return None
    # and every file written earlier in the command (`echo … > node_modules/.bin/x; npx x`)
    written = {posixpath.basename(str(path)) for path in expander.files}
    try:
        with os.scandir(os.path.join(expander.root, expander.place.here or "", folder)) as found:
            names = list(itertools.islice((entry.name for entry in found), _MAX_LISTED))
    except OSError:
        return frozenset(written)
    return None if len(names) >= _MAX_LISTED else frozenset(written.union(names))


def monorepo(name: str, args: list[str], runner: Runner) -> None:
    """``turbo run build``, ``lerna run test``, ``lerna exec -- cmd``: in each workspace package."""
    words = [w for w in args if not w.startswith("-")]
    if name == "lerna" and words[:1] == ["exec"]:
        rest = args[args.index("--") + 1 :] if "--" in args else words[1:]
        if rest:
            runner.script(rest[0] if len(rest) == 1 else shlex.join(rest))
        return
    if name == "lerna" and words[:1] != ["run"]:
        if words[:1] and words[0] in ("version", "publish", "bootstrap", "add", "link"):
            runner.unknown(f"lerna {words[0]} runs scripts of every workspace package")
        return
    tasks = words[1:2] if name == "lerna" else (words[1:] if words[:1] == ["run"] else words[:1])
    if name == "turbo" and words[:1] and words[0] in _TURBO_OWN:
        return
    tasks = _depends_on(tasks, runner) if name == "turbo" else tasks
    folders = workspace_folders("", runner)
    if folders is None:
        runner.unknown(f"{name} runs scripts of workspace packages it could not list")
        return
    for folder in folders:
        for task in tasks[:_MAX_TASKS]:
            runner.script(f"npm --prefix {shlex.quote(folder)} run {shlex.quote(task)}")


def _depends_on(tasks: list[str], runner: Runner) -> list[str]:
    """turbo's tasks and, from ``turbo.json``, the tasks they depend on."""
    config = manifest_of(runner.workspace_text("turbo.json")) or {}
    pipeline = config.get("tasks", config.get("pipeline"))
    if not isinstance(pipeline, dict):
        return tasks
    found = list(dict.fromkeys(t.rpartition("#")[2] for t in tasks))
    for task in found:
        if len(found) >= _MAX_TASKS:
            break
        for key, entry in pipeline.items():
            if str(key).rpartition("#")[2] != task or not isinstance(entry, dict):
                continue
            for needed in entry.get("dependsOn") or []:
                plain = str(needed).lstrip("^").rpartition("#")[2]
                if plain and not plain.startswith("$") and plain not in found:
                    found.append(plain)
    return found


def workspace_folders(folder: str, runner: Runner) -> list[str] | None:
    """The folders of the workspace packages of the project in ``folder`` (``workspaces`` of
    ``package.json``, ``pnpm-workspace.yaml``, ``lerna.json``), globs listed; ``None`` when it
    names none, or they cannot be listed."""
    manifest = manifest_of(runner.workspace_text(join_path(folder, "package.json"))) or {}
    declared = manifest.get("workspaces")
    if isinstance(declared, dict):
        declared = declared.get("packages")
    patterns = [p for p in declared if isinstance(p, str)] if isinstance(declared, list) else []
    lerna = manifest_of(runner.workspace_text(join_path(folder, "lerna.json"))) or {}
    packages = lerna.get("packages")
    patterns += [p for p in packages if isinstance(p, str)] if isinstance(packages, list) else []
    pnpm = runner.workspace_text(join_path(folder, "pnpm-workspace.yaml")) or ""
    patterns += re.findall(r"(?m)^\s*-\s*[\"']?([^\"'\s#]+)", pnpm.partition("packages:")[2])
    if not patterns:
        return None
    folders: list[str] = []
    for pattern in dict.fromkeys(p for p in patterns if not p.startswith("!")):
        joined = normal_path(join_path(folder, pattern.rstrip("/")))
        if not re.search(r"[*?\[{]", joined):
            folders.append(joined)
        elif (expander := _expander(runner)) is not None:
            fields = expander.expand([Lit(joined.replace("**", "*"), False)])
            here = expander.place.here  # a listing's paths are from the workspace's root
            found = [f.text for f in fields if not re.search(r"[*?\[]", f.text)]
            folders += [posixpath.relpath(f, here) if here else f for f in found]
        else:
            return None
    return [f for f in dict.fromkeys(folders) if f not in ("", ".")][:_MAX_PACKAGES]


def workspace_named(name: str, folder: str, runner: Runner) -> str | None:
    """The folder of the workspace package ``name`` (a folder, or a package's ``name``)."""
    given = normal_path(join_path(folder, name))
    if runner.workspace_text(join_path(given, "package.json")) is not None:
        return given
    for found in workspace_folders(folder, runner) or []:
        manifest = manifest_of(runner.workspace_text(join_path(found, "package.json")))
        if manifest is not None and manifest.get("name") == name:
            return found
    return None


def local_packages(folder: str, manifest: dict[str, object], runner: Runner) -> list[str]:
    """The folders of the local packages an install in ``folder`` installs, whose install
    scripts run: ``file:``/``link:``/``portal:`` dependencies and workspace packages (a local
    tarball's scripts cannot be read: said unreadable)."""
    folders: list[str] = []
    for field in ("dependencies", "devDependencies", "optionalDependencies"):
        dependencies = manifest.get(field)
        if not isinstance(dependencies, dict):
            continue
        for spec in dependencies.values():
            if not isinstance(spec, str):
                continue
            if spec.startswith(("./", "../", "/", "~/")):  # a path is a `file:` dependency
                spec = f"file:{spec}"
            if not spec.startswith(("file:", "link:", "portal:")):
                continue
            path = spec.partition(":")[2]
            if path.endswith((".tgz", ".tar.gz", ".tar")):
                runner.unknown(f"an install runs the scripts of a local package archive: {path}")
            else:
                folders.append(normal_path(join_path(folder, path)))
    folders += workspace_folders(folder, runner) or []
    return list(dict.fromkeys(folders))[:_MAX_PACKAGES]


__all__ = [
    "folders_up",
    "listed_names",
    "local_packages",
    "monorepo",
    "place_here",
    "project_folder",
    "workspace_folders",
    "workspace_named",
]
