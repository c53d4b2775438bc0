"""How a :class:`~.events.SocialEvent` reads as an audit record.

A harness records every event as one call of tool ``send_message`` (category ``message``): the
record's status and error message (:func:`event_status`), the output it hashes
(:func:`event_output`), and two top-level fields — ``social`` (:func:`social_fields`: what
happened to the send) and, when a firewall check ran, ``firewall`` (:func:`firewall_fields`).

Status: ``sent``, ``pending`` and ``replayed`` sends are ``success``; ``outcome-unknown`` is
``error``; a firewall refusal in enforcement mode is ``blocked`` (a FAIL verdict); every other
typed refusal is ``error`` with its reason. A collective result is ``success``, a failed close
``error``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from pytest_harness_audit.social.events import SocialEvent
from pytest_harness_audit.social.firewall import SECRET_RULE_ID, MessageFirewall
from pytest_harness_audit.types import Status

#: The category every social record carries (the policy maps ``send_message`` to it).
MESSAGE_CATEGORY = "message"
#: Outcomes after which a send's post exists (or existed before a replay).
_SUCCESS_OUTCOMES = ("sent", "pending", "replayed")


def event_status(event: SocialEvent) -> tuple[Status, str | None]:
    """``(status, error message)`` of the record of ``event``."""
    if event.kind == "collective-result":
        return ("success", None) if event.outcome == "result" else ("error", event.message)
    if event.outcome in _SUCCESS_OUTCOMES:
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
        data.setdefault(str(key), jsonable(value))
    return compact(data)


def firewall_fields(event: SocialEvent) -> dict[str, Any] | None:
    """The record's ``firewall`` field when a check ran: ``{decision, mode, checkId, ruleIds}``,
    plus ``held: true`` for a send held on stale evidence."""
    if event.decision is None:
        return None
    return compact(
        {
            "decision": event.decision,
            "mode": event.mode,
            "checkId": event.check_id,
            "ruleIds": list(event.rule_ids),
            "held": True if event.held else None,
        }
    )


def unchecked_secret_fields(firewall: MessageFirewall, send_input: object) -> dict[str, Any] | None:
    """The record fields of a send refused before its firewall check when it carried a known
    secret: ``secrets`` and a FAIL ``judged`` (the secret guard refuses such a send in every
    mode, whatever else is wrong with it); None when it carried none. A send the guard could
    not read is judged FAIL too (fail closed, as a check that cannot run refuses)."""
    try:
        fingerprints = firewall.unchecked_secrets(send_input)
    except Exception as error:
        reason = f"the secret guard could not read a send refused before its check ({error!r})"
        return {"judged": {"verdict": "FAIL", "reason": reason, "caughtBy": "output"}}
    if not fingerprints:
        return None
    return {
        "secrets": [{"fingerprint": value, "where": "input"} for value in fingerprints],
        "judged": {
            "verdict": "FAIL",
            "reason": f"rule {SECRET_RULE_ID}: a known secret is in a send refused "
            "before the message firewall checked it",
            "caughtBy": "output",
        },
    }


def event_output(event: SocialEvent) -> dict[str, Any] | None:
    """What the record hashes as the call's output: the send's outcome or the result."""
    if event.kind == "collective-result":
        return {
            "operationId": event.operation_id,
            "outcomes": [outcome.to_json() for outcome in event.outcomes],
        }
    if event.outcome not in _SUCCESS_OUTCOMES:
        return None
    return compact(
        {
            "operationId": event.operation_id,
            "guidance": event.guidance,
            "postIds": list(event.post_ids),
        }
    )


def compact(data: Mapping[str, Any]) -> dict[str, Any]:
    """``data`` without its None values and empty lists."""
    return {key: value for key, value in data.items() if value is not None and value != []}


#: What a record holds of a value nested too deeply to be written or shown.
TOO_DEEP = "[not recorded: nested too deeply]"


def jsonable(value: object) -> Any:
    """``value`` as strict JSON data (anything else as its ``repr``), so a record can hold it;
    never raises: a value nested too deeply for either is :data:`TOO_DEEP` (the send it is
    part of is still gated and recorded, and refused by its own validation)."""
    try:
        return json.loads(json.dumps(value, allow_nan=False))
    except (TypeError, ValueError):
        pass
    except RecursionError:
        return TOO_DEEP
    try:
        return repr(value)
    except RecursionError:
        return TOO_DEEP
