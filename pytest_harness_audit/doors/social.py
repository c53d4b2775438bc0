"""The social harness inside an audited session: every send gated first, every event recorded.

A :class:`SocialSession` wraps one :class:`~.endpoint.SocialEndpoint` around a session's
:class:`~pytest_harness_audit.gate.Gate`::

    send(to, text) → gate.decide("send_message", {to, text, collective?})
        blocked  → one ``blocked`` record, :class:`SendBlockedError` (the gate's message)
        allowed  → the endpoint sends; each :class:`~.events.SocialEvent` it reports becomes
                   one chain record (tool ``send_message``, category ``message``,
                   target = the canonical address) with the top-level fields ``social`` (and
                   ``firewall`` when a check ran)

The send's own event is recorded under the send's decision; events that arrive without one
(collective results at a deadline or after a peer's answer) are decided anew on
``("send_message", {to, operationId})`` and recorded, never blocked. Status: ``sent``,
``pending`` and ``replayed`` sends are ``success``; ``outcome-unknown`` is ``error``; a firewall
refusal in enforcement mode is ``blocked`` (a FAIL verdict); every other typed refusal is
``error`` with its reason.

Secret values the session read (see :mod:`.secret_ledger`) go to the firewall before each send
and appear in the records only as ``[secret:<fingerprint>]``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from pytest_harness_audit.errors import PolicyError
from pytest_harness_audit.gate import Gate, GateDecision
from pytest_harness_audit.policy import Policy
from pytest_harness_audit.social.addresses import canonical_address
from pytest_harness_audit.social.deadline_clock import DeadlineClock
from pytest_harness_audit.social.endpoint import SocialEndpoint
from pytest_harness_audit.social.errors import (
    REFUSED_CODE,
    SendError,
    SocialConfigError,
    SocialSendFailure,
    SocialToolError,
)
from pytest_harness_audit.social.events import FailureDelivery, SendResult, SocialEvent
from pytest_harness_audit.social.firewall import MessageFirewall
from pytest_harness_audit.social.mcp_tool import SEND_MESSAGE_TOOL_NAME, call_send_message
from pytest_harness_audit.social.peers import Peer
from pytest_harness_audit.social.secret_ledger import SecretLedger, secret_values
from pytest_harness_audit.social.send_assertions import (
    assert_not_sent,
    assert_refused,
    assert_sent,
    check_refused,
    parse_expect_refused,
    parse_harness_agents,
    recorded_sends,
    refused_records,
    sent_records,
    social_records,
)
from pytest_harness_audit.social.store import Post

if TYPE_CHECKING:
    from pytest_harness_audit.doors.proxy.local_tools import LocalTool

__all__ = [
    "INPUT_INVALID",
    "MESSAGE_CATEGORY",
    "POLICY_BLOCKED",
    "SecretLedger",
    "SendBlockedError",
    "SocialSession",
    "assert_not_sent",
    "assert_refused",
    "assert_sent",
    "check_refused",
    "firewall_from_policy",
    "parse_expect_refused",
    "parse_harness_agents",
    "recorded_sends",
    "refused_records",
    "secret_values",
    "send_message_local_tool",
    "sent_records",
    "social_records",
]

#: The category every social record carries (the policy maps ``send_message`` to it).
MESSAGE_CATEGORY = "message"
#: The reason of a send the gate blocked (policy deny or quarantine), in records and MCP data.
POLICY_BLOCKED = "policy-blocked"
#: The reason of a call the endpoint refused before it could report (bad runtime options).
INPUT_INVALID = "input-invalid"

_T = TypeVar("_T")


class SendBlockedError(SocialSendFailure):
    """The gate blocked a send (policy deny or immune quarantine); nothing was posted.

    The message is the gate's (``[blocked] [web4-policy] …`` or ``[blocked] [web4-immune] …``),
    which is what the model reads.
    """

    def __init__(self, message: str, *, quarantined: bool = False) -> None:
        self.quarantined = quarantined
        super().__init__(message)

    def error_data(self) -> dict[str, object]:
        """``{reason: "policy-blocked", detail}``."""
        return {"reason": POLICY_BLOCKED, "detail": self.message}


def firewall_from_policy(policy: Policy) -> MessageFirewall | None:
    """The message firewall of ``policy``'s ``firewall:`` section (None without one).

    Raises :class:`~pytest_harness_audit.errors.PolicyError` naming the policy file (or policy
    name) and the field ``firewall`` for a bad section.
    """
    config = policy.firewall
    if config is None:
        return None
    try:
        return MessageFirewall.from_mapping(config)
    except SocialConfigError as error:
        raise PolicyError(
            str(error), source=policy.source or f"policy {policy.name!r}", field="firewall"
        ) from None


class HarnessLike(Protocol):
    """What :meth:`SocialSession.for_harness` reads from a harness."""

    @property
    def gate(self) -> Gate:
        """The session's gate."""

    @property
    def storage_dir(self) -> Path:
        """Where the session's chain lives."""

    @property
    def session_id(self) -> str:
        """The session id."""

    @property
    def policy(self) -> Policy:
        """The session's policy (its ``firewall:`` section configures the firewall)."""

    @property
    def agents(self) -> Sequence[str]:
        """The agents' names, the local one first."""

    @property
    def secrets(self) -> SecretLedger:
        """The session's ledger of secret values read so far."""


@dataclasses.dataclass
class _Live:
    """The decision of the send running on this thread, until its event is recorded."""

    decision: GateDecision
    used: bool = False


class SocialSession:
    """One audited session's social endpoint: gated sends, recorded events, scripted peers.

    ``storage_dir`` holds the post store; ``local_agent`` and ``peers`` are the agents' names;
    ``firewall`` (see :func:`firewall_from_policy`) checks every send; ``clock`` drives
    deadlines (default: the system clock); ``secrets`` is the session's ledger of secret values
    read so far (a fresh one by default); with ``redact_secrets`` (the default) records show a
    noted secret as ``[secret:<fingerprint>]``.
    """

    def __init__(
        self,
        gate: Gate,
        storage_dir: Path,
        local_agent: str,
        peers: Sequence[str],
        *,
        firewall: MessageFirewall | None = None,
        clock: DeadlineClock | None = None,
        secrets: SecretLedger | None = None,
        redact_secrets: bool = True,
    ) -> None:
        self.gate = gate
        self.firewall = firewall
        self.secrets = secrets if secrets is not None else SecretLedger()
        self.redact_secrets = redact_secrets
        self._forwarded = 0
        self._secrets_lock = threading.Lock()
        self._thread = threading.local()
        self.endpoint = SocialEndpoint(
            storage_dir, local_agent, peers, firewall=firewall, clock=clock, on_event=self._on_event
        )

    @classmethod
    def for_harness(
        cls, harness: HarnessLike, *, clock: DeadlineClock | None = None
    ) -> SocialSession:
        """The social session of ``harness``: its gate, ``<storage>/social/<session id>``, its
        agents (first = local), its policy's firewall and its secret ledger."""
        agents = tuple(harness.agents)
        if not agents:
            raise SocialConfigError("the harness names no agents: give at least the local one")
        return cls(
            harness.gate,
            Path(harness.storage_dir) / "social" / harness.session_id,
            agents[0],
            agents[1:],
            firewall=firewall_from_policy(harness.policy),
            clock=clock,
            secrets=harness.secrets,
        )

    # -- lifecycle ------------------------------------------------------------------------------

    @property
    def local_agent(self) -> str:
        """The local agent's name."""
        return self.endpoint.local_agent

    def close(self) -> None:
        """Close the post store."""
        self.endpoint.close()

    def __enter__(self) -> SocialSession:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- sending --------------------------------------------------------------------------------

    def send(
        self,
        to: str,
        text: str,
        collective: Mapping[str, object] | None = None,
        *,
        failure_delivery: FailureDelivery = "result",
        idempotency_key: str | None = None,
    ) -> SendResult:
        """Send ``text`` to ``to`` (a multicast, or the question of a gather/all_gather
        ``collective``), gated and recorded. Raises :class:`SendBlockedError` or the endpoint's
        typed refusals (``SendError``, ``CollectiveError``, ``FirewallSendError`` …)."""
        data: dict[str, object] = {"to": to, "text": text}
        if collective is not None:
            data["collective"] = collective
        return self.send_input(
            data, failure_delivery=failure_delivery, idempotency_key=idempotency_key
        )

    def respond(
        self,
        to: str,
        response: Mapping[str, object],
        *,
        failure_delivery: FailureDelivery = "result",
        idempotency_key: str | None = None,
    ) -> SendResult:
        """Answer the question open in ``to``'s conversation (``{action: "accept", content}``
        or ``{action: "decline"}``), gated and recorded."""
        return self.send_input(
            {"to": to, "collectiveResponse": response},
            failure_delivery=failure_delivery,
            idempotency_key=idempotency_key,
        )

    def send_input(
        self,
        input: Mapping[str, object],
        *,
        failure_delivery: FailureDelivery = "result",
        idempotency_key: str | None = None,
    ) -> SendResult:
        """Send one exact input, ``{to, text, collective?}`` or ``{to, collectiveResponse}``."""
        return self._gated(
            input,
            lambda: self.endpoint.send_input(
                input, failure_delivery=failure_delivery, idempotency_key=idempotency_key
            ),
        )

    def send_message_text(
        self,
        to: str,
        text: str,
        *,
        failure_delivery: FailureDelivery = "result",
        idempotency_key: str | None = None,
    ) -> SendResult:
        """Send a model's message text as the operation it states (``parse_message_text``)."""
        return self._gated(
            {"to": to, "text": text},
            lambda: self.endpoint.send_message_text(
                to, text, failure_delivery=failure_delivery, idempotency_key=idempotency_key
            ),
        )

    def mcp_send_message(
        self, arguments: Mapping[str, object] | None, meta: Mapping[str, object] | None = None
    ) -> dict[str, object]:
        """The ``send_message`` MCP tool, gated and recorded: ``{input}`` and the request's
        ``_meta`` in, ``{}`` / ``{operationId}`` (+ ``guidance``) out. Every refusal raises
        :class:`~.errors.SocialToolError`; a gate block has data ``{reason: "policy-blocked",
        detail}``."""
        send_input = arguments.get("input") if isinstance(arguments, Mapping) else None
        try:
            return self._gated(
                send_input, lambda: call_send_message(self.endpoint, arguments, meta)
            )
        except SendBlockedError as error:
            raise SocialToolError(REFUSED_CODE, error.message, error.error_data()) from None

    # -- reading --------------------------------------------------------------------------------

    def peer(self, name: str) -> Peer:
        """The scripted peer ``name`` (``bob`` or ``agent:bob``)."""
        return self.endpoint.peer(name)

    def posts(self, to: str | None = None, *, sender: str | None = None) -> list[Post]:
        """Stored posts, oldest first: all, or those of ``to``'s conversation."""
        return self.endpoint.posts(to, sender=sender)

    def inbox(self) -> list[dict[str, object]]:
        """The local agent's inbound items (multicasts, requests, results, failures)."""
        return self.endpoint.inbox()

    # -- secrets --------------------------------------------------------------------------------

    def note_secret(self, value: str, source: str) -> bool:
        """Keep one secret value read from ``source``; the next send is checked against it."""
        noted = self.secrets.note(value, source)
        self._forward_secrets()
        return noted

    def note_secrets_from(self, result: object, output: object = None) -> list[str]:
        """Note the secrets a successful credential read returned (a call result, or a record
        and its output); returns the values newly noted. Other calls are ignored."""
        noted = self.secrets.note_from(result, output)
        self._forward_secrets()
        return noted

    def _forward_secrets(self) -> None:
        if self.firewall is None:
            return
        with self._secrets_lock:
            items = self.secrets.items()
            for secret in items[self._forwarded :]:
                self.firewall.note_secret(secret.value, secret.source)
            self._forwarded = len(items)

    # -- the gate -------------------------------------------------------------------------------

    def _gated(self, send_input: object, run: Callable[[], _T]) -> _T:
        params = self._gate_params(send_input)
        decision = self.gate.decide(SEND_MESSAGE_TOOL_NAME, params)
        if decision.blocked:
            self._record(
                decision,
                status="blocked",
                social=self._blocked_social(send_input, params),
            )
            raise SendBlockedError(decision.message, quarantined=decision.quarantine is not None)
        self._forward_secrets()
        live = _Live(decision)
        previous = getattr(self._thread, "live", None)
        self._thread.live = live
        try:
            result = run()
        except BaseException as error:
            if not live.used:
                self._record_unreported(live, error)
            raise
        finally:
            self._thread.live = previous
        if not live.used:
            self._record_unreported(live, None)
        return result

    def _gate_params(self, send_input: object) -> dict[str, Any]:
        """The gated parameters: the input, ``to`` in canonical form when it canonicalises."""
        if not isinstance(send_input, Mapping):
            return {"input": _jsonable(send_input)}
        params = {str(key): _jsonable(value) for key, value in send_input.items()}
        to = send_input.get("to")
        if isinstance(to, str):
            with contextlib.suppress(SendError):
                params["to"] = canonical_address(to, self.local_agent).address
        return params

    def _blocked_social(self, send_input: object, params: Mapping[str, Any]) -> dict[str, Any]:
        raw_to = send_input.get("to") if isinstance(send_input, Mapping) else None
        social: dict[str, Any] = {
            "event": "blocked",
            "outcome": "blocked",
            "from": self.local_agent,
            "to": raw_to if isinstance(raw_to, str) else None,
            "operation": _stated_operation(send_input),
            "reason": POLICY_BLOCKED,
        }
        if isinstance(params.get("to"), str) and params["to"] != raw_to:
            social["address"] = params["to"]
        return _compact(social)

    def _record_unreported(self, live: _Live, error: BaseException | None) -> None:
        """A gated call that ended without the endpoint reporting it still leaves a record."""
        live.used = True
        reason = INPUT_INVALID
        if isinstance(error, SocialToolError):
            reason = str(error.data.get("reason", INPUT_INVALID))
        message = str(error) if error is not None else "the send reported no outcome"
        self._record(
            live.decision,
            status="error",
            error_message=message or type(error).__name__,
            social=_compact(
                {
                    "event": "refused",
                    "outcome": "refused",
                    "from": self.local_agent,
                    "operation": _stated_operation(live.decision.params),
                    "reason": reason,
                }
            ),
        )

    # -- events → records -----------------------------------------------------------------------

    def _on_event(self, event: SocialEvent) -> None:
        decision = self._take_live() if event.kind != "collective-result" else None
        if decision is None:
            decision = self._late_decision(event)
        status, error_message = event_status(event)
        extra: dict[str, Any] = {"social": social_fields(event, self.local_agent)}
        firewall = firewall_fields(event)
        if firewall is not None:
            extra["firewall"] = firewall
            decision = dataclasses.replace(
                decision, constraints=(*decision.constraints, f"firewall:{event.decision}")
            )
        self.gate.record(
            self._redacted(decision),
            status=status,
            output=self._redact(event_output(event)),
            error_message=self._redact(error_message),
            extra=self._redact(extra),
        )

    def _take_live(self) -> GateDecision | None:
        live: _Live | None = getattr(self._thread, "live", None)
        if live is None or live.used:
            return None
        live.used = True
        return live.decision

    def _late_decision(self, event: SocialEvent) -> GateDecision:
        """A fresh decision for an event no send is waiting for; it never blocks."""
        params: dict[str, Any] = {"to": event.target}
        if event.operation_id is not None:
            params["operationId"] = event.operation_id
        decision = self.gate.decide(SEND_MESSAGE_TOOL_NAME, params)
        if not decision.blocked:
            return decision
        return dataclasses.replace(
            decision,
            blocked=False,
            message="",
            quarantine=None,
            constraints=tuple(c for c in decision.constraints if c != "immune:quarantine"),
        )

    def _record(
        self,
        decision: GateDecision,
        *,
        status: str,
        social: Mapping[str, Any],
        error_message: str | None = None,
    ) -> None:
        self.gate.record(
            self._redacted(decision),
            status=status,
            error_message=self._redact(error_message),
            extra={"social": self._redact(social)},
        )

    def _redact(self, value: _T) -> _T:
        if not self.redact_secrets or not len(self.secrets):
            return value
        return self.secrets.redact(value)  # type: ignore[return-value]

    def _redacted(self, decision: GateDecision) -> GateDecision:
        if not self.redact_secrets or not len(self.secrets):
            return decision
        params = self.secrets.redact(decision.params)
        if params == decision.params:
            return decision
        return dataclasses.replace(decision, params=params)  # type: ignore[arg-type]


# -- how one event reads as a record -------------------------------------------------------------


def event_status(event: SocialEvent) -> tuple[str, str | None]:
    """``(status, error message)`` of the record of ``event``."""
    if event.kind == "collective-result":
        return ("success", None) if event.outcome == "result" else ("error", event.message)
    if event.outcome in ("sent", "pending", "replayed"):
        return "success", None
    if event.outcome == "refused" and event.reason == "firewall-refused":
        return "blocked", event.message
    return "error", event.message


def social_fields(event: SocialEvent, local_agent: str) -> dict[str, Any]:
    """The record's ``social`` field: what happened to the send, from ``local_agent``."""
    data: dict[str, Any] = {
        "event": event.kind,
        "outcome": event.outcome,
        "from": local_agent,
        "to": event.to,
        "address": event.address,
        "operation": event.operation,
        "operationId": event.operation_id,
        "reason": event.reason,
        "checkId": event.check_id,
        "decision": event.decision,
        "mode": event.mode,
        "guidance": event.guidance,
        "postIds": list(event.post_ids),
        "unreachable": list(event.unreachable),
        "outcomes": [outcome.to_json() for outcome in event.outcomes],
    }
    if event.failure_delivery != "result":
        data["failureDelivery"] = event.failure_delivery
    for key, value in event.extra.items():
        data.setdefault(str(key), _jsonable(value))
    return _compact(data)


def firewall_fields(event: SocialEvent) -> dict[str, Any] | None:
    """The record's ``firewall`` field when a check ran: ``{decision, mode, checkId, ruleIds}``."""
    if event.decision is None:
        return None
    return _compact(
        {
            "decision": event.decision,
            "mode": event.mode,
            "checkId": event.check_id,
            "ruleIds": list(event.rule_ids),
        }
    )


def event_output(event: SocialEvent) -> dict[str, Any] | None:
    """What the record hashes as the call's output: the send's outcome or the result."""
    if event.kind == "collective-result":
        return {
            "operationId": event.operation_id,
            "outcomes": [outcome.to_json() for outcome in event.outcomes],
        }
    if event.outcome not in ("sent", "pending", "replayed"):
        return None
    return _compact(
        {
            "operationId": event.operation_id,
            "guidance": event.guidance,
            "postIds": list(event.post_ids),
        }
    )


def _compact(data: Mapping[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in data.items() if value is not None and value != []}


def _jsonable(value: object) -> Any:
    """``value`` as strict JSON data (anything else as its ``repr``), so a record can hold it."""
    try:
        return json.loads(json.dumps(value, allow_nan=False))
    except (TypeError, ValueError):
        return repr(value)


def _stated_operation(send_input: object) -> str:
    if not isinstance(send_input, Mapping):
        return "multicast"
    if "collectiveResponse" in send_input:
        return "response"
    collective = send_input.get("collective")
    if isinstance(collective, Mapping) and collective.get("op") in ("gather", "all_gather"):
        return str(collective["op"])
    return "multicast"


# -- the proxy's send_message tool ---------------------------------------------------------------


def send_message_local_tool(session: SocialSession) -> LocalTool:
    """``send_message`` as a proxy local tool served by ``session`` (self-recording: the
    session gates and records it). Refusals answer as JSON-RPC errors with their data."""
    from mcp.shared.exceptions import MCPError

    from pytest_harness_audit.doors.proxy.local_tools import LocalTool
    from pytest_harness_audit.social.mcp_tool import send_message_tool

    definition = send_message_tool()

    def handler(
        arguments: dict[str, Any], meta: Mapping[str, Any] | None = None
    ) -> dict[str, object]:
        try:
            return session.mcp_send_message(arguments, meta)
        except SocialToolError as error:
            raise MCPError(error.code, error.message, error.data) from None

    # The request's _meta carries the runtime options; proxies that pass it to local tools
    # say so with a ``takes_meta`` field (older ones call ``handler(arguments)`` only).
    options: dict[str, Any] = {}
    if "takes_meta" in {field.name for field in dataclasses.fields(LocalTool)}:
        options["takes_meta"] = True
    return LocalTool(
        name=SEND_MESSAGE_TOOL_NAME,
        description=str(definition["description"]),
        input_schema=definition["inputSchema"],  # type: ignore[arg-type]
        handler=handler,
        self_recording=True,
        **options,
    )
