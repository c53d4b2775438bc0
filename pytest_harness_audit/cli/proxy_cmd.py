"""``harness-audit proxy``: the recording MCP proxy as a command.

    harness-audit proxy [--policy FILE | --preset NAME] [--session ID] [--workspace DIR]
                        [--http 127.0.0.1:PORT] [--config FILE] [--call-timeout SECONDS]
                        [--pin FILE]
                        -- UPSTREAM_COMMAND ...

Serves MCP on stdio (default) or streamable HTTP on loopback; every ``tools/call`` goes through
the gate of session ``ID`` and lands in that session's audit chain under ``--storage``.
"""

from __future__ import annotations

import argparse
import contextlib
import secrets
import signal
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_harness_audit.errors import HarnessAuditError, UsageError

if TYPE_CHECKING:
    # The proxy pulls in the MCP SDK; other commands must not pay for it at startup.
    from pytest_harness_audit.doors.proxy import LocalTool, RecordingProxy, UpstreamSpec


def register(subparsers: Any) -> None:
    """Add the ``proxy`` command."""
    parser = subparsers.add_parser(
        "proxy",
        help="serve a governing, recording MCP proxy in front of MCP servers",
        description=(
            "Serve MCP (stdio, or streamable HTTP on loopback with a bearer token) in front of "
            "upstream MCP servers; gate and record every tools/call into the session's chain."
        ),
    )
    policy = parser.add_mutually_exclusive_group()
    policy.add_argument("--policy", type=Path, metavar="FILE", help="policy file (YAML or JSON)")
    policy.add_argument("--preset", metavar="NAME", help="policy preset (default: safety)")
    parser.add_argument("--session", metavar="ID", help="session id (default: a new one)")
    parser.add_argument(
        "--workspace",
        type=Path,
        metavar="DIR",
        help="serve the workspace tools on DIR, and start stdio upstreams in DIR "
        "({workspace} in their command line is DIR)",
    )
    parser.add_argument(
        "--http", metavar="127.0.0.1:PORT", help="serve streamable HTTP instead of stdio"
    )
    parser.add_argument(
        "--config", type=Path, metavar="FILE", help="upstreams from an mcpServers JSON file"
    )
    parser.add_argument(
        "--call-timeout",
        type=float,
        metavar="SECONDS",
        help="fail a tool call that takes longer (recorded as an error)",
    )
    parser.add_argument(
        "--social",
        metavar="LOCAL,PEER,…",
        help="also serve the send_message tool: the local agent's name, then its peers",
    )
    parser.add_argument(
        "--pin",
        type=Path,
        metavar="FILE",
        help="check upstream tools against a committed pin file (written at the first listing "
        "when it does not exist)",
    )
    parser.add_argument(
        "--policy-hash",
        metavar="HEX",
        help="refuse to serve unless the policy's content hash is HEX (a policy file written "
        "for this proxy and changed since)",
    )
    parser.add_argument(
        "--config-sha256",
        metavar="HEX",
        help="refuse to start unless the --config file's bytes hash to HEX",
    )
    parser.add_argument(
        "upstream",
        nargs=argparse.REMAINDER,
        metavar="-- UPSTREAM_COMMAND",
        help="the upstream MCP server command line",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run the proxy until its client disconnects (stdio) or it is interrupted (HTTP)."""
    import anyio

    from pytest_harness_audit.doors.proxy import RecordingProxy, in_workspace, parse_http_address

    if args.workspace is not None and not args.workspace.is_dir():
        raise UsageError(f"--workspace {args.workspace}: not a directory")
    try:
        upstreams = in_workspace(_upstreams(args), args.workspace)
        policy = _policy(args)
    except SealBroken as exc:
        _note_seal_broken(args, str(exc))
        raise
    if args.call_timeout is not None and args.call_timeout <= 0:
        raise UsageError(f"--call-timeout value {args.call_timeout!r} must be a positive number")
    http = parse_http_address(args.http) if args.http else None
    pins = _pins(args.pin, [upstream.name for upstream in upstreams]) if args.pin else None
    local_tools = _workspace_tools(args.workspace, policy) if args.workspace else []
    if not upstreams and not local_tools and not args.social:
        raise UsageError(
            "proxy: give an upstream command after '--', --config FILE, --workspace or --social"
        )
    session_id = args.session or _new_session_id()
    root = str(args.workspace.resolve()) if args.workspace else None
    gate = _open_gate(Path(args.storage), session_id, policy, root, social=bool(args.social))
    if args.social:
        local_tools.append(_send_message_tool(args.social, gate, policy, args.storage, session_id))
    proxy = RecordingProxy(
        gate,
        upstreams,
        local_tools=local_tools,
        call_timeout=args.call_timeout,
        pins=pins,
        pin_path=args.pin,
    )
    try:
        anyio.run(_serve, proxy, http, session_id)
    except BaseException as exc:
        _close_inspections(gate)
        with contextlib.suppress(Exception):  # the error on its way out is the one to report
            gate.chain.close()
        inner = _harness_error_in(exc) if isinstance(exc, Exception) else None
        if isinstance(exc, HarnessAuditError) or inner is None:
            raise
        raise inner from None
    _close_inspections(gate)
    valid = _close_chain(gate, Path(args.storage), session_id, policy.show_r6_status)
    return 0 if valid else 1


def _close_inspections(gate: Any) -> None:
    for inspection in getattr(gate, "inspectors", ()):
        close = getattr(inspection, "close", None)
        if close is not None:
            close()


def _close_chain(gate: Any, storage: Path, session_id: str, show_status: bool) -> bool:
    """Close the session's chain and verify what is on disk against the head this process
    wrote (its witness): a chain replaced, cut or rolled back under the proxy is reported in
    one line on stderr (always; with ``showR6Status`` the status line is printed either way)."""
    from pytest_harness_audit.audit import verify_chain
    from pytest_harness_audit.gate.console import format_status

    witness = gate.chain.witness
    gate.chain.close()
    report = verify_chain(storage, session_id, witness=witness)
    line = format_status(report.record_count, report.valid, report.head, report.reason)
    if not report.valid:
        report_status(f"harness-audit proxy: session {session_id}: {line}")
    elif show_status:
        report_status(line)
    return report.valid


def report_status(line: str) -> None:
    """One line on stderr (the proxy's stdout is the MCP stream)."""
    print(line, file=sys.stderr, flush=True)


def _upstreams(args: argparse.Namespace) -> list[UpstreamSpec]:
    from pytest_harness_audit.doors.proxy import load_upstreams_config, upstream_from_argv
    from pytest_harness_audit.doors.proxy.config import ConfigChanged

    upstreams: list[UpstreamSpec] = []
    if args.config is not None:
        try:
            upstreams.extend(load_upstreams_config(args.config, sha256=args.config_sha256))
        except ConfigChanged as exc:
            raise SealBroken(str(exc)) from None
    argv: list[str] = list(args.upstream or [])
    if argv and argv[0] == "--":
        argv = argv[1:]
    if argv:
        upstreams.append(upstream_from_argv(argv))
    return upstreams


def _pins(path: Path, names: list[str]) -> Any:
    """The pins of ``path``, or None (and a line saying so) when the file is to be written."""
    from pytest_harness_audit.doors.proxy.pin_guard import load_pin_file

    return load_pin_file(path, names, report_status)


class SealBroken(UsageError):
    """A file the proxy's command line seals (``--policy-hash``, ``--config-sha256``) changed."""


def _note_seal_broken(args: argparse.Namespace, reason: str) -> None:
    """Record the refusal in the session's chain (when it names one): the verdict FAILs."""
    if not args.session:
        return
    from pytest_harness_audit.audit import AuditChain, RecordDraft
    from pytest_harness_audit.gate.session_policy import SEALED_FILE_CHANGED

    draft = RecordDraft(
        tool=SEALED_FILE_CHANGED,
        category="proxy",
        kind="note",
        status="error",
        error_message=f"the proxy refused to serve: {reason}",
    )
    with (
        contextlib.suppress(HarnessAuditError, OSError),
        AuditChain(args.storage, args.session) as chain,
    ):
        chain.append(draft)


def _policy(args: argparse.Namespace) -> Any:
    from pytest_harness_audit.cli.policy_cmd import policy_from_args

    policy = policy_from_args(args)
    if args.policy_hash is not None and policy.content_hash != args.policy_hash:
        raise SealBroken(
            f"--policy {args.policy}: the policy changed since it was written for this proxy "
            f"(content hash {policy.content_hash[:12]}, expected {args.policy_hash[:12]}): "
            "refusing to serve"
        )
    return policy


def _open_gate(
    storage: Path, session_id: str, policy: Any, root: str | None, *, social: bool = False
) -> Any:
    """The proxy's gate with the watches of every in-process door (:mod:`.door_watches`):
    the workspace's ones with ``root``, the session's post store with ``social``."""
    from pytest_harness_audit.doors.chain_faults import GuardedGate
    from pytest_harness_audit.gate.console import consoles
    from pytest_harness_audit.gate.record_scrub import RecordScrub
    from pytest_harness_audit.session.door_watches import post_store_of, watch_calls

    # a chain changed under the proxy refuses the calls after it (a tool error, no traceback)
    gate = GuardedGate.open(storage_dir=storage, session_id=session_id, policy=policy, root=root)
    gate.observers.extend(consoles(sys.stderr, policy.audit_level))  # record lines on stderr
    # no seeds: a proxy builds no workspace from a template (the harness that started one
    # watches its own seeds around the agent's run)
    store = post_store_of(storage, session_id) if social else None
    watches = watch_calls(gate, root=root, post_store=store)
    if root is not None:
        # every string of every record, the parts of a split value included
        gate.chain.builder.scrub = RecordScrub(gate.inspectors, kept=watches.kept)
    return gate


def _send_message_tool(
    names: str, gate: Any, policy: Any, storage: str, session_id: str
) -> LocalTool:
    from pytest_harness_audit.doors.social import (
        SocialSession,
        firewall_from_policy,
        parse_harness_agents,
        send_message_local_tool,
    )
    from pytest_harness_audit.gate.post_store_watch import PostStoreWatch

    if not any(isinstance(inspector, PostStoreWatch) for inspector in gate.inspectors):
        # a program run by a call could write the store past the firewall, unseen
        raise UsageError("proxy: a gate serving send_message must watch its post store")
    agents = parse_harness_agents(tuple(n for n in names.split(",") if n), {})
    session = SocialSession(
        gate,
        Path(storage) / "social" / session_id,
        agents[0],
        agents[1:],
        firewall=firewall_from_policy(policy),
    )
    return send_message_local_tool(session)


def _workspace_tools(workspace: Path, policy: Any) -> list[LocalTool]:
    if not workspace.is_dir():
        raise UsageError(f"--workspace {workspace}: not a directory")
    from pytest_harness_audit.doors.proxy.workspace_tools import workspace_tools
    from pytest_harness_audit.tools.toolbox import ToolBox

    root = workspace.resolve()

    def read_denied(path: str) -> bool:  # Grep must not show what a Read may not open
        return bool(policy.evaluate("Read", {"file_path": path}, root=str(root)).blocked)

    return workspace_tools(root, ToolBox(root, withhold=read_denied))


def _new_session_id() -> str:
    return f"proxy-{time.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(3)}"


async def _serve(proxy: RecordingProxy, http: tuple[str, int] | None, session_id: str) -> None:
    import anyio

    from pytest_harness_audit.doors.proxy import HttpEndpoint
    from pytest_harness_audit.doors.proxy.core import report_to_stderr

    async with proxy, anyio.create_task_group() as group:
        group.start_soon(_stop_on_signal, group.cancel_scope)
        if http is None:
            report_to_stderr(f"harness-audit proxy: serving stdio session={session_id}")
            await proxy.serve_stdio()
        else:

            def announce(endpoint: HttpEndpoint) -> None:
                report_to_stderr(f"{endpoint.ready_line()} session={session_id}")

            host, port = http
            await proxy.serve_http(host=host, port=port, on_ready=announce)
        group.cancel_scope.cancel()


async def _stop_on_signal(scope: Any) -> None:
    """SIGTERM/SIGINT cancel ``scope`` (serving), so the upstream processes are stopped too."""
    import anyio

    if sys.platform == "win32":  # pragma: no cover - no signal receivers there
        return
    with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
        async for _ in signals:
            scope.cancel()
            return


def _harness_error_in(exc: BaseException) -> HarnessAuditError | None:
    """The first ``HarnessAuditError`` inside (possibly nested) exception groups."""
    if isinstance(exc, HarnessAuditError):
        return exc
    for inner in getattr(exc, "exceptions", ()):
        found = _harness_error_in(inner)
        if found is not None:
            return found
    return None
