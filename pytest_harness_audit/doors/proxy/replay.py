"""Record a proxy session's upstream exchanges to a cassette, or serve them from one.

``CassetteTape(path, "record")`` watches each connected upstream and writes the cassette when
closed; ``CassetteTape(path, "replay")`` stands a ``ReplayUpstream`` in for each recorded
upstream, so no upstream process or connection is made. The tape reaches the upstream pool on
the upstream specs (``taped_specs``).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, cast

import mcp_types as types
from mcp.shared.dispatcher import ProgressFnT
from mcp.shared.exceptions import MCPError

from pytest_harness_audit.doors.proxy.cassette import (
    DEFAULT_MATCH_ON,
    Cassette,
    CassetteError,
    Interaction,
    Matcher,
    RecordedUpstream,
    Redactor,
    from_cassette_text,
    load_cassette,
    make_matcher,
    to_cassette_text,
)
from pytest_harness_audit.doors.proxy.client_requests import CallOrigin
from pytest_harness_audit.doors.proxy.config import HttpUpstream, StdioUpstream, UpstreamSpec
from pytest_harness_audit.doors.proxy.upstream import ReportLine, Upstream

TapeMode = Literal["record", "replay"]
#: ``--harness-audit-record`` values, as pytest-recording's ``--record-mode``.
RECORD_MODES = ("none", "new", "all")
REPLAYED_COMMAND = "(replayed from cassette)"


def _keep(value: object) -> object:
    return value


class CassetteTape:
    """One cassette, recorded (``mode="record"``) or replayed (``mode="replay"``).

    ``workspace`` is written as ``{workspace}``; ``redact`` replaces secrets before writing;
    ``match_on`` (field names or a callable ``(recorded, call) -> bool``) picks the recorded call
    a replayed call gets; ``report`` receives the one line of an unmatched call.
    """

    def __init__(
        self,
        path: Path,
        mode: TapeMode,
        *,
        workspace: Path | None = None,
        redact: Redactor = _keep,
        match_on: Sequence[str] | Matcher = DEFAULT_MATCH_ON,
        report: ReportLine | None = None,
    ) -> None:
        self.path = path
        self.mode = mode
        self.workspace = workspace
        self.redact = redact
        self._matcher = make_matcher(match_on)
        self._report = report
        self._lock = threading.Lock()
        self._used: set[int] = set()
        self.cassette = load_cassette(path) if mode == "replay" else Cassette()

    @property
    def replaying(self) -> bool:
        """True when calls are served from the cassette."""
        return self.mode == "replay"

    def upstream_names(self) -> list[str]:
        """The recorded upstreams, in recording order."""
        return list(self.cassette.upstreams)

    # recording

    def watch(self, upstream: Upstream) -> None:
        """Record ``upstream``'s handshake now and its listings and calls from now on."""
        info = upstream.session.server_info
        self.cassette.upstreams[upstream.name] = RecordedUpstream(
            name=upstream.name,
            server_info=info.model_dump(mode="json", exclude_none=True) if info else None,
            capabilities=upstream.capabilities.model_dump(
                mode="json", by_alias=True, exclude_none=True
            ),
            instructions=upstream.instructions,
        )
        upstream.tape = self

    def listed(self, upstream: Upstream, tools: list[types.Tool]) -> None:
        """Keep ``upstream``'s latest listing."""
        with self._lock:
            recorded = self.cassette.upstreams.setdefault(
                upstream.name, RecordedUpstream(upstream.name)
            )
            recorded.tools = [
                tool.model_dump(mode="json", by_alias=True, exclude_none=True) for tool in tools
            ]

    def called(
        self,
        upstream: Upstream,
        name: str,
        arguments: dict[str, Any],
        answer: types.CallToolResult | MCPError,
    ) -> None:
        """Append one call and its result or error."""
        interaction = Interaction(upstream.name, name, dict(arguments))
        if isinstance(answer, MCPError):
            interaction.error = answer.error.model_dump(mode="json", exclude_none=True)
        else:
            interaction.result = answer.model_dump(mode="json", by_alias=True, exclude_none=True)
        with self._lock:
            self.cassette.upstreams.setdefault(upstream.name, RecordedUpstream(upstream.name))
            self.cassette.interactions.append(interaction)

    def save(self) -> None:
        """Write the recorded cassette (nothing when replaying)."""
        if self.mode == "record":
            with self._lock:
                self.cassette.save(self.path, redact=self.redact, workspace=self.workspace)

    # replaying

    def replay_upstream(self, spec: UpstreamSpec) -> ReplayUpstream:
        """The stand-in for the recorded upstream named like ``spec``."""
        recorded = self.cassette.upstreams.get(spec.name)
        if recorded is None:
            known = ", ".join(repr(name) for name in self.cassette.upstreams) or "none"
            raise CassetteError(
                f"cassette {self.path}: no upstream named {spec.name!r} (recorded: {known})"
            )
        return ReplayUpstream(spec, recorded, self)

    def answer(self, call: Interaction) -> Interaction | None:
        """The recorded call for ``call``: the first unused match, else the last match."""
        key = Interaction(
            call.upstream, call.tool, cast(dict[str, Any], self._as_recorded(call.arguments))
        )
        with self._lock:
            matches = [
                index
                for index, recorded in enumerate(self.cassette.interactions)
                if self._matcher(recorded, key)
            ]
            if not matches:
                return None
            unused = [index for index in matches if index not in self._used]
            chosen = unused[0] if unused else matches[-1]
            self._used.add(chosen)
        return self.cassette.interactions[chosen]

    def unmatched(self, call: Interaction) -> str:
        """The one line naming an unmatched call (also sent to ``report``)."""
        arguments = self._as_recorded(call.arguments)
        line = (
            f"cassette {self.path}: no recorded call matches tools/call {call.tool!r} "
            f"of upstream {call.upstream!r} with arguments {arguments!r}"
        )
        if self._report is not None:
            self._report(f"harness-audit proxy: {line}")
        return line

    def _as_recorded(self, value: object) -> object:
        return self.redact(to_cassette_text(value, self.workspace))

    def as_served(self, value: object) -> Any:
        """A recorded value with ``{workspace}`` written as this workspace."""
        return from_cassette_text(value, self.workspace)


class ReplayUpstream(Upstream):
    """An upstream served from a cassette: no process, no connection."""

    def __init__(self, spec: UpstreamSpec, recorded: RecordedUpstream, tape: CassetteTape) -> None:
        super().__init__(spec, cast(Any, None))
        self._recorded = recorded
        self._tape = tape

    @property
    def capabilities(self) -> types.ServerCapabilities:
        """The recorded tools capability (resources and prompts are not replayed)."""
        tools = self._recorded.capabilities.get("tools")
        return types.ServerCapabilities.model_validate({"tools": tools or {}})

    @property
    def instructions(self) -> str | None:
        """The recorded instructions."""
        return self._recorded.instructions

    async def list_tools(self) -> list[types.Tool]:
        """The recorded listing."""
        tools = self._tape.as_served(self._recorded.tools)
        return [types.Tool.model_validate(tool) for tool in tools]

    async def call_tool(
        self,
        name: str,
        arguments: dict[str, Any],
        *,
        progress: ProgressFnT | None = None,
        meta: types.RequestParamsMeta | None = None,
        origin: CallOrigin | None = None,
    ) -> types.CallToolResult:
        """The recorded result (or MCP error) of the matching call; an error result naming
        the call when none matches."""
        call = Interaction(self.name, name, dict(arguments))
        recorded = self._tape.answer(call)
        if recorded is None:
            message = self._tape.unmatched(call)
            return types.CallToolResult(
                content=[types.TextContent(type="text", text=message)], is_error=True
            )
        if recorded.error is not None:
            raise MCPError.from_error_data(
                types.ErrorData.model_validate(self._tape.as_served(recorded.error))
            )
        return types.CallToolResult.model_validate(self._tape.as_served(recorded.result))


@dataclass(frozen=True)
class TapedStdio(StdioUpstream):
    """A stdio upstream whose exchanges a cassette records, or replays without starting it."""

    tape: CassetteTape | None = field(default=None, compare=False)


@dataclass(frozen=True)
class TapedHttp(HttpUpstream):
    """An HTTP upstream whose exchanges a cassette records."""

    tape: CassetteTape | None = field(default=None, compare=False)


def taped_specs(specs: Sequence[UpstreamSpec], tape: CassetteTape) -> list[UpstreamSpec]:
    """``specs`` carrying ``tape``; when replaying, the cassette's upstreams instead."""
    if tape.replaying:
        return [
            TapedStdio(name=name, command=REPLAYED_COMMAND, tape=tape)
            for name in tape.upstream_names()
        ]
    taped: list[UpstreamSpec] = []
    for spec in specs:
        if isinstance(spec, StdioUpstream):
            taped.append(TapedStdio(spec.name, spec.command, spec.args, spec.env, spec.cwd, tape))
        else:
            taped.append(TapedHttp(spec.name, spec.url, spec.headers, tape))
    return taped


def choose_mode(
    *,
    record: Path | None,
    replay: Path | None,
    cassette: Path | None,
    record_mode: str = "none",
) -> tuple[Path, TapeMode] | None:
    """Which cassette a proxy uses and how.

    ``record=`` always records and ``replay=`` always replays; ``cassette=`` follows
    ``record_mode`` like pytest-recording's ``--record-mode``: ``none`` replays (a missing
    cassette is an error), ``new`` records a missing cassette and replays an existing one,
    ``all`` always records.
    """
    given = [p for p in (record, replay, cassette) if p is not None]
    if len(given) > 1:
        raise CassetteError("recording_proxy: give only one of record=, replay= and cassette=")
    if record is not None:
        return record, "record"
    if replay is not None:
        return replay, "replay"
    if cassette is None:
        return None
    if record_mode not in RECORD_MODES:
        raise CassetteError(
            f"--harness-audit-record {record_mode!r}: expected one of {', '.join(RECORD_MODES)}"
        )
    if record_mode == "all" or (record_mode == "new" and not cassette.exists()):
        return cassette, "record"
    if not cassette.exists():
        raise CassetteError(
            f"cassette {cassette}: not found, and --harness-audit-record is 'none' "
            "(record it with --harness-audit-record=new)"
        )
    return cassette, "replay"
