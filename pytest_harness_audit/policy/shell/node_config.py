"""What Node's configuration makes a package runner (or any Node program) run.

A workspace's configuration files and a command's environment can hand Node or npm a program
the command's text never names; each is read as the program it is:

* ``script-shell`` (``.npmrc``, ``.yarnrc``, a ``--userconfig`` file, ``--script-shell X``,
  ``npm_config_script_shell=X``): the program every ``package.json`` script runs through.
* ``node-options`` (``.npmrc``, ``--node-options``) and ``NODE_OPTIONS``: ``--require X``,
  ``--import X`` and ``--loader X`` preload the module ``X`` into every Node process.
* yarn's ``yarnPath`` and ``plugins`` (``.yarnrc.yml``), ``yarn-path`` (``.yarnrc``) and
  ``YARN_YARN_PATH``; pnpm's ``.pnpmfile.cjs``; bun's ``preload`` (``bunfig.toml``): code run
  by the tool itself.
* ``$npm_package_…``, ``$npm_config_…`` and ``$npm_lifecycle_event``: the variables npm and
  yarn give a script, from ``package.json`` and the configuration (:func:`package_variables`).
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Callable
from typing import Final, Protocol

from pytest_harness_audit.policy.path_forms import join_path
from pytest_harness_audit.policy.shell.launchers import is_dotenv_preload

FileText = Callable[[str], "str | None"]

#: Options whose value names a module Node loads first.
_PRELOAD: Final = frozenset({"-r", "--require", "--import", "--loader", "--experimental-loader"})
_PACKAGE_VARIABLE: Final = re.compile(r"\bnpm_(?:package|config|lifecycle)_\w+")
_PLUGIN_PATH: Final = re.compile(r"^\s*(?:-\s*)?(?:path:\s*)?[\"']?([^\"'\s#]+\.c?js)[\"']?\s*$")
_QUOTED: Final = re.compile(r"[\"']([^\"']+)[\"']")
#: Environment variables (as :func:`_variable_key` spells them) naming what Node or npm runs.
_NODE_VARIABLES: Final = frozenset(
    {"NPM_CONFIG_SCRIPT_SHELL", "NPM_CONFIG_NODE_OPTIONS", "NPM_CONFIG_USERCONFIG",
     "NPM_CONFIG_GLOBALCONFIG", "YARN_YARN_PATH", "NPM_EXECPATH"}
)  # fmt: skip
#: Most ``package.json`` entries turned into variables.
_MAX_VARIABLES: Final = 512
_MAX_NESTING: Final = 8


class Runner(Protocol):
    """What the readers here need: read a script or a program's file, say one is unknown."""

    def script(self, text: str) -> None:
        """Read ``text`` as a script run by a shell."""
        ...

    def unknown(self, why: str) -> None:
        """A program runs something whose text is not in the command."""
        ...

    def program_file(self, path: str) -> None:
        """The file ``path`` is run as a program: read its text by its ``#!`` line."""
        ...


def is_node_variable(name: str) -> bool:
    """Whether the environment variable ``name`` may make Node or npm run a program."""
    return name == "NODE_OPTIONS" or _variable_key(name) in _NODE_VARIABLES


def node_environment(name: str, value: str, runner: Runner, file_text: FileText) -> None:
    """A command (and every program it starts) runs with ``NAME=value`` in its environment."""
    key = _variable_key(name)
    if key in ("NODE_OPTIONS", "NPM_CONFIG_NODE_OPTIONS"):
        node_options(value, runner, file_text)
    elif key == "NPM_CONFIG_SCRIPT_SHELL":
        script_shell(value, runner, file_text)
    elif key in ("NPM_CONFIG_USERCONFIG", "NPM_CONFIG_GLOBALCONFIG"):
        apply_settings(npmrc(file_text(value)), runner, file_text)
    elif key in ("YARN_YARN_PATH", "NPM_EXECPATH"):  # the npm `run-s`/`npm-run-all` run
        _node_code(_local(value), runner, file_text)


def _variable_key(name: str) -> str:
    """npm reads its variables in any case, with ``-`` or ``_``: one spelling of them."""
    return name.upper().replace("-", "_")


def npmrc(text: str | None) -> dict[str, str]:
    """The ``key=value`` settings of an ``.npmrc`` (or a yarn v1 ``.yarnrc``: ``key "value"``)."""
    settings: dict[str, str] = {}
    for line in (text or "").splitlines()[:1024]:
        line = line.strip()
        if not line or line[0] in "#;[":
            continue
        key, equals, value = line.partition("=")
        if not equals:
            key, _, value = line.partition(" ")
        value = value.strip()
        if len(value) > 1 and value[0] == value[-1] and value[0] in "\"'":
            value = value[1:-1]
        else:  # npm's ini: an unquoted value ends at `;` or `#`
            value = re.split(r"(?<!\\)[;#]", value, maxsplit=1)[0].strip()
        settings[key.strip().lower()] = _environment_values(value)
    return settings


def _environment_values(value: str) -> str:
    """npm puts in ``${NAME}`` from the environment: the folders it starts from (``${PWD}``,
    ``${INIT_CWD}``, ``${HOME}``, the workspace here) as ``.``; another stays, unknown."""
    if "${" not in value:
        return value
    return re.sub(r"\$\{(?:PWD|INIT_CWD|HOME)\}", ".", value)


def runner_settings(
    name: str, folder: str, args: list[str], runner: Runner, file_text: FileText
) -> dict[str, str]:
    """The npm settings a package runner ``name`` runs with in ``folder`` (its configuration
    files, then its ``--key value`` options); what they make it load is read on the way."""
    settings: dict[str, str] = {}
    for path in dict.fromkeys([".npmrc", join_path(folder, ".npmrc") if folder else ".npmrc"]):
        settings.update(npmrc(file_text(path)))
    if name == "yarn":
        legacy = npmrc(file_text(join_path(folder, ".yarnrc") if folder else ".yarnrc"))
        settings.update({k: v for k, v in legacy.items() if k == "script-shell"})
        if "yarn-path" in legacy:
            _node_code(_local(legacy["yarn-path"]), runner, file_text)
        _yarn_berry(
            join_path(folder, ".yarnrc.yml") if folder else ".yarnrc.yml", runner, file_text
        )
    for index, word in enumerate(args):
        option, equals, value = word.partition("=")
        if word == "--":
            break
        if equals and option.startswith("--") and len(option) > 2:
            settings[option[2:].lower()] = value  # `--key=value`: `$npm_config_key` in scripts
        if option in ("--script-shell", "--node-options", "--userconfig", "--globalconfig"):
            if not equals:
                value = args[index + 1] if index + 1 < len(args) else ""
            if option.endswith("config"):
                settings.update(npmrc(file_text(value)))
            else:
                settings[option[2:]] = value
    if name == "pnpm":
        pnpmfile = settings.get("pnpmfile", ".pnpmfile.cjs")
        _node_code(_local(join_path(folder, pnpmfile)), runner, file_text)
    elif name == "bun":
        for line in (file_text("bunfig.toml") or "").splitlines()[:512]:
            if line.strip().startswith("preload"):
                for path in _QUOTED.findall(line):
                    _node_code(_local(path), runner, file_text)
    apply_settings(settings, runner, file_text)
    return settings


def apply_settings(settings: dict[str, str], runner: Runner, file_text: FileText) -> None:
    """Read what npm settings load into every script: ``script-shell``, ``node-options``."""
    script_shell(settings.get("script-shell", ""), runner, file_text)
    if settings.get("node-options"):
        node_options(settings["node-options"], runner, file_text)


def script_shell(shell: str, runner: Runner, file_text: FileText) -> None:
    """The program every script runs through: a workspace file by its path (``./tools/sh``,
    whatever its name), or a local bin of that name (npm looks it up on the scripts' ``PATH``)."""
    shell = shell.strip()
    if not shell:
        return
    if "$" in shell:
        runner.unknown("scripts run through a program named from the environment")
        return
    if "/" not in shell and file_text(f"node_modules/.bin/{shell}") is not None:
        shell = f"node_modules/.bin/{shell}"
    if "/" in shell:
        runner.program_file(shell)


def _yarn_berry(path: str, runner: Runner, file_text: FileText) -> None:
    """``.yarnrc.yml``: ``yarnPath`` (the yarn every command runs) and its ``plugins``."""
    in_plugins = False
    for line in (file_text(path) or "").splitlines()[:1024]:
        stripped = line.strip()
        if stripped.startswith("yarnPath:"):
            path = stripped.partition(":")[2].strip().strip("\"'")
            _node_code(_local(path), runner, file_text)
        if line[:1] not in (" ", "\t", "-"):
            in_plugins = stripped.startswith("plugins:")
        elif in_plugins and (found := _PLUGIN_PATH.match(line)):
            _node_code(_local(found.group(1)), runner, file_text)


def node_options(value: str, runner: Runner, file_text: FileText) -> None:
    """``NODE_OPTIONS``: the modules ``--require``/``--import``/``--loader`` preload."""
    try:
        words = shlex.split(value)
    except ValueError:
        words = value.split()
    for index, word in enumerate(words):
        option, equals, spec = word.partition("=")
        if option in _PRELOAD and not equals:
            spec = words[index + 1] if index + 1 < len(words) else ""
        elif option in ("--env-file", "--env-file-if-exists") and spec:
            runner.script(f": < {shlex.quote(spec)}")  # read into the environment, as `node
            continue  # --env-file=.env` reads it
        elif option not in _PRELOAD:
            continue
        if is_dotenv_preload(spec):
            runner.script(": < .env")  # `-r dotenv/config` loads it into the environment
        if "$" in spec:
            runner.unknown("node preloads a module named from the environment")
        elif spec.startswith("./") or spec.startswith("../"):
            # a workspace module: judged by what loading it runs, as `node -r` (:mod:`.load_time`)
            runner.script(f"node -r {shlex.quote(spec)} -e 0")
        elif spec:
            _node_code(spec, runner, file_text)


def _local(path: str) -> str:
    """A path a configuration file gives, from the project (``x.cjs`` → ``./x.cjs``)."""
    return path if path.startswith((".", "/")) else f"./{path}"


def _node_code(spec: str, runner: Runner, file_text: FileText) -> None:
    """Node runs the module ``spec`` (a path, ``file:`` URL or package name): read its file as
    code when it is a workspace file."""
    spec = spec.removeprefix("file://").removeprefix("file:")
    base = spec if spec.startswith((".", "/")) else f"node_modules/{spec}"
    for path in (base, f"{base}.js", f"{base}.cjs", f"{base}.mjs", f"{base}/index.js"):
        if file_text(path) is not None:
            runner.script(f"node {shlex.quote(path)}")
            return
    main = (manifest_of(file_text(f"{base}/package.json")) or {}).get("main")
    if isinstance(main, str) and main:
        runner.script(f"node {shlex.quote(join_path(base, main))}")


def package_variables(
    body: str, manifest: dict[str, object], script: str, settings: dict[str, str]
) -> str:
    """Assignments of the ``npm_…`` variables ``body`` uses, as npm and yarn set them (every
    ``package.json`` entry flattened: ``npm_package_config_port``), to go before it; a value
    a program reads from its environment (``process.env.npm_package_config_f``) is also read
    as a path. Empty when the body uses none."""
    used = set(_PACKAGE_VARIABLE.findall(body))
    if not used:
        return ""
    values: dict[str, str] = {"npm_lifecycle_event": script, "npm_package_json": "package.json"}
    _flatten(manifest, "npm_package", values, 0)
    for key, value in settings.items():
        values["npm_config_" + re.sub(r"\W", "_", key)] = value
    out: list[str] = []
    for name in sorted(used):
        if name in values:
            value = shlex.quote(values[name])
            out.append(f"{name}={value}; ")
            if not re.search(rf"\$\{{?{name}\b", body) and "\n" not in value:
                out.append(f": < {value}; ")  # read by a program, not expanded by the shell
    return "".join(out)


def _flatten(value: object, prefix: str, out: dict[str, str], depth: int) -> None:
    """npm's flattening of ``package.json`` into ``npm_package_*`` variables."""
    if len(out) >= _MAX_VARIABLES or depth > _MAX_NESTING:
        return
    if isinstance(value, dict):
        for key, item in value.items():
            _flatten(item, f"{prefix}_{re.sub(r'[^A-Za-z0-9_]', '_', str(key))}", out, depth + 1)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _flatten(item, f"{prefix}_{index}", out, depth + 1)
    elif isinstance(value, bool):
        out[prefix] = "true" if value else "false"
    elif value is not None:
        out[prefix] = str(value)


def manifest_of(text: str | None) -> dict[str, object] | None:
    """A ``package.json`` text's object; ``None`` when it does not parse as one."""
    if not text:
        return None
    try:
        found = json.loads(text.lstrip("\ufeff"))
    except (ValueError, RecursionError):
        return None
    return found if isinstance(found, dict) else None


__all__ = [
    "apply_settings",
    "is_node_variable",
    "manifest_of",
    "node_environment",
    "node_options",
    "npmrc",
    "package_variables",
    "runner_settings",
    "script_shell",
]
