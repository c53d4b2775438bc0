"""The `harness-audit` command line: `policy`, `audit`, `proxy`, `relay`, `hook`, `immune`,
`view`, `init`."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from typing import NoReturn

from pytest_harness_audit.audit.storage import choose_storage
from pytest_harness_audit.cli.terminal_text import VisibleControls
from pytest_harness_audit.errors import HarnessAuditError
from pytest_harness_audit.tools.supervisor import guard_auditor

# Each module exposes ``register(subparsers)``; commands set ``func`` returning an exit code.
_COMMAND_MODULES = (
    "pytest_harness_audit.cli.policy_cmd",
    "pytest_harness_audit.cli.audit_cmd",
    "pytest_harness_audit.cli.proxy_cmd",
    "pytest_harness_audit.cli.relay_cmd",
    "pytest_harness_audit.cli.hook_cmd",
    "pytest_harness_audit.cli.immune_cmd",
    "pytest_harness_audit.cli.view_cmd",
    "pytest_harness_audit.cli.init_cmd",
)


class _Parser(argparse.ArgumentParser):
    """An argument parser whose usage errors are one line (and exit 2)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


def build_parser(group: str | None = None) -> argparse.ArgumentParser:
    """Build the argument parser with every available command group, or with ``group`` alone.

    A host runs ``hook …`` for every tool call: building only the group named spares it the
    import of every other command's modules (a parse with one group behaves as with all of
    them, for that group's arguments)."""
    parser = _Parser(
        prog="harness-audit", description="Govern, record and verify agent tool calls."
    )
    parser.add_argument("--storage", default=None, help=_STORAGE_HELP)
    subparsers = parser.add_subparsers(dest="group", metavar="COMMAND")
    subparsers.required = True
    only = f"pytest_harness_audit.cli.{group}_cmd" if group is not None else None
    for module_name in _COMMAND_MODULES if only not in _COMMAND_MODULES else (only,):
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name == module_name:
                continue
            raise
        module.register(subparsers)
    _storage_after_command(parser)
    return parser


_STORAGE_HELP = (
    "audit storage directory (default: $HARNESS_AUDIT_DIR, else the policy file's storagePath, "
    "else $XDG_STATE_HOME/harness-audit/<project-id>, outside the project)"
)


def _storage_after_command(parser: argparse.ArgumentParser) -> None:
    """Let every command take ``--storage`` after its name too (``audit verify --storage D``)."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                if any(isinstance(item, argparse._SubParsersAction) for item in sub._actions):
                    _storage_after_command(sub)
                elif "--storage" not in sub._option_string_actions:
                    sub.add_argument("--storage", default=argparse.SUPPRESS, help=_STORAGE_HELP)


def _configured(args: argparse.Namespace) -> str | None:
    """The ``storagePath`` of the command's ``--policy FILE`` (None without one, or when the file
    does not load: the command itself then reports that, in its own words)."""
    if getattr(args, "storage", None) is not None or not getattr(args, "policy", None):
        return None
    from pytest_harness_audit.cli.policy_cmd import policy_from_args

    try:
        path = policy_from_args(args).storage_path
    except HarnessAuditError:
        return None
    return None if path is None else str(path)


def _group_named(argv: Sequence[str]) -> str | None:
    """The command group ``argv`` names (its first word past ``--storage DIR``), if any."""
    words = iter(argv)
    for word in words:
        if word == "--storage":
            next(words, None)
        elif not word.startswith("-"):
            return word
        elif not word.startswith("--storage="):
            return None  # ``--help`` and the like: every group
    return None


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the process exit code (0 ok, 1 failure found, 2 usage)."""
    if argv is None:
        argv = sys.argv[1:]
    parser = build_parser(_group_named(argv))
    args = parser.parse_args(argv)
    try:
        storage = choose_storage(getattr(args, "storage", None), configured=_configured(args))
    except HarnessAuditError as exc:
        print(f"harness-audit: error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        # one line and exit 2, never a crash: a hook that crashes exits 1, which the host reads
        # as "non-blocking" and runs the call (a working directory that is gone, for example)
        print(f"harness-audit: error: cannot choose the storage folder: {exc}", file=sys.stderr)
        return 2
    args.storage = str(storage)
    if args.group in _PROTOCOL_GROUPS:
        # the proxy and the hook hold the workspace's secrets while the agent's processes run
        guard_auditor()
        return _run(args)
    # a person reads what the other commands print: records' text never acts on the terminal
    streams = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = VisibleControls(streams[0]), VisibleControls(streams[1])
    try:
        return _run(args)
    finally:
        sys.stdout, sys.stderr = streams


#: Command groups whose output is a protocol another program reads (a host's hook answers, an
#: MCP client's JSON-RPC): written exactly as made.
_PROTOCOL_GROUPS = frozenset({"hook", "proxy", "relay"})


def _run(args: argparse.Namespace) -> int:
    try:
        code: int = args.func(args)
    except HarnessAuditError as exc:
        print(f"harness-audit: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0
    except Exception as exc:  # one line, never a traceback; exit 2 (a hook's call is refused)
        command = " ".join(part for part in (args.group, getattr(args, "command", None)) if part)
        print(
            f"harness-audit: internal error in {command!r}: {type(exc).__name__}: {exc}",
            file=sys.stderr,
        )
        return 2
    return code
