"""What a project's own build and script runners run: ``make``, ``npm run`` and kin, ``python -m``.

The command's text names a target or a script; what runs is written in a workspace file. So
that a recipe or a script written earlier cannot hide what it does behind an ordinary
``make test`` or ``npm run build``, the file is read (when it is a workspace file the reading can
see, :meth:`~.reading.Context.workspace_text`) and what it runs is read as scripts:

* **make** (``make``, ``gmake``; ``-f FILE``, ``-C DIR``, else ``GNUmakefile``, ``makefile``,
  ``Makefile``): the recipe lines of the targets named (or of the first target), and of their
  prerequisites, with the makefile's simple variables (``VAR = value``, ``:=``, ``?=``)
  put in; ``$$`` is ``$``.
* **npm**, **pnpm**, **yarn**, **bun** (``run X``, ``run-script X``, ``test``, ``start``, ``stop``,
  ``restart``, ``install``/``ci``/``i``, and ``pnpm X``/``yarn X`` for a script ``X``): the
  ``scripts`` of ``package.json`` that run — ``preX``, ``X`` and ``postX`` (the words after
  ``X`` or after ``--`` appended to ``X``), and the install scripts (``preinstall``,
  ``install``, ``postinstall``, ``prepare``) for an install, of the package and of the local
  packages it builds; in the workspace packages ``-w NAME``/``--workspaces``/``-r`` name.
  What Node's tools run besides a script's text — local bins (``npx``, ``npm exec``, a script
  naming a bin), orchestrators (``run-s``, ``concurrently``, ``turbo``, ``lerna``,
  ``wireit``), ``$npm_package_…`` variables, ``script-shell``/``node-options``/``yarnPath``
  configuration, ``node --run``, ``deno task`` — is read by :mod:`.node_runners`,
  :mod:`.node_config`, :mod:`.node_workspaces` and :mod:`.node_scripts`.
* **python -m module**: ``module.py`` or ``module/__main__.py`` of the workspace, read as code.
* **a file run by its path** (``./run.sh``, ``tools/gen``, a git hook): read by its ``#!`` line.
"""

from __future__ import annotations

import re
import shlex
from typing import Final, Protocol

from pytest_harness_audit.policy.path_forms import join_path, normal_path
from pytest_harness_audit.policy.shell.embedded import AWKS, awk_program
from pytest_harness_audit.policy.shell.embedded import Runner as _EmbeddedRunner
from pytest_harness_audit.policy.shell.node_config import manifest_of, runner_settings
from pytest_harness_audit.policy.shell.node_runners import (
    NODE_TOOLS,
    exec_command,
    node_tool,
    read_script,
)
from pytest_harness_audit.policy.shell.node_scripts import (
    NODE_RUNS as _NODE_RUNS,
)
from pytest_harness_audit.policy.shell.node_scripts import (
    node_run,
    other_command,
    script_arguments,
)
from pytest_harness_audit.policy.shell.node_workspaces import (
    local_packages,
    project_folder,
    workspace_folders,
    workspace_named,
)

SHELLS: Final = frozenset(
    {"sh", "bash", "zsh", "dash", "ksh", "ash", "mksh", "yash", "rbash", "fish", "tcsh", "csh"}
)
INTERPRETERS: Final = re.compile(
    r"(?:python[0-9.]*|pypy[0-9.]*|node|nodejs|deno|bun|perl|ruby|php|lua|rscript|osascript)"
)
_SHEBANG: Final = re.compile(r"#![ \t]*(\S+)(?:[ \t]+(\S+))?(?:[ \t]+(\S+))?")
#: An interpreter by a versioned name (``perl5.36``, ``ruby3.2``, ``node20``, ``python3.13t``,
#: ``php8.2``, ``python3.12-dbg``): the group is the name it is read as.
_VERSIONED: Final = re.compile(
    r"(python|pypy|perl|ruby|node|nodejs|php|lua|bun|deno)-?[0-9][0-9.]*[a-z]?(?:-dbg)?"
)


#: Code runners whose program text is that of a better-known interpreter, by its name: the
#: rules on ``python3 -c``/``node -e`` text judge ``ipython -c``, ``tsx -e`` and the like too.
CODE_ALIKES: Final = {
    **dict.fromkeys(("ipython", "ipython3", "jython", "graalpy"), "python3"),
    **dict.fromkeys(
        ("tsx", "ts-node", "ts-node-esm", "ts-node-script", "ts-node-cwd", "esno", "esr",
         "vite-node", "babel-node", "jiti", "sucrase-node", "swc-node", "zx"),
        "node",
    ),
    "irb": "ruby",
    "php-cgi": "php",
}  # fmt: skip


def base_interpreter(name: str) -> str | None:
    """The interpreter a versioned command name runs (``perl5.36`` → ``perl``), for a name
    :data:`INTERPRETERS` does not already know; ``None`` otherwise."""
    if not (name[-1:].isdigit() or name[-1:] in ("t", "g")) or name[:1] not in "pnrbld":
        return None  # (the common case: most command names end in a letter)
    if INTERPRETERS.fullmatch(name):
        return None
    match = _VERSIONED.fullmatch(name)
    return match.group(1) if match else None


def code_language(name: str) -> str:
    """The language of the inline code interpreter ``name`` runs, as :mod:`.code_values`
    reads it: ``python``, ``js``, ``perl``, ``ruby``, ``php``, else the name itself."""
    if name.startswith(("python", "pypy")):
        return "python"
    return "js" if name in _NODE_RUNS or name == "bun" else name


def shebang_interpreter(text: str) -> str | None:
    """The program a script's ``#!`` line names (``/usr/bin/env -S python3 -u`` → ``python3``),
    lower case; ``None`` without one."""
    found = _SHEBANG.match(text)
    if found is None:
        return None
    words = [w.split("\0", 1)[0] for w in found.groups() if w]
    name = words[0].rsplit("/", 1)[-1].lower()
    if name == "env":
        rest = [w[2:] if w.startswith("-S") and len(w) > 2 else w for w in words[1:]]
        rest = [w for w in rest if not w.startswith("-")]
        name = rest[0].rsplit("/", 1)[-1].lower() if rest else ""
    return name


_INSTALL: Final = frozenset({"install", "ci", "add", "install-test", "install-ci-test"})
_INSTALL_SCRIPTS: Final = (
    "preinstall",
    "install",
    "postinstall",
    "prepublish",
    "preprepare",
    "prepare",
    "postprepare",
    "dependencies",
)
_LIFECYCLE: Final = frozenset({"test", "start", "stop", "restart"})
_OTHER_LIFECYCLE: Final = {
    "pack": ("prepack", "prepare", "postpack"),
    "publish": ("prepublishOnly", "prepack", "prepare", "postpack", "publish", "postpublish"),
    "version": ("preversion", "version", "postversion"),
}
#: npm's own abbreviations and misspellings of its commands.
_NPM_ALIASES: Final = {
    "t": "test", "tst": "test", "rum": "run", "urn": "run", "run-script": "run", "i": "install",
    "in": "install", "ins": "install", "inst": "install", "insta": "install",
    "instal": "install", "isnt": "install", "isnta": "install", "isntal": "install",
    "isntall": "install", "add": "install", "it": "install-test", "cit": "install-ci-test",
    "clean-install": "ci", "ic": "ci", "install-clean": "ci", "isntall-clean": "ci",
    "restart": "restart", "start": "start", "stop": "stop",
}  # fmt: skip
#: Subcommands that are no script of a pnpm/yarn/bun project.
_NOT_SCRIPTS: Final = frozenset(
    {"exec", "dlx", "x", "create", "add", "remove", "up", "upgrade", "why", "info", "list", "ls",
     "outdated", "audit", "config", "dedupe", "link", "unlink", "store", "init", "import",
     "patch", "pack", "publish", "help", "workspace", "workspaces", "global", "cache", "set"}
)  # fmt: skip
#: bun's own commands, which come before a script of the same name.
_BUN_OWN: Final = frozenset({"build", "test", "init", "create", "upgrade", "pm", "link"})
#: Options whose value follows them as the next word.
_VALUED: Final = frozenset(
    {"--loglevel", "--registry", "--cache", "--userconfig", "--globalconfig", "--tag", "--otp",
     "--script-shell", "--node-options", "--package", "--call", "--depth", "--color", "--omit",
     "--include", "--scope", "--access", "--auth-type", "--before", "--save-prefix", "--editor",
     "--shell", "--browser", "--fetch-retries", "--fetch-timeout", "--maxsockets", "--proxy",
     "--https-proxy", "--noproxy", "--ca", "--cafile", "--cert", "--key", "--lockfile-version",
     "--install-strategy", "--sbom-format", "--pack-destination", "--tag-version-prefix",
     "--preid", "--message", "-m", "--init-module", "--umask", "--viewer", "--location",
     "--heading", "--usage", "--dist-tag", "--network-concurrency", "--reporter", "--filter"}
)  # fmt: skip
#: npm's commands, for its abbreviations (any start of one that no other command shares) and
#: its camelCase spellings (``runScript``).
_NPM_COMMANDS: Final = (
    "access", "adduser", "audit", "bugs", "cache", "ci", "completion", "config", "dedupe",
    "deprecate", "diff", "dist-tag", "docs", "doctor", "edit", "exec", "explain", "explore",
    "find-dupes", "fund", "help", "help-search", "init", "install", "install-ci-test",
    "install-test", "link", "login", "logout", "ls", "org", "outdated", "owner", "pack",
    "ping", "pkg", "prefix", "profile", "prune", "publish", "query", "rebuild", "repo",
    "restart", "root", "run", "run-script", "sbom", "search", "shrinkwrap", "star", "stars",
    "start", "stop", "team", "test", "token", "undeprecate", "uninstall", "unpublish",
    "unstar", "update", "version", "view", "whoami",
)  # fmt: skip


def _alias(word: str) -> str:
    return _NPM_ALIASES.get(word, word)


def npm_command(word: str) -> str:
    """The npm command ``word`` names: an alias, an unambiguous start (``npm tes``) or a
    camelCase spelling (``npm runScript``) of one; else ``word``."""
    if word in _NPM_ALIASES:
        return _NPM_ALIASES[word]
    if word in _NPM_COMMANDS or not word:
        return word
    folded = word.lower().replace("-", "")
    for command in _NPM_COMMANDS:
        if command.replace("-", "") == folded:
            return _NPM_ALIASES.get(command, command)
    starting = [command for command in _NPM_COMMANDS if command.startswith(word)]
    return _NPM_ALIASES.get(starting[0], starting[0]) if len(starting) == 1 else word


_RUNNERS: Final = frozenset({"npm", "pnpm", "yarn", "bun"}) | NODE_TOOLS | _NODE_RUNS
_EXEC_ALIASES: Final = frozenset({("x", "npm"), ("x", "bun"), ("dlx", "pnpm"), ("dlx", "yarn")})
_TOOL_RUNNER: Final = {"pnpx": "pnpm", "bunx": "bun"}


class Runner(_EmbeddedRunner, Protocol):
    """What the readers here need of the reading."""

    def script(self, text: str, args: list[str] | None = None) -> None:
        """Read ``text`` as a script run by a shell."""
        ...

    def script_file(self, path: str, code: bool) -> None:
        """A shell (``code``: an interpreter) runs the file ``path``: read its text."""
        ...

    def workspace_text(self, path: str) -> str | None:
        """The text of a workspace file, when the reading can see it."""
        ...

    def read_text(self, text: str, code: bool) -> None:
        """Read the text of a file a shell (``code``: an interpreter) runs."""
        ...

    def python_folders(self, code: str, folder: str) -> list[str]:
        """The folders besides its own that Python imports modules from (``PYTHONPATH`` …)."""
        ...


def program_file(path: str, runner: Runner) -> None:
    """The file ``path`` is run as a program (``./run.sh``, a hook): a workspace file without a
    ``#!`` line is read as a script (the shell runs it); with one, the line itself is read as
    the command the kernel runs, the file's path after it (``#!/usr/bin/env python3`` →
    ``/usr/bin/env python3 ./x``, which reads the file as code; ``#!/usr/bin/make -f`` reads it
    as a makefile; ``#!/bin/cat .env`` reads ``.env``); a binary is not read."""
    text = runner.workspace_text(path)
    if text is None or text.startswith("\x7fELF"):
        return
    if not text.startswith("#!"):
        runner.read_text(text, code=False)
        return
    line = text[2:].split("\n", 1)[0].split("\0", 1)[0].strip()
    if shebang_interpreter(text) in AWKS:
        awk_program(text.partition("\n")[2], runner)
        return
    words = line.split(None, 1)
    if not words:
        runner.read_text(text, code=False)
        return
    if words[0].rsplit("/", 1)[-1] == "env" and len(words) > 1:
        # `env -S…`/`env -Sprog`: the rest is split into the command (as `env -S` does)
        rest = re.sub(r"^(?:-[a-zA-Z]*S|--split-string(?:=|\s))\s*", "", words[1])
        line = f"{words[0]} {rest}"
    runner.script(f"{line} {shlex.quote(path)}")


def _package_options(args: list[str]) -> tuple[str, list[str], list[str], bool, bool]:
    """``(folder, workspaces, words, every_workspace, ignore_scripts)`` of a package runner's
    arguments."""
    folder, workspaces, words, every, ignore = "", [], [], False, False
    index = 0
    while index < len(args):
        word = args[index]
        name, has_value, value = word.partition("=")
        if name in ("--prefix", "-C", "--dir", "--cwd", "--workspace", "-w", "--filter", "-F"):
            if not has_value:
                value = args[index + 1] if index + 1 < len(args) else ""
                index += 1
            if name in ("--filter", "-F"):
                every = True
            elif name in ("--workspace", "-w"):
                workspaces.append(value)
            else:
                folder = join_path(folder, value) if value else folder
        elif name in ("--workspaces", "-ws", "-r", "--recursive", "--all"):
            every = True
        elif name == "--ignore-scripts":
            ignore = True
        elif name in _VALUED and not has_value:
            index += 1  # `--loglevel silent`: the value is no subcommand
        elif word == "--":
            break
        elif not word.startswith("-"):
            words.append(word)
        index += 1
    return folder, workspaces, words, every, ignore


def _scripts_run(name: str, words: list[str], defined: dict[str, object]) -> list[str]:
    """The scripts of ``package.json`` a command runs, in order."""
    command = (npm_command if name == "npm" else _alias)(words[0]) if words else ""
    if name in ("yarn", "bun") and not words:
        command = "install"
    if name == "bun" and command in _BUN_OWN:
        return []
    if command in ("run", "run-script") and len(words) > 1:
        target = words[1]
    elif command in _INSTALL:
        return ["dependencies"] if len(words) > 1 else list(_INSTALL_SCRIPTS)
    elif command in _LIFECYCLE:
        target = command
        if command == "restart" and "restart" not in defined:
            return ["prestop", "stop", "poststop", "prestart", "start", "poststart"]
    elif command in _OTHER_LIFECYCLE:
        return list(_OTHER_LIFECYCLE[command])
    elif name in ("pnpm", "yarn", "bun") and command not in _NOT_SCRIPTS:
        target = command
    else:
        return []
    return [f"pre{target}", target, f"post{target}"]


def package_scripts(name: str, args: list[str], runner: Runner) -> None:
    """``npm run X`` and kin: read the ``package.json`` scripts that run (module doc), the
    local bins and orchestrators they use and the configuration they run with
    (:mod:`.node_runners`, :mod:`.node_config`, :mod:`.node_workspaces`)."""
    if name in NODE_TOOLS:
        runner_settings(_TOOL_RUNNER.get(name, "npm"), "", args, runner, runner.workspace_text)
        node_tool(name, args, runner)
        return
    if name in _NODE_RUNS:
        node_run(name, args, runner)
        return
    folder, workspaces, words, every, ignore = _package_options(args)
    settings = runner_settings(name, folder, args, runner, runner.workspace_text)
    command = (npm_command if name == "npm" else _alias)(words[0]) if words else ""
    if command == "exec" or (command, name) in _EXEC_ALIASES:
        exec_command(args[args.index(words[0]) + 1 :], folder, runner)
        return
    if name == "yarn" and command in ("workspace", "workspaces"):
        _yarn_workspaces(command, words, args, folder, runner)
        return
    if every or workspaces:
        folders = (
            workspace_folders(folder, runner)
            if every
            else [workspace_named(w, folder, runner) for w in workspaces]
        )
        if folders is None or None in folders:
            runner.unknown(f"{name} runs the scripts of workspace packages it cannot find")
            return
        for each in [f for f in folders if f is not None]:
            _package_in(name, args, each, words, settings, ignore, runner)
        return
    _package_in(name, args, folder, words, settings, ignore, runner)


def _yarn_workspaces(
    command: str, words: list[str], args: list[str], folder: str, runner: Runner
) -> None:
    """``yarn workspace NAME …`` in the package ``NAME``; ``yarn workspaces run|foreach …``
    in each package."""
    if command == "workspace":
        found = workspace_named(words[1], folder, runner) if len(words) > 1 else None
        folders = [found] if found is not None else None
        rest = args[args.index(words[1]) + 1 :] if len(words) > 1 else []
    else:
        folders = workspace_folders(folder, runner)
        verb = next((w for w in words[1:] if w in ("run", "foreach")), "")
        rest = args[args.index(verb) + (verb == "foreach") :] if verb else []
    if folders is None:
        runner.unknown("yarn runs a command in workspace packages it cannot find")
        return
    for each in folders:
        if rest:
            package_scripts("yarn", ["--cwd", each, *rest], runner)


def _package_in(
    name: str,
    args: list[str],
    folder: str,
    words: list[str],
    settings: dict[str, str],
    ignore: bool,
    runner: Runner,
) -> None:
    """The scripts a package runner runs in the package of ``folder``."""
    command = (npm_command if name == "npm" else _alias)(words[0]) if words else ""
    folder = project_folder(folder, runner)
    text = runner.workspace_text(join_path(folder, "package.json"))
    manifest = manifest_of(text) if text is not None else {}
    if manifest is None:
        runner.unknown(f"{name} reads a package.json that does not parse")
        return
    defined = manifest.get("scripts")
    defined = defined if isinstance(defined, dict) else {}
    other_command(name, command, words, args, folder, defined, runner)
    run = _scripts_run(name, words, defined)
    target = run[1] if len(run) == 3 else None
    if ignore:  # a script asked for by name still runs, without its pre- and post-scripts
        run = [target] if target is not None else []
    if target is not None and target not in defined and name != "npm" and target in words:
        # `yarn tool`, `pnpm tool`, `bun run x.ts`: no script of that name runs a bin or file
        exec_command(args[args.index(target) :], folder, runner)
    extra = script_arguments(name, args, words, target)
    for script in run:
        body = defined.get(script)
        if isinstance(body, str):
            body = f"{body} {extra}" if script == target and extra else body
            read_script(script, body, manifest, folder, settings, runner)
    if not ignore and (command in _INSTALL or (name in ("yarn", "bun") and not words)):
        _local_installs(folder, manifest, words[1:], runner)


def _local_installs(
    folder: str, manifest: dict[str, object], added: list[str], runner: Runner
) -> None:
    """An install runs the install scripts of the local packages it installs: ``file:``
    dependencies, workspace packages and folders named (``npm install ./vendor/x``)."""
    named = [w.removeprefix("file:") for w in added if w.startswith((".", "/", "file:"))]
    if any(w.endswith((".tgz", ".tar.gz", ".tar")) for w in named):
        runner.unknown("an install runs the scripts of a local package archive")
    queue = [normal_path(join_path(folder, w)) for w in named]
    queue += [] if added else local_packages(folder, manifest, runner)
    seen: set[str] = {folder}
    while queue and len(seen) < 64:
        where = queue.pop(0)
        if where in seen:
            continue
        seen.add(where)
        found = manifest_of(runner.workspace_text(join_path(where, "package.json")))
        if found is None:
            continue
        scripts = found.get("scripts")
        for script in _INSTALL_SCRIPTS if isinstance(scripts, dict) else ():
            body = scripts.get(script) if isinstance(scripts, dict) else None
            if isinstance(body, str):
                read_script(script, body, found, where, {}, runner)
        queue += local_packages(where, found, runner)


def python_module(args: list[str], runner: Runner) -> None:
    """``python -m module``: the module's file of the workspace (or of a ``PYTHONPATH``
    folder), read as code."""
    path = module_file(args, runner)
    if path is not None:
        runner.script_file(path, code=True)


def module_file(args: list[str], runner: Runner) -> str | None:
    """The file of the workspace (or of a ``PYTHONPATH`` folder) ``python -m module`` runs,
    if any."""
    for index, word in enumerate(args):
        if word.startswith("-m") and (len(word) > 2 or index + 1 < len(args)):
            module = (word[2:] or args[index + 1]).replace(".", "/")  # `-m mod`, `-mmod`
            for folder in ("", *runner.python_folders("", "")):
                base = "" if folder in ("", ".") else f"{folder}/"
                for path in (f"{base}{module}.py", f"{base}{module}/__main__.py"):
                    if runner.workspace_text(path) is not None:
                        return path
            return None
    return None


def is_package_runner(name: str) -> bool:
    """Whether ``name`` runs ``package.json`` scripts."""
    return name in _RUNNERS
