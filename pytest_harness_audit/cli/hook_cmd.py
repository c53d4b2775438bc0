"""`harness-audit hook pre | post`: the host hook adapter (JSON on stdin, answer on stdout)."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from pytest_harness_audit.cli.policy_cmd import policy_from_args
from pytest_harness_audit.doors.hook import handle_post, handle_pre
from pytest_harness_audit.errors import HarnessAuditError
from pytest_harness_audit.gate.seam import describe_exception


def register(subparsers: Any) -> None:
    """Add the ``hook`` command group."""
    group = subparsers.add_parser(
        "hook", help="gate and record a host's PreToolUse/PostToolUse hook payloads"
    )
    commands = group.add_subparsers(dest="command", metavar="SUBCOMMAND")
    commands.required = True
    for name, handler, text in (
        ("pre", handle_pre, "answer a PreToolUse payload"),
        ("post", handle_post, "record a PostToolUse or PostToolUseFailure payload"),
    ):
        parser = commands.add_parser(name, help=text)
        source = parser.add_mutually_exclusive_group()
        source.add_argument(
            "--policy",
            metavar="FILE",
            default=os.environ.get("HARNESS_AUDIT_POLICY_FILE"),
            help="policy file (default: $HARNESS_AUDIT_POLICY_FILE)",
        )
        source.add_argument(
            "--preset",
            metavar="NAME",
            default=os.environ.get("HARNESS_AUDIT_PRESET"),
            help="preset (default: $HARNESS_AUDIT_PRESET or safety)",
        )
        parser.set_defaults(func=lambda args, handler=handler: _run(args, handler))


def _run(args: argparse.Namespace, handler: Any) -> int:
    if handler is not handle_pre:
        policy = policy_from_args(args)
        answer = handler(sys.stdin.read(), storage=Path(args.storage), policy=policy)
        print(json.dumps(answer))
        return 0
    # The host runs the tool when a PreToolUse hook exits with anything but 2 (or a deny), so
    # every failure here, ours included, must refuse the call: exit 2, the reason on stderr.
    try:
        policy = policy_from_args(args)
        answer = handler(sys.stdin.read(), storage=Path(args.storage), policy=policy)
    except HarnessAuditError as exc:
        print(f"harness-audit: error: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:
        print(
            f"harness-audit: error: hook failed, call refused: {describe_exception(exc)}",
            file=sys.stderr,
        )
        return 2
    print(json.dumps(answer))
    return 0
