"""A recording proxy bound to a harness session: what the ``recording_proxy`` fixture returns.

Calls through it are gated by the session's policy and recorded in the session's chain, so they
show up in ``harness.calls()``, the verdict and the markers exactly like scripted calls.
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from pytest_harness_audit.errors import UsageError
from pytest_harness_audit.gate.console import RecordConsole

if TYPE_CHECKING:
    from pytest_harness_audit.audit.chain import AuditChain
    from pytest_harness_audit.doors.proxy import BackgroundProxy, LocalTool, UpstreamSpec
    from pytest_harness_audit.doors.proxy.replay import CassetteTape
    from pytest_harness_audit.doors.social import SocialSession
    from pytest_harness_audit.gate import Gate
    from pytest_harness_audit.gate.inspection import SessionInspection
    from pytest_harness_audit.policy import Policy
    from pytest_harness_audit.social.secret_ledger import SecretLedger
    from pytest_harness_audit.tools.toolbox import ToolBox


class ProxiedSession(Protocol):
    """What a recording proxy needs of its session (a ``Harness``): its policy, gate, chain,
    workspace, tools, secret ledger and social door."""

    @property
    def session_id(self) -> str:
        """The session's id (the proxy's gate appends to the same chain)."""
        ...

    @property
    def storage_dir(self) -> Path:
        """Where the session's chain and policy files are stored."""
        ...

    @property
    def root(self) -> Path:
        """The workspace directory."""
        ...

    @property
    def policy(self) -> Policy:
        """The session's policy."""
        ...

    @property
    def gate(self) -> Gate:
        """The session's gate (its classifier, clock and inspectors are shared)."""
        ...

    @property
    def chain(self) -> AuditChain:
        """The session's chain."""
        ...

    @property
    def toolbox(self) -> ToolBox:
        """The workspace tools the proxy serves."""
        ...

    @property
    def secrets(self) -> SecretLedger:
        """The session's secret ledger (the proxy's gate notes what its calls saw)."""
        ...

    @property
    def inspection(self) -> SessionInspection:
        """The session's inspection (its registry knows the workspace's secrets)."""
        ...

    @property
    def social(self) -> SocialSession:
        """The session's social door (served as ``send_message`` with ``social=True``)."""
        ...


def upstream_specs(
    upstream: Sequence[Sequence[str]] | Sequence[str] | Mapping[str, Any],
) -> list[UpstreamSpec]:
    """Upstreams from an argv, a list of argvs, or an ``{"mcpServers": …}`` document."""
    from pytest_harness_audit.doors.proxy import parse_upstreams_config, upstream_from_argv

    if isinstance(upstream, Mapping):
        return list(parse_upstreams_config(upstream, source="recording_proxy(upstream=…)"))
    items = list(upstream)
    if not items:
        return []
    if all(isinstance(word, str) for word in items):
        return [upstream_from_argv([str(w) for w in items])]
    specs: list[UpstreamSpec] = []
    for argv in items:
        if isinstance(argv, str) or not all(isinstance(w, str) for w in argv):
            raise UsageError(
                f"recording_proxy: upstream must be an argv (list of strings), a "
                f"list of argvs or an mcpServers mapping; got {argv!r}"
            )
        specs.append(upstream_from_argv(list(argv)))
    return specs


class RecordingProxySession:
    """A running proxy (streamable HTTP on loopback, its own thread) for one harness session.

    ``url`` and ``token`` reach it over HTTP; ``relay_command`` is the argv of a stdio relay to
    it; ``stdio_command`` is the argv of an equivalent ``harness-audit proxy`` process an MCP
    client can start itself, outside the test (the files it reads are written when the proxy
    starts); ``mcp_config()`` is the standard ``{"mcpServers": …}`` document for HTTP or the
    relay.
    """

    def __init__(
        self,
        harness: ProxiedSession,
        upstream: Sequence[Sequence[str]] | Sequence[str] | Mapping[str, Any] = (),
        *,
        workspace_tools: bool = True,
        call_timeout: float | None = None,
        local_tools: Sequence[LocalTool] = (),
        social: bool = False,
        record: str | Path | None = None,
        replay: str | Path | None = None,
        cassette: str | Path | None = None,
        record_mode: str = "none",
        match_on: Any = None,
        pin: str | Path | None = None,
    ) -> None:
        from pytest_harness_audit.doors.chain_faults import GuardedGate
        from pytest_harness_audit.doors.proxy import BackgroundProxy, in_workspace
        from pytest_harness_audit.doors.proxy.workspace_tools import workspace_tools as make_tools

        self.harness = harness
        self._upstream = upstream
        # stdio upstreams start in the workspace: `--repository .` is the workspace
        self._specs = in_workspace(upstream_specs(upstream), harness.root)
        #: The cassette this proxy records or replays (``None``: neither).
        self.tape = _tape(harness, record, replay, cassette, record_mode, match_on)
        if self.tape is not None:
            from pytest_harness_audit.doors.proxy.replay import taped_specs

            self._specs = taped_specs(self._specs, self.tape)
        self._workspace_tools = workspace_tools
        self._call_timeout = call_timeout
        tools = list(local_tools)
        #: The stdio form's ``--social LOCAL,PEER,…`` (empty: no ``send_message``).
        self._social_agents: tuple[str, ...] = ()
        if social:
            from pytest_harness_audit.doors.social import send_message_local_tool

            endpoint = harness.social.endpoint
            self._social_agents = (endpoint.local_agent, *sorted(endpoint.registry))
            tools.append(send_message_local_tool(harness.social))
        if workspace_tools:
            tools.extend(make_tools(harness.root, harness.toolbox))
        if not self._specs and not tools:
            raise UsageError("recording_proxy: give upstream servers or keep workspace tools")
        # a gate of its own on the same session: the proxy thread uses it, the chain's lock
        # serialises appends with the test's gate; a failed append fails the session's verdict
        self.gate = GuardedGate(
            harness.policy,
            _reopen_chain(harness),
            root=str(harness.root),
            door="proxy",
            classifier=harness.gate.classifier,
            clock=harness.gate.clock,
            faults=getattr(harness, "chain_faults", None),
        )
        # the test's scripted approver (harness.approver, the marker) answers here too, first
        self.gate.approvals.follow(harness.gate.approvals)
        self.gate.observers.append(harness.secrets.note_from)
        # (each gate watches for lifts during its own calls: not the session gate's watch)
        self.gate.inspectors.extend(
            i for i in harness.gate.inspectors if i is not harness.gate.lift_watch
        )
        # the session's record lines (-v under pytest) cover the proxy's records too
        self.gate.observers.extend(
            o for o in harness.gate.observers if isinstance(o, RecordConsole)
        )
        #: The pin file the proxy checks (written at the first listing when missing).
        self.pin = Path(pin) if pin is not None else None
        self._proxy: BackgroundProxy = BackgroundProxy(
            self.gate,
            self._specs,
            local_tools=tools,
            call_timeout=call_timeout,
            **_pin_options(self.pin, self._specs),
        )
        self._stdio_dir = harness.storage_dir / "policies"
        self._started: tuple[Any, list[str] | UsageError] | None = None

    def start(self) -> RecordingProxySession:
        """Start serving (HTTP on loopback, its own thread) and write the stdio command's files.

        The constructor only configures; ``harness.start_proxy`` and the ``recording_proxy``
        fixture start it.
        """
        if self._started is None:
            endpoint = self._proxy.start()
            self._started = (endpoint, self._write_stdio_files())
        return self

    @property
    def _endpoint(self) -> Any:
        if self._started is None:
            raise UsageError("recording proxy: not started (call start() first)")
        return self._started[0]

    @property
    def _stdio(self) -> list[str] | UsageError:
        if self._started is None:
            raise UsageError("recording proxy: not started (call start() first)")
        return self._started[1]

    @property
    def url(self) -> str:
        """The streamable-HTTP endpoint (loopback)."""
        return str(self._endpoint.url)

    @property
    def token(self) -> str:
        """The bearer token every request must carry."""
        return str(self._endpoint.token)

    @property
    def headers(self) -> dict[str, str]:
        """``{"Authorization": "Bearer …"}``."""
        return dict(self._endpoint.headers)

    @property
    def relay_command(self) -> list[str]:
        """argv of a ``harness-audit relay`` to this proxy: stdio for an agent that starts its
        MCP server itself, with every call still judged here (its token goes in the
        environment variable ``HARNESS_AUDIT_RELAY_TOKEN``; :meth:`mcp_config` sets it)."""
        from pytest_harness_audit.doors.proxy.relay import relay_command

        return relay_command(self.url)

    @property
    def stdio_command(self) -> list[str]:
        """argv of a ``harness-audit proxy`` serving the same session over stdio.

        Its policy and upstream files were written when the proxy started; reading this writes
        nothing. A proxy of several upstream argvs has no such command (``UsageError``).
        """
        if isinstance(self._stdio, UsageError):
            raise self._stdio
        return list(self._stdio)

    def _write_stdio_files(self) -> list[str] | UsageError:
        """Write the policy (and ``mcpServers``) files an equivalent stdio proxy reads; return
        its argv, or the error that says why there is none."""
        from pytest_harness_audit.doors.proxy import proxy_command

        upstream: list[str] = []
        config = None
        if self.tape is not None:
            return UsageError("stdio_command does not record or replay a cassette")
        if isinstance(self._upstream, Mapping):
            config = self._stdio_dir / f"{self.harness.chain.session_id}.mcp.json"
        elif self._upstream and all(isinstance(w, str) for w in self._upstream):
            upstream = [_in_root(str(w), self.harness.root) for w in self._upstream]
        elif self._upstream:
            return UsageError("stdio_command serves one upstream argv or an mcpServers mapping")
        policy_file = self._stdio_dir / f"{self.harness.chain.session_id}.proxy-policy.json"
        policy_file.parent.mkdir(parents=True, exist_ok=True)
        policy_file.write_text(json.dumps(self.harness.policy.to_dict()), encoding="utf-8")
        config_sha256 = None
        if config is not None:
            text = _in_root(json.dumps(self._upstream), self.harness.root, json_text=True)
            config.write_bytes(text.encode("utf-8"))
            config_sha256 = hashlib.sha256(text.encode("utf-8")).hexdigest()
        # the files lie in the store, which a call's own process can reach by a name built at
        # run time; the argv, which the agent's client runs as given, seals them
        return proxy_command(
            storage=self.harness.storage_dir,
            session=self.harness.session_id,
            policy=policy_file,
            config=config,
            workspace=self.harness.root if self._workspace_tools else None,
            upstream=upstream,
            call_timeout=self._call_timeout,
            social=self._social_agents,
            python=sys.executable,
            pin=self.pin,
            policy_hash=self.harness.policy.content_hash,
            config_sha256=config_sha256,
        )

    def mcp_config(self, transport: str = "http", name: str = "harness") -> dict[str, Any]:
        """The ``{"mcpServers": {name: …}}`` document for this proxy (``http`` or ``stdio``)."""
        from pytest_harness_audit.doors.proxy import (
            http_server_entry,
            mcp_config,
            stdio_server_entry,
        )
        from pytest_harness_audit.doors.proxy.relay import TOKEN_VARIABLE

        if transport == "http":
            return mcp_config(http_server_entry(self._endpoint), name=name)
        if transport == "stdio":
            env = {TOKEN_VARIABLE: self.token}
            return mcp_config(stdio_server_entry(self.relay_command, env), name=name)
        raise UsageError(f"transport must be 'http' or 'stdio', got {transport!r}")

    def write_mcp_config(self, path: Path, transport: str = "http") -> Path:
        """Write :meth:`mcp_config` to ``path`` (for agents that read a config file)."""
        path.write_text(json.dumps(self.mcp_config(transport), indent=2), encoding="utf-8")
        return path

    def stop(self) -> None:
        """Stop the proxy and its upstream processes (idempotent)."""
        self._proxy.stop()
        self.gate.close()
        if self.tape is not None:
            self.tape.save()


def _pin_options(pin: Path | None, specs: Sequence[UpstreamSpec]) -> dict[str, Any]:
    """The proxy's ``pins``/``pin_path`` for ``recording_proxy(pin=…)`` (none without it)."""
    if pin is None:
        return {}
    from pytest_harness_audit.doors.proxy.core import report_to_stderr
    from pytest_harness_audit.doors.proxy.pin_guard import load_pin_file

    pins = load_pin_file(pin, [spec.name for spec in specs], report_to_stderr)
    return {"pins": pins, "pin_path": pin}


def _tape(
    harness: ProxiedSession,
    record: str | Path | None,
    replay: str | Path | None,
    cassette: str | Path | None,
    record_mode: str,
    match_on: Any,
) -> CassetteTape | None:
    """The cassette of ``record=`` / ``replay=`` / ``cassette=`` (with ``record_mode``)."""
    from pytest_harness_audit.doors.proxy.cassette import DEFAULT_MATCH_ON
    from pytest_harness_audit.doors.proxy.core import report_to_stderr
    from pytest_harness_audit.doors.proxy.replay import CassetteTape, choose_mode
    from pytest_harness_audit.inspect.nested_strings import map_strings

    chosen = choose_mode(
        record=Path(record) if record is not None else None,
        replay=Path(replay) if replay is not None else None,
        cassette=Path(cassette) if cassette is not None else None,
        record_mode=record_mode,
    )
    if chosen is None:
        return None
    registry = harness.inspection.inspector.secrets

    def redact(value: object) -> object:
        # secrets the session noted, then the workspace's known secrets in any form, then
        # what the chain's records redact besides (a part of a known value): a cassette is
        # committed, so it holds no more of a secret than a record does
        value = map_strings(harness.secrets.redact(value), registry.redact)
        scrub = getattr(harness.chain.builder.scrub, "text", None)
        return map_strings(value, scrub) if callable(scrub) else value

    return CassetteTape(
        chosen[0],
        chosen[1],
        workspace=harness.root,
        redact=redact,
        match_on=DEFAULT_MATCH_ON if match_on is None else match_on,
        report=report_to_stderr,
    )


def _reopen_chain(harness: ProxiedSession) -> Any:
    from pytest_harness_audit.audit.chain import AuditChain

    chain = AuditChain(
        harness.storage_dir, harness.session_id, audit_level=harness.chain.audit_level
    )
    chain.builder.scrub = harness.chain.builder.scrub  # the same redaction of every record
    return chain


def _in_root(text: str, root: Path, *, json_text: bool = False) -> str:
    """``text`` with ``{workspace}`` replaced by the workspace path (the stdio proxy may run
    without ``--workspace``, and its upstreams must still reach the same directory)."""
    from pytest_harness_audit.doors.proxy.config import WORKSPACE_PLACEHOLDER

    path = json.dumps(str(root))[1:-1] if json_text else str(root)
    return text.replace(WORKSPACE_PLACEHOLDER, path)
