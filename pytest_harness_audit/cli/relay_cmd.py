"""`harness-audit relay URL`: stdio to a recording proxy served over HTTP (``doors.proxy.relay``).

The bearer token comes from ``HARNESS_AUDIT_RELAY_TOKEN``, never from the command line, which
other users of the machine can list. Exit 0 when stdin ends; 1 when the proxy cannot be reached
(one line on stderr; the requests then waiting are answered with an error); 2 on bad input.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any
from urllib.parse import urlsplit

from pytest_harness_audit.errors import UsageError


def register(subparsers: Any) -> None:
    """Add the ``relay`` command."""
    parser = subparsers.add_parser(
        "relay",
        help="relay MCP over stdio to a recording proxy served over HTTP",
        description=(
            "Read JSON-RPC lines on stdin, send them to the recording proxy at URL, write its "
            "answers on stdout; the proxy's bearer token comes from $HARNESS_AUDIT_RELAY_TOKEN."
        ),
    )
    parser.add_argument("url", metavar="URL", help="the proxy's streamable-HTTP endpoint")
    parser.set_defaults(func=_relay)


def _relay(args: argparse.Namespace) -> int:
    import anyio

    from pytest_harness_audit.doors.proxy.relay import TOKEN_VARIABLE, relay_stdio

    parts = urlsplit(args.url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise UsageError(f"relay: URL must be an http(s) address, got {args.url!r}")
    token = os.environ.get(TOKEN_VARIABLE, "")
    if not token:
        raise UsageError(f"relay: environment variable {TOKEN_VARIABLE} must hold the token")
    failure = anyio.run(relay_stdio, args.url, {"Authorization": f"Bearer {token}"})
    if failure is not None:
        print(f"harness-audit relay: {failure}", file=sys.stderr)
        return 1
    return 0
