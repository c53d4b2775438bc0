"""Assertions over a session's social records: whom the agent told what, and what was refused.

Pure functions over chain records (``CallRecord`` views or raw record mappings), so a test
asserts exactly what an auditor can re-check from the chain. A record is social when its tool
is ``send_message`` and it carries the ``social`` field the social door writes (see
:mod:`.event_records`).

* **sent** — a post exists: outcome ``sent`` or ``pending`` (a ``replayed`` send repeats an
  earlier one and is not counted again);
* **maybe sent** — ``outcome-unknown``: never "not sent", so :func:`assert_not_sent` counts it;
* **refused** — nothing was posted: blocked by the gate (``policy-blocked``) or the firewall
  (``firewall-refused``), or a typed refusal (``invalid-address``, ``unknown-agent`` …).

``to`` is an address as the agent would write it, compared in canonical form from the record's
sender (``group:carol,bob`` finds ``group:alice,bob,carol``; a bare ``bob`` means
``agent:bob``), or a glob (``group:*``) over the recorded target. ``text_glob`` is a
shell-style pattern (``*`` any characters) over the whole message text; a response's text is
the canonical JSON of its ``collectiveResponse``. A noted secret reads ``[secret:<hex>]``.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from pytest_harness_audit.audit.record_view import CallRecord
from pytest_harness_audit.errors import UsageError
from pytest_harness_audit.social.addresses import canonical_address, is_agent_name
from pytest_harness_audit.social.errors import (
    COLLECTIVE_FAILURE_KINDS,
    SEND_FAILURE_REASONS,
    SendError,
)
from pytest_harness_audit.social.mcp_tool import SEND_MESSAGE_TOOL_NAME
from pytest_harness_audit.social.message_json import canonical_message_json
from pytest_harness_audit.wording import visible

#: Outcomes after which a post exists.
SENT_OUTCOMES = frozenset({"sent", "pending"})
#: Outcomes after which a post exists or may exist.
MAYBE_SENT_OUTCOMES = frozenset({"sent", "pending", "replayed", "unknown"})
#: Every reason a refused send may be recorded with (what ``expect_refused(reason=…)`` takes).
REFUSAL_REASONS: tuple[str, ...] = (
    "policy-blocked",
    "firewall-refused",
    "input-invalid",
    "text-invalid",
    *(r for r in SEND_FAILURE_REASONS if r not in ("outcome-unknown", "delivery-pending")),
    *COLLECTIVE_FAILURE_KINDS,
)
_GLOB_CHARACTERS = frozenset("*?[")
_EXCERPT = 60

RecordLike = CallRecord | Mapping[str, Any]


def _view(record: RecordLike) -> CallRecord:
    return record if isinstance(record, CallRecord) else CallRecord(record)


def social_of(record: RecordLike) -> Mapping[str, Any] | None:
    """The record's ``social`` field, or None when it is not a social record."""
    view = _view(record)
    social = view.raw.get("social")
    if view.tool != SEND_MESSAGE_TOOL_NAME or not isinstance(social, Mapping):
        return None
    return social


def social_records(records: Iterable[RecordLike]) -> list[CallRecord]:
    """Every social record, in chain order."""
    return [_view(r) for r in records if social_of(r) is not None]


def _sends(records: Iterable[RecordLike]) -> list[CallRecord]:
    return [
        r
        for r in social_records(records)
        if (social_of(r) or {}).get("event") != "collective-result"
    ]


def _wanted_address(to: str, sender: str | None) -> str:
    if is_agent_name(to):
        to = f"agent:{to}"
    if sender is None:
        return to
    try:
        return canonical_address(to, sender).address
    except SendError:
        return to


def address_matches(record: RecordLike, to: str | None) -> bool:
    """Whether the record's destination is ``to`` (canonicalised from its sender, or a glob)."""
    if to is None:
        return True
    view = _view(record)
    social = social_of(view) or {}
    recorded = [str(v) for v in (social.get("address"), view.target, social.get("to")) if v]
    if _GLOB_CHARACTERS & set(to):
        return any(fnmatch.fnmatchcase(value, to) for value in recorded)
    sender = social.get("from")
    wanted = _wanted_address(to, str(sender) if sender else None)
    return wanted in recorded or to in recorded


def record_text(record: RecordLike) -> str | None:
    """The message text of a send record (a response: its canonical JSON), from the recorded
    parameters. Raises :class:`UsageError` when the audit level did not keep them."""
    view = _view(record)
    params = view.params
    if params is None:
        raise UsageError(
            f"record {view.record_id} kept no parameters: text assertions need audit level "
            "'verbose' (the harness default)"
        )
    text = params.get("text")
    if isinstance(text, str):
        return text
    response = params.get("collectiveResponse")
    if response is not None:
        return canonical_message_json(response)
    return None


def _text_matches(record: CallRecord, text_glob: str | None) -> bool:
    if text_glob is None:
        return True
    text = record_text(record)
    return text is not None and fnmatch.fnmatchcase(text, text_glob)


def sent_records(
    records: Iterable[RecordLike], to: str | None = None, text_glob: str | None = None
) -> list[CallRecord]:
    """Sends whose post exists (outcome ``sent`` or ``pending``), to ``to``, matching
    ``text_glob``."""
    return [
        r
        for r in _sends(records)
        if (social_of(r) or {}).get("outcome") in SENT_OUTCOMES
        and address_matches(r, to)
        and _text_matches(r, text_glob)
    ]


def refused_records(
    records: Iterable[RecordLike], reason: str | None = None, to: str | None = None
) -> list[CallRecord]:
    """Sends that posted nothing (gate or firewall block, typed refusal), optionally with
    ``reason`` and to ``to``."""
    found = []
    for record in _sends(records):
        social = social_of(record) or {}
        if social.get("outcome") not in ("refused", "blocked"):
            continue
        if reason is not None and social.get("reason") != reason:
            continue
        if address_matches(record, to):
            found.append(record)
    return found


def describe_send(record: RecordLike) -> str:
    """One line: ``#3 send_message agent:bob → sent "hello"`` (or the refusal's reason)."""
    view = _view(record)
    social = social_of(view) or {}
    outcome = str(social.get("outcome", view.status))
    if social.get("reason"):
        outcome += f" ({social['reason']})"
    firewall = view.raw.get("firewall")
    if isinstance(firewall, Mapping) and firewall.get("decision") not in (None, "admit"):
        outcome += f" [firewall {firewall.get('decision')}, {firewall.get('mode')}]"
    try:
        text = record_text(view)
    except UsageError:
        text = None
    shown = ""
    if text is not None:
        excerpt = text if len(text) <= _EXCERPT else text[:_EXCERPT] + "…"
        shown = " " + json_quote(excerpt)
    target = view.target or social.get("to") or "?"
    return f"#{view.position} {social.get('operation', 'send')} {target} → {outcome}{shown}"


def json_quote(text: str) -> str:
    """``text`` in double quotes with control characters escaped (one line)."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def recorded_sends(records: Iterable[RecordLike]) -> str:
    """Every recorded send and result, one per line (for assertion messages)."""
    lines = [f"  {describe_send(r)}" for r in social_records(records)]
    return "\n".join(lines) if lines else "  (no sends recorded)"


def _wanted(to: str | None, text_glob: str | None, reason: str | None = None) -> str:
    parts = [
        f"{key}={value!r}"
        for key, value in (("to", to), ("text", text_glob), ("reason", reason))
        if value is not None
    ]
    return " ".join(parts) or "any send"


def assert_sent(records: Sequence[RecordLike], to: str, text_glob: str = "*") -> list[CallRecord]:
    """Assert that at least one send to ``to`` whose text matches ``text_glob`` was posted;
    return the matching records."""
    found = sent_records(records, to, text_glob)
    if not found:
        raise AssertionError(
            visible(
                f"expected a message sent matching {_wanted(to, text_glob)}, found none.\n"
                f"Recorded sends:\n{recorded_sends(records)}"
            )
        )
    return found


def assert_not_sent(
    records: Sequence[RecordLike], to: str | None = None, text_glob: str | None = None
) -> None:
    """Assert that no send to ``to`` matching ``text_glob`` went out or may have gone out
    (``outcome-unknown`` counts as maybe sent)."""
    found = [
        r
        for r in _sends(records)
        if (social_of(r) or {}).get("outcome") in MAYBE_SENT_OUTCOMES
        and address_matches(r, to)
        and _text_matches(r, text_glob)
    ]
    if found:
        lines = "\n".join(f"  {describe_send(r)}" for r in found)
        raise AssertionError(
            visible(
                f"expected no message sent matching {_wanted(to, text_glob)}; "
                f"{len(found)} went out or may have:\n{lines}"
            )
        )


def check_refused(
    records: Sequence[RecordLike], reason: str | None = None, to: str | None = None
) -> str | None:
    """The ``expect_refused`` marker's check: a problem message listing the recorded sends when
    no refused send matches, else None."""
    if refused_records(records, reason, to):
        return None
    return (
        f"expected a refused send matching {_wanted(to, None, reason)}, found none.\n"
        f"Recorded sends:\n{recorded_sends(records)}"
    )


def assert_refused(
    records: Sequence[RecordLike], reason: str | None = None, to: str | None = None
) -> list[CallRecord]:
    """Assert that a send matching ``reason`` and ``to`` was refused; return the records."""
    problem = check_refused(records, reason, to)
    if problem is not None:
        raise AssertionError(visible(problem))
    return refused_records(records, reason, to)


# -- marker arguments ------------------------------------------------------------------------------


def parse_harness_agents(args: Sequence[Any], kwargs: Mapping[str, Any]) -> tuple[str, ...]:
    """``harness_agents("alice", "bob", "carol")``: the agents, the local one first."""
    if kwargs:
        raise UsageError(
            f"harness_agents: takes agent names only, got keyword {next(iter(kwargs))!r}"
        )
    if not args:
        raise UsageError("harness_agents: needs at least the local agent's name")
    for name in args:
        if not is_agent_name(name):
            raise UsageError(
                f"harness_agents: {name!r} is not an agent name (3 to 32 lowercase letters, "
                "digits and single inner hyphens)"
            )
    repeated = sorted({name for name in args if list(args).count(name) > 1})
    if repeated:
        raise UsageError(f"harness_agents: {repeated[0]!r} is named twice")
    return tuple(args)


def parse_expect_refused(args: Sequence[Any], kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """``expect_refused(reason=None, to=None)``."""
    if len(args) > 2:
        raise UsageError(f"expect_refused: takes at most 2 positional arguments, got {len(args)}")
    values: dict[str, Any] = dict(zip(("reason", "to"), args, strict=False))
    for key, value in kwargs.items():
        if key not in ("reason", "to"):
            raise UsageError(f"expect_refused: unknown argument {key!r} (allowed: reason, to)")
        if key in values:
            raise UsageError(f"expect_refused: {key!r} given twice")
        values[key] = value
    for key in ("reason", "to"):
        if values.get(key) is not None and not isinstance(values[key], str):
            raise UsageError(f"expect_refused: {key} must be a string, got {values[key]!r}")
    reason = values.get("reason")
    if reason is not None and reason not in REFUSAL_REASONS:
        raise UsageError(
            f"expect_refused: unknown reason {reason!r} (one of {', '.join(REFUSAL_REASONS)})"
        )
    return {"reason": reason, "to": values.get("to")}
