"""`harness-audit hook pre | post`: the host hook adapter (JSON on stdin, answer on stdout)."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from pytest_harness_audit.cli.policy_cmd import resolve_policy
from pytest_harness_audit.doors.hook import handle_post, handle_pre


def register(subparsers: Any) -> None:
    """Add the ``hook`` command group."""
    group = subparsers.add_parser(
        "hook", help="gate and record a host's PreToolUse/PostToolUse hook payloads"
    )
    commands = group.add_subparsers(dest="command", metavar="SUBCOMMAND")
    commands.required = True
    for name, handler, text in (
        ("pre", handle_pre, "answer a PreToolUse payload"),
        ("post", handle_post, "record a PostToolUse payload"),
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
    policy = resolve_policy(args)
    answer = handler(sys.stdin.read(), storage=Path(args.storage), policy=policy)
    print(json.dumps(answer))
    return 0
