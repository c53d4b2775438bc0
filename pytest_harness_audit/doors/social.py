"""The social door: every send of a session's endpoint goes through the gate's door seam.

A :class:`SocialSession` builds one :class:`~pytest_harness_audit.social.SocialEndpoint` on a
session's :class:`~pytest_harness_audit.gate.Gate` and guards it: every send the endpoint makes
(``send``, ``respond``, ``send_input``, ``send_message_text``, the MCP tool) is one
:meth:`Gate.run <pytest_harness_audit.gate.Gate.run>` of ``send_message`` with params
``{to, text, collective?}`` (``to`` in canonical form)::

    blocked  → one ``blocked`` record, :class:`SendBlockedError` (the gate's message)
    allowed  → the endpoint sends; the event it reports for the send is the call's outcome:
               one record (category ``message``, target = the canonical address) with the
               top-level fields ``social`` (and ``firewall`` when a check ran, whose decision
               joins the record's constraints as ``firewall:<decision>``)

Events that arrive without a send waiting for them (collective results at a deadline or after
a peer's answer) are decided anew on ``("send_message", {to, operationId})`` and recorded after
the send that caused them, never blocked. How an event reads as a record is
:mod:`pytest_harness_audit.social.event_records`.

Secret values the session read (see :mod:`~pytest_harness_audit.social.secret_ledger`) go to
the firewall before each send and appear in the records only as ``[secret:<fingerprint>]``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from pytest_harness_audit.audit.tags import FIREWALL, QUARANTINE
from pytest_harness_audit.errors import PolicyError
from pytest_harness_audit.gate import Gate, GateDecision, Outcome
from pytest_harness_audit.gate.social_context import social_door_send
from pytest_harness_audit.inspect import SECRET_EXPOSURE
from pytest_harness_audit.policy import Policy
from pytest_harness_audit.social.addresses import canonical_address
from pytest_harness_audit.social.deadline_clock import DeadlineClock
from pytest_harness_audit.social.endpoint import SocialEndpoint
from pytest_harness_audit.social.errors import (
    SendError,
    SocialConfigError,
    SocialSendFailure,
    SocialToolError,
)
from pytest_harness_audit.social.event_records import (
    MESSAGE_CATEGORY,
    compact,
    event_output,
    event_status,
    firewall_fields,
    jsonable,
    social_fields,
    unchecked_secret_fields,
)
from pytest_harness_audit.social.events import SocialEvent
from pytest_harness_audit.social.firewall import SECRET_RULE_ID, MessageFirewall
from pytest_harness_audit.social.inputs import stated_operation
from pytest_harness_audit.social.mcp_tool import SEND_MESSAGE_TOOL_NAME
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
    "event_output",
    "event_status",
    "firewall_fields",
    "firewall_from_policy",
    "parse_expect_refused",
    "parse_harness_agents",
    "recorded_sends",
    "refused_records",
    "secret_values",
    "send_message_local_tool",
    "sent_records",
    "social_fields",
    "social_records",
]

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
    """The send running on this thread: its decision, and its event's outcome once reported."""

    decision: GateDecision | None = None
    outcome: Outcome | None = None
    later: list[SocialEvent] = dataclasses.field(default_factory=list)


class SocialSession:
    """One audited session's social endpoint (:attr:`endpoint`): gated sends, recorded events.

    ``storage_dir`` holds the post store; ``local_agent`` and ``peers`` are the agents' names;
    ``firewall`` (see :func:`firewall_from_policy`) checks every send; ``clock`` drives
    deadlines (default: the system clock); ``secrets`` is the session's ledger of secret values
    read so far (a fresh one by default); with ``redact_secrets`` (the default) records show a
    noted secret as ``[secret:<fingerprint>]``. Send, answer, read and script peers on
    :attr:`endpoint`.
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
        if firewall is not None and firewall.secret_scanner is None:
            # the gate leaves messages to a firewall that guards secrets: it must know the
            # workspace's secrets the gate's inspection knows, not only those noted with it
            for inspector in gate.inspectors:
                scanner = getattr(inspector, "message_secrets", None)
                if callable(scanner):
                    firewall.secret_scanner = scanner
                    break
        self.secrets = secrets if secrets is not None else SecretLedger()
        self.redact_secrets = redact_secrets
        self._forwarded = 0
        self._secrets_lock = threading.Lock()
        self._thread = threading.local()
        #: The gated endpoint: everything it sends passes the gate and is recorded.
        self.endpoint = SocialEndpoint(
            storage_dir,
            local_agent,
            peers,
            firewall=firewall,
            clock=clock,
            on_event=self._on_event,
            guard=self._gated,
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

    # -- the door seam --------------------------------------------------------------------------

    def _gated(self, send_input: object, send: Callable[[], _T]) -> _T:
        """The endpoint's guard: one ``send_message`` call through the gate's seam."""
        params = self._gate_params(send_input)
        live = _Live()
        results: list[_T] = []

        def act(decision: GateDecision) -> Outcome:
            self._forward_secrets()
            live.decision = decision
            previous = getattr(self._thread, "live", None)
            self._thread.live = live
            try:
                results.append(send())
            except BaseException as error:
                outcome = self._unchecked(send_input, decision, self._outcome_of(live, error))
                return dataclasses.replace(outcome, reraise=error)
            finally:
                self._thread.live = previous
            return self._unchecked(send_input, decision, self._outcome_of(live, None))

        # The gate decides on what the agent really sent; the record keeps the noted secrets
        # redacted, so the decision is made here and handed to the seam.
        try:
            call = self.gate.run(
                SEND_MESSAGE_TOOL_NAME,
                params,
                act,
                extra={"social": self._redact(self._blocked_social(send_input, params))},
                decision=self._redacted(self._decide(params)),
            )
        finally:
            for event in live.later:
                self._record_late(event)
        if call.blocked:
            raise SendBlockedError(
                call.decision.message, quarantined=call.decision.quarantine is not None
            )
        return results[0]

    def _decide(self, params: Mapping[str, Any]) -> GateDecision:
        """The gate's decision on one of this door's sends (its firewall checks the secrets)."""
        with social_door_send():
            return self.gate.decide(SEND_MESSAGE_TOOL_NAME, params)

    def _gate_params(self, send_input: object) -> dict[str, Any]:
        """The gated parameters: the input, ``to`` in canonical form when it canonicalises."""
        if not isinstance(send_input, Mapping):
            return {"input": jsonable(send_input)}
        params = {str(key): jsonable(value) for key, value in send_input.items()}
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
            "operation": stated_operation(send_input),
            "reason": POLICY_BLOCKED,
        }
        if isinstance(params.get("to"), str) and params["to"] != raw_to:
            social["address"] = params["to"]
        return compact(social)

    def _outcome_of(self, live: _Live, error: BaseException | None) -> Outcome:
        """The send's outcome: its event's, or (when it reported none) an ``error`` refusal."""
        if live.outcome is not None:
            return live.outcome
        reason = INPUT_INVALID
        if isinstance(error, SocialToolError):
            reason = str(error.data.get("harnessReason", error.data.get("reason", INPUT_INVALID)))
        message = str(error) if error is not None else "the send reported no outcome"
        social = {
            "event": "refused",
            "outcome": "refused",
            "from": self.local_agent,
            "operation": stated_operation(live.decision.params if live.decision else None),
            "reason": reason,
        }
        return Outcome(
            "error",
            error_message=self._redact(message or type(error).__name__),
            extra={"social": self._redact(compact(social))},
        )

    def _unchecked(self, send_input: object, decision: GateDecision, outcome: Outcome) -> Outcome:
        """A send refused before its firewall check (an invalid address, ill-formed text …) is
        still read by the secret guard the gate left it to: a known secret in it is exposed, and
        refused in every firewall mode, so its record is judged FAIL."""
        firewall = self.firewall
        if firewall is None or "firewall" in (outcome.extra or {}):
            return outcome
        fields = unchecked_secret_fields(firewall, send_input)
        if fields is None:
            return outcome
        if "secrets" in fields:
            decision.alerts = tuple(dict.fromkeys((*decision.alerts, SECRET_EXPOSURE)))
        return dataclasses.replace(outcome, extra={**(outcome.extra or {}), **fields})

    # -- events → outcomes ----------------------------------------------------------------------

    def _on_event(self, event: SocialEvent) -> None:
        live: _Live | None = getattr(self._thread, "live", None)
        if live is None or live.decision is None:
            self._record_late(event)
        elif live.outcome is not None:
            live.later.append(event)  # after the send's own event: recorded after its record
        elif event.kind == "collective-result":
            self._record_late(event)  # due before the send began
        else:
            live.outcome = self._event_outcome(event, live.decision)

    def _event_outcome(self, event: SocialEvent, decision: GateDecision) -> Outcome:
        """``event`` as the outcome of ``decision``'s call; a firewall check's decision joins
        the call's constraints."""
        status, error_message = event_status(event)
        extra: dict[str, Any] = {"social": social_fields(event, self.local_agent)}
        firewall = firewall_fields(event)
        if firewall is not None:
            extra["firewall"] = firewall
            # the seam records this decision object: the firewall's verdict joins its tags
            decision.constraints = (*decision.constraints, f"{FIREWALL}{event.decision}")
            if SECRET_RULE_ID in event.rule_ids:  # a known secret in the message
                decision.alerts = tuple(dict.fromkeys((*decision.alerts, SECRET_EXPOSURE)))
        return Outcome(
            status,
            self._redact(event_output(event)),
            self._redact(error_message),
            extra=self._redact(extra),
        )

    def _record_late(self, event: SocialEvent) -> None:
        """Record an event no send is waiting for, on a fresh decision that never blocks."""
        params: dict[str, Any] = {"to": event.target}
        if event.operation_id is not None:
            params["operationId"] = event.operation_id
        decision = self._decide(params)
        if decision.blocked:
            decision = dataclasses.replace(
                decision,
                blocked=False,
                message="",
                quarantine=None,
                constraints=tuple(c for c in decision.constraints if c != QUARANTINE),
            )
        decision = self._redacted(decision)
        self.gate.run(
            SEND_MESSAGE_TOOL_NAME,
            params,
            lambda allowed: self._event_outcome(event, allowed),
            decision=decision,
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


# -- the proxy's send_message tool ---------------------------------------------------------------


def send_message_local_tool(session: SocialSession) -> LocalTool:
    """``send_message`` as a proxy local tool served by ``session``'s endpoint (self-recording:
    the session gates and records it). Refusals answer as JSON-RPC errors with their data."""
    from mcp.shared.exceptions import MCPError

    from pytest_harness_audit.doors.proxy.local_tools import LocalTool
    from pytest_harness_audit.social.mcp_tool import send_message_tool

    definition = send_message_tool()
    endpoint = session.endpoint

    def handler(
        arguments: dict[str, Any], meta: Mapping[str, Any] | None = None
    ) -> dict[str, object]:
        try:
            return endpoint.mcp_send_message(arguments, meta)
        except SocialToolError as error:
            raise MCPError(error.code, error.message, error.data) from None

    return LocalTool(
        name=SEND_MESSAGE_TOOL_NAME,
        description=str(definition["description"]),
        input_schema=definition["inputSchema"],  # type: ignore[arg-type]
        output_schema=definition["outputSchema"],  # type: ignore[arg-type]
        handler=handler,
        self_recording=True,
        takes_meta=True,
    )
