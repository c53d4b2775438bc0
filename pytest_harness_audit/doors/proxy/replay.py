"""Record a proxy session's upstream exchanges to a cassette, or serve them from one.

``CassetteTape(path, "record")`` watches each connected upstream and writes the cassette when
closed; ``CassetteTape(path, "replay")`` stands a ``ReplayUpstream`` in for each recorded
upstream, so no upstream process or connection is made; ``CassetteTape(path, "new")`` replays
what the cassette holds and records (appends) what it lacks, starting the real upstream only
then. The tape reaches the upstream pool on the upstream specs (``taped_specs``).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, cast

import mcp_types as types
from mcp.shared.exceptions import MCPError
from pydantic import BaseModel

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
    write_cassette,
)
from pytest_harness_audit.doors.proxy.cassette_kinds import dump
from pytest_harness_audit.doors.proxy.cassette_sessions import TapedSession
from pytest_harness_audit.doors.proxy.client_requests import UpstreamAnswer, UpstreamRequest
from pytest_harness_audit.doors.proxy.config import HttpUpstream, StdioUpstream, UpstreamSpec
from pytest_harness_audit.doors.proxy.replay_upstream import ReplayUpstream, answer_form
from pytest_harness_audit.doors.proxy.upstream import ClientRequestSink, ReportLine, Upstream

TapeMode = Literal["record", "replay", "new"]
#: ``--harness-audit-record`` values, as pytest-recording's ``--record-mode``.
RECORD_MODES = ("none", "new", "all")
REPLAYED_COMMAND = "(replayed from cassette)"


def _keep(value: object) -> object:
    return value


class CassetteTape:
    """One cassette, recorded (``record``), replayed (``replay``) or both (``new``: replayed,
    and what it lacks recorded from the real upstream and appended).

    ``workspace`` is written as ``{workspace}``; ``redact`` replaces secrets before writing;
    ``match_on`` (field names or a callable ``(recorded, call) -> bool``) picks the recorded
    exchange a request gets; ``report`` receives the one line of an unmatched request.
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
        self._appended = False
        #: What each upstream asked the client during the calls it is running.
        self._asked: dict[str, list[dict[str, Any]]] = {}
        self.cassette = load_cassette(path) if mode != "record" else Cassette()

    @property
    def replaying(self) -> bool:
        """True when exchanges are served from the cassette."""
        return self.mode != "record"

    def upstream_names(self) -> list[str]:
        """The recorded upstreams, in recording order."""
        return list(self.cassette.upstreams)

    def stands_in(self, spec: UpstreamSpec) -> bool:
        """True when ``spec``'s upstream is served from the cassette."""
        return self.mode == "replay" or (
            self.mode == "new" and spec.name in self.cassette.upstreams
        )

    # recording

    def watch(self, upstream: Upstream) -> None:
        """Record ``upstream``'s handshake now and its exchanges from now on.

        With ``new``, an upstream the cassette already holds keeps its recorded handshake.
        """
        known = self.mode == "new" and upstream.name in self.cassette.upstreams
        if not known:
            info = upstream.session.server_info
            self.cassette.upstreams[upstream.name] = RecordedUpstream(
                name=upstream.name,
                server_info=dump(info) if info else None,
                capabilities=dump(upstream.capabilities),
                instructions=upstream.instructions,
            )
            self._appended = True
        upstream.tape = self
        if not isinstance(upstream.session, TapedSession):
            upstream.session = cast(Any, TapedSession(upstream.session, upstream.name, self))

    def listed(self, upstream: Upstream, tools: list[types.Tool]) -> None:
        """Keep ``upstream``'s latest listing."""
        with self._lock:
            recorded = self.cassette.upstreams.setdefault(
                upstream.name, RecordedUpstream(upstream.name)
            )
            recorded.tools = [dump(tool) for tool in tools]

    def called(
        self,
        upstream: Upstream,
        name: str,
        arguments: dict[str, Any],
        answer: types.CallToolResult | MCPError,
    ) -> None:
        """Append one call, its result or error, and what the upstream asked the client."""
        interaction = Interaction(upstream.name, name, dict(arguments))
        with self._lock:
            interaction.client_requests = self._asked.pop(upstream.name, [])
        self._append(upstream.name, interaction, answer)

    def asked(self, upstream: Upstream, request: UpstreamRequest, answer: UpstreamAnswer) -> None:
        """Note a request ``upstream`` sent the client during a call, and the answer; it goes
        with the next call of that upstream to complete."""
        item = {"method": request.method, **({"params": dump(request.params)})}
        if not item["params"]:
            item.pop("params")
        item["answer"] = answer_form(answer)
        with self._lock:
            self._asked.setdefault(upstream.name, []).append(item)

    def exchanged(
        self,
        upstream_name: str,
        key: tuple[str, str, dict[str, Any]],
        answer: BaseModel | MCPError,
    ) -> None:
        """Append one resource, prompt or completion exchange."""
        method, name, arguments = key
        self._append(
            upstream_name, Interaction(upstream_name, name, arguments, method=method), answer
        )

    def _append(
        self, upstream_name: str, interaction: Interaction, answer: BaseModel | MCPError
    ) -> None:
        if isinstance(answer, MCPError):
            interaction.error = dump(answer.error)
        else:
            interaction.result = dump(answer)
        with self._lock:
            self.cassette.upstreams.setdefault(upstream_name, RecordedUpstream(upstream_name))
            self.cassette.interactions.append(interaction)
            # an appended exchange has been served: the same request again is recorded again
            self._used.add(len(self.cassette.interactions) - 1)
            self._appended = True

    def save(self) -> None:
        """Write the cassette when it was recorded or something was appended."""
        if self.mode == "record" or (self.mode == "new" and self._appended):
            with self._lock:
                write_cassette(
                    self.cassette, self.path, redact=self.redact, workspace=self.workspace
                )

    # replaying

    def replay_upstream(
        self, spec: UpstreamSpec, *, ask_client: ClientRequestSink | None = None
    ) -> ReplayUpstream:
        """The stand-in for the recorded upstream named like ``spec``."""
        recorded = self.cassette.upstreams.get(spec.name)
        if recorded is None:
            known = ", ".join(repr(name) for name in self.cassette.upstreams) or "none"
            raise CassetteError(
                f"cassette {self.path}: no upstream named {spec.name!r} (recorded: {known})"
            )
        live = self.mode == "new" and getattr(spec, "command", None) != REPLAYED_COMMAND
        return ReplayUpstream(spec, recorded, self, live=live, ask_client=ask_client)

    def answer(self, call: Interaction, *, repeat: bool = True) -> Interaction | None:
        """The recorded exchange for ``call``: the first unused match, else (``repeat``) the
        last match again."""
        key = Interaction(
            call.upstream,
            cast(str, self.as_recorded(call.name)),
            cast(dict[str, Any], self.as_recorded(call.arguments)),
            method=call.method,
        )
        with self._lock:
            matches = [
                index
                for index, recorded in enumerate(self.cassette.interactions)
                if recorded.method == key.method and self._matcher(recorded, key)
            ]
            unused = [index for index in matches if index not in self._used]
            if unused:
                chosen = unused[0]
            elif matches and repeat:
                chosen = matches[-1]
            else:
                return None
            self._used.add(chosen)
        return self.cassette.interactions[chosen]

    def unmatched(self, call: Interaction) -> str:
        """The one line naming an unmatched request."""
        name = f" {self.as_recorded(call.name)!r}" if call.name else ""
        return self.describe(
            f"no recorded call matches {call.method}{name} of upstream {call.upstream!r} "
            f"with arguments {self.as_recorded(call.arguments)!r}"
        )

    def describe(self, detail: str) -> str:
        """``detail`` as one line naming the cassette."""
        return f"cassette {self.path}: {detail}"

    def report(self, line: str) -> None:
        """Send one line to ``report`` (stderr under the proxy)."""
        if self._report is not None:
            self._report(f"harness-audit proxy: {line}")

    def as_recorded(self, value: object) -> object:
        """A live value as the cassette writes it (workspace token, secrets redacted)."""
        return self.redact(to_cassette_text(value, self.workspace))

    def as_served(self, value: object) -> Any:
        """A recorded value with ``{workspace}`` written as this workspace."""
        return from_cassette_text(value, self.workspace)


@dataclass(frozen=True)
class TapedStdio(StdioUpstream):
    """A stdio upstream whose exchanges a cassette records, or replays without starting it."""

    tape: CassetteTape | None = field(default=None, compare=False)


@dataclass(frozen=True)
class TapedHttp(HttpUpstream):
    """An HTTP upstream whose exchanges a cassette records."""

    tape: CassetteTape | None = field(default=None, compare=False)


def taped_specs(specs: Sequence[UpstreamSpec], tape: CassetteTape) -> list[UpstreamSpec]:
    """``specs`` carrying ``tape``; when replaying, the cassette's upstreams instead (with
    ``new``, the cassette's upstreams and then the given ones it lacks, each given one
    keeping its real command for what the cassette lacks)."""
    real = {spec.name: _taped(spec, tape) for spec in specs}
    if tape.mode == "record":
        return list(real.values())
    served: list[UpstreamSpec] = [
        real.pop(name) if tape.mode == "new" and name in real else _replayed(name, tape)
        for name in tape.upstream_names()
    ]
    return served + (list(real.values()) if tape.mode == "new" else [])


def _replayed(name: str, tape: CassetteTape) -> UpstreamSpec:
    return TapedStdio(name=name, command=REPLAYED_COMMAND, tape=tape)


def _taped(spec: UpstreamSpec, tape: CassetteTape) -> UpstreamSpec:
    if isinstance(spec, StdioUpstream):
        return TapedStdio(spec.name, spec.command, spec.args, spec.env, spec.cwd, tape)
    assert isinstance(spec, HttpUpstream)
    return TapedHttp(spec.name, spec.url, spec.headers, tape)


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
    appending what it lacks (``new_episodes``), ``all`` always records.
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
    if record_mode == "new":
        return cassette, "new"
    if not cassette.exists():
        raise CassetteError(
            f"cassette {cassette}: not found, and --harness-audit-record is 'none' "
            "(record it with --harness-audit-record=new)"
        )
    return cassette, "replay"
