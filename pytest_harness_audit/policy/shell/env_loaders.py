"""Programs that read an env file into the environment of what they run, on their own.

* ``bun`` loads ``.env``, ``.env.local`` and ``.env.<mode>`` from where it runs before any code
  it runs (``bun run x``, ``bun x tool``, ``bun test``, ``bun file.ts``), unless
  ``--no-env-file``; its package-manager commands (``bun install`` …) and ``bun build`` run
  no code.
* ``docker compose`` (``docker-compose``, ``podman compose``) reads its project's ``.env`` (or
  ``--env-file F``): ``config``/``convert`` print the configuration with the values put in;
  ``up``/``run``/``exec``/``create``/``start`` pass them to containers when the compose file
  interpolates (``${…}``) or names an ``env_file``.
* ``heroku local`` loads ``.env`` (or ``-e F``) as ``foreman`` does; ``heroku local:run CMD``
  runs ``CMD`` with it.
* ``direnv exec DIR CMD`` runs ``DIR/.envrc`` as a script first (``dotenv`` there reads
  ``.env``); ``poetry run`` loads ``.env`` when the project declares the dotenv plugin.
* ``bash --rcfile F``/``--init-file F`` runs ``F`` as a script; so does a ``BASH_ENV``/``ENV``
  (:mod:`.gitenv`).

A file such a program loads only when it exists counts only when the workspace holds it (``bun
run test`` with no ``.env`` reads nothing); with no workspace known it is not counted, as a
project file a runner would read is not (:attr:`~.context.Context.knows_files`).
"""

from __future__ import annotations

import os
import posixpath
import shlex
from typing import Final

from pytest_harness_audit.policy.path_forms import join_path
from pytest_harness_audit.policy.shell.builds import builds
from pytest_harness_audit.policy.shell.context import Context
from pytest_harness_audit.policy.shell.index_files import index_files
from pytest_harness_audit.policy.shell.launchers import launcher_reads
from pytest_harness_audit.policy.shell.tools import option_value

#: Every name :func:`loaders` reads (the cheap test before any parsing).
NAMES: Final = frozenset(
    {"bun", "docker", "docker-compose", "podman", "podman-compose", "heroku", "bash", "sh",
     "zsh", "dash", "ksh", "rbash"}
)  # fmt: skip
_BUN_OWN: Final = frozenset(
    {"install", "i", "add", "a", "remove", "rm", "update", "upgrade", "pm", "init", "create",
     "c", "link", "unlink", "patch", "publish", "outdated", "audit", "info", "completions",
     "help", "why", "build"}
)  # fmt: skip
_BUN_FILES: Final = (".env", ".env.local", ".env.development", ".env.production", ".env.test")
_DOCKER_VALUED: Final = frozenset(
    {"-c", "--context", "--config", "-H", "--host", "-l", "--log-level", "--tlscacert",
     "--tlscert", "--tlskey"}
)  # fmt: skip
_COMPOSE_VALUED: Final = frozenset(
    {"-f", "--file", "-p", "--project-name", "--env-file", "--project-directory", "--profile",
     "--ansi", "--progress", "--parallel"}
)  # fmt: skip
_COMPOSE_FILES: Final = ("compose.yaml", "compose.yml", "docker-compose.yml", "docker-compose.yaml")
_COMPOSE_PRINTS: Final = frozenset({"config", "convert"})
_COMPOSE_RUNS: Final = frozenset({"up", "run", "exec", "create", "start", "restart", "watch"})
_POETRY_DOTENV: Final = ("poetry-dotenv-plugin", "poetry-plugin-dotenv")


def loaders(name: str, args: list[str], ctx: Context) -> None:
    """Record the env files ``name args`` loads on its own (module doc)."""
    if name == "bun":
        _bun(args, ctx)
    elif name in ("docker", "podman"):
        index = _skip(args, _DOCKER_VALUED)
        if args[index : index + 1] == ["compose"]:
            _compose(args[index + 1 :], ctx)
    elif name in ("docker-compose", "podman-compose"):
        _compose(args, ctx)
    elif name == "heroku":
        _heroku(args, ctx)
    else:  # a shell: `bash --rcfile F` runs F first
        for index, word in enumerate(args):
            option, equals, value = word.partition("=")
            if not word.startswith("-") or word == "--":
                break
            if option in ("--rcfile", "--init-file"):
                path = value if equals else args[index + 1] if index + 1 < len(args) else ""
                if path:
                    ctx.reading.reads.append(path)
                    ctx.script_file(path, code=False)


def launcher_loads(name: str, args: list[str], ctx: Context) -> None:
    """The env files launcher ``name`` loads (:func:`~.launchers.launcher_reads`), and what
    ``direnv exec DIR`` runs from ``DIR/.envrc`` and ``poetry run`` loads with its plugin."""
    ctx.reading.reads.extend(launcher_reads(name, args))
    if name in ("uvx", "pipx") or (name == "uv" and args[:1] == ["tool"]):
        index_files(name, args, ctx)  # the index the tool comes from, as for `uv tool install`
        if ctx.knows_files:  # a tool run from a workspace folder is built first
            builds(
                "uv" if name == "uvx" else name,
                ["tool", "run", *args] if name == "uvx" else args,
                ctx,
            )
    if name == "direnv" and args[:1] == ["exec"] and len(args) > 1:
        envrc = join_path(args[1], ".envrc")
        ctx.reading.reads.append(envrc)
        ctx.script_file(envrc, code=False)  # `dotenv` in it reads `.env`
    elif name == "poetry" and "run" in args[:4] and ctx.knows_files:
        project = ctx.workspace_text("pyproject.toml") or ""
        if any(plugin in project for plugin in _POETRY_DOTENV):
            ctx.reading.reads.extend(_existing(ctx, "", (".env",)))


def _bun(args: list[str], ctx: Context) -> None:
    if "--no-env-file" in args:
        return
    words = [word for word in args if not word.startswith("-")]
    if not words or words[0] in _BUN_OWN:
        return  # `bun --version`, `bun install`: no code runs
    ctx.reading.reads.extend(_existing(ctx, "", _BUN_FILES))


def _compose(args: list[str], ctx: Context) -> None:
    index = _skip(args, _COMPOSE_VALUED)
    options, sub = args[:index], args[index] if index < len(args) else ""
    given = [v for i, v in enumerate(options[1:]) if options[i] == "--env-file"]
    given += [o.partition("=")[2] for o in options if o.startswith("--env-file=")]
    # a `--env-file F` is read as any operand is; the project's `.env` is read only without one
    if given or sub not in _COMPOSE_PRINTS | _COMPOSE_RUNS:
        return
    files = [v for i, v in enumerate(options[1:]) if options[i] in ("-f", "--file")]
    folder = option_value(options, ("--project-directory",))
    folder = folder if folder is not None else posixpath.dirname(files[0]) if files else ""
    if sub in _COMPOSE_RUNS:
        texts = [ctx.workspace_text(f) or "" for f in files] or [
            ctx.workspace_text(join_path(folder, f)) or "" for f in _COMPOSE_FILES
        ]
        if not any("${" in text or "env_file" in text for text in texts):
            return  # the compose file passes none of its values on
    ctx.reading.reads.extend(_existing(ctx, folder, (".env",)))


def _heroku(args: list[str], ctx: Context) -> None:
    sub = args[0] if args else ""
    if sub not in ("local", "local:start", "local:run"):
        return
    rest = args[1:]
    file = option_value(rest, ("-e", "--env"))
    ctx.reading.reads.extend((file or ".env").split(","))
    if sub == "local:run":
        index = _skip(rest, frozenset({"-e", "--env", "-p", "--port"}))
        if rest[index:]:
            ctx.script(shlex.join(rest[index:]))


def _skip(args: list[str], valued: frozenset[str]) -> int:
    """The index of the first word after the leading options (and their values)."""
    index = 0
    while index < len(args) and args[index].startswith("-") and args[index] != "--":
        index += 2 if args[index] in valued else 1
    return index + (args[index : index + 1] == ["--"])


def _existing(ctx: Context, folder: str, names: tuple[str, ...]) -> list[str]:
    """The files of ``names`` in ``folder`` the workspace holds (none without a workspace)."""
    found = []
    for name in names:
        path = join_path(folder, name) if folder else name
        real = ctx.real_path(path)
        if real is not None and os.path.lexists(real):
            found.append(path)
    return found


__all__ = ["NAMES", "launcher_loads", "loaders"]
