"""The message firewall's rules: what a rule sees of a send (:class:`SendCandidate`), one
:class:`MessageRule`, and reading one from configuration.

The firewall (:mod:`.firewall`) checks every send against its rules; a rule's criteria and
decisions are described there.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias, cast, get_args

import re2

from pytest_harness_audit.inspect.outputs import column_texts
from pytest_harness_audit.social.addresses import CanonicalAddress
from pytest_harness_audit.social.errors import SocialConfigError
from pytest_harness_audit.social.inputs import Operation
from pytest_harness_audit.social.message_json import json_strings

Decision: TypeAlias = Literal["admit", "guide", "refuse"]
FirewallMode: TypeAlias = Literal["enforcement", "guidance"]
AddressKind: TypeAlias = Literal["direct", "group"]

DECISIONS: tuple[Decision, ...] = get_args(Decision)
MODES: tuple[FirewallMode, ...] = get_args(FirewallMode)
_ADDRESS_KINDS: tuple[AddressKind, ...] = get_args(AddressKind)
_OPERATIONS: tuple[Operation, ...] = get_args(Operation)


def _compile(pattern: str) -> Any:
    options = re2.Options()
    options.log_errors = False
    return re2.compile(pattern, options)


def _error_text(error: BaseException) -> str:
    detail = error.args[0] if error.args else error
    return detail.decode(errors="replace") if isinstance(detail, bytes) else str(detail)


@dataclass(frozen=True)
class SendCandidate:
    """What the firewall sees of one send: its resolved address, operation and text.

    ``text`` is the message text or question, or for a response the canonical JSON of its answer.
    ``content`` is the rest of what goes out as JSON (a gather's ``requestedSchema``, an answer's
    content): rules match ``text``; the secret guard reads every string of both, keys included.
    """

    address: CanonicalAddress
    operation: Operation
    text: str
    content: object = None

    def guarded_text(self) -> str:
        """The text, then every string of ``content`` on lines of their own, then each column of
        ``content`` joined on a line (the keys of one mapping, the same field of each record:
        pieces of a secret spread over them are read side by side)."""
        if self.content is None:
            return self.text
        return "\n".join((self.text, *json_strings(self.content), *column_texts(self.content)))


@dataclass(frozen=True)
class MessageRule:
    """One firewall rule. ``reason`` is the refusal (or advice) text, ``feedback`` what to do."""

    id: str
    decision: Decision
    reason: str = ""
    feedback: str = ""
    priority: int = 0
    address_kinds: tuple[AddressKind, ...] = ()
    members: tuple[str, ...] = ()
    text_patterns: tuple[str, ...] = ()
    operations: tuple[Operation, ...] = ()
    _compiled: tuple[object, ...] = field(default=(), init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        where = f"message firewall rule {self.id!r}"
        if not isinstance(self.id, str) or not self.id:
            raise SocialConfigError(
                f"message firewall rule: field 'id' must be a non-empty string, got {self.id!r}"
            )
        if self.decision not in DECISIONS:
            raise SocialConfigError(
                f"{where}: field 'decision' must be one of {', '.join(DECISIONS)}, "
                f"got {self.decision!r}"
            )
        for kind in self.address_kinds:
            if kind not in _ADDRESS_KINDS:
                raise SocialConfigError(
                    f"{where}: field 'addressKinds' has {kind!r}; use direct or group"
                )
        for operation in self.operations:
            if operation not in _OPERATIONS:
                raise SocialConfigError(
                    f"{where}: field 'operations' has {operation!r}; use {', '.join(_OPERATIONS)}"
                )
        compiled = []
        for pattern in self.text_patterns:
            try:
                compiled.append(_compile(pattern))
            except (re2.error, TypeError) as error:
                raise SocialConfigError(
                    f"{where}: text pattern {pattern!r} does not compile: {_error_text(error)}"
                ) from error
        object.__setattr__(self, "_compiled", tuple(compiled))

    def match(self, candidate: SendCandidate) -> dict[str, object] | None:
        """The private evidence of a match, or None when the rule does not match."""
        if self.address_kinds and candidate.address.kind not in self.address_kinds:
            return None
        if self.operations and candidate.operation not in self.operations:
            return None
        evidence: dict[str, object] = {"rule": self.id}
        if self.members:
            named = [name for name in candidate.address.remote if name in self.members]
            if not named:
                return None
            evidence["members"] = named
        if self._compiled:
            for pattern, regex in zip(self.text_patterns, self._compiled, strict=True):
                found = regex.search(candidate.text)  # type: ignore[attr-defined]
                if found is not None:
                    evidence["pattern"] = pattern
                    evidence["span"] = [found.start(), found.end()]
                    break
            else:
                return None
        return evidence

    def to_json(self) -> dict[str, object]:
        """The rule as configuration (what the policy hash covers)."""
        return {
            "id": self.id,
            "decision": self.decision,
            "reason": self.reason,
            "feedback": self.feedback,
            "priority": self.priority,
            "match": {
                "addressKinds": list(self.address_kinds),
                "members": list(self.members),
                "textPatterns": list(self.text_patterns),
                "operations": list(self.operations),
            },
        }


def _string_list(value: object, where: str, name: str) -> tuple[str, ...]:
    if not isinstance(value, Sequence) or isinstance(value, str):
        raise SocialConfigError(f"{where}: field {name!r} must be a list of strings, got {value!r}")
    if not all(isinstance(item, str) for item in value):
        raise SocialConfigError(f"{where}: field {name!r} must be a list of strings, got {value!r}")
    return tuple(value)


def check_keys(data: Mapping[str, object], allowed: tuple[str, ...], where: str) -> None:
    """Refuse a key of ``data`` not in ``allowed``, naming it and ``where``."""
    for key in data:
        if key not in allowed:
            raise SocialConfigError(
                f"{where}: unknown field {key!r} (allowed: {', '.join(allowed)})"
            )


def rule_of(data: object, index: int) -> MessageRule:
    """The rule ``data`` configures (``rules[index]`` of a firewall's configuration)."""
    where = f"message firewall rules[{index}]"
    if not isinstance(data, Mapping):
        raise SocialConfigError(f"{where}: must be a mapping, got {data!r}")
    rule_id = data.get("id")
    if isinstance(rule_id, str) and rule_id:
        where = f"message firewall rule {rule_id!r}"
    check_keys(data, ("id", "decision", "reason", "feedback", "priority", "match"), where)
    match = data.get("match", {})
    if not isinstance(match, Mapping):
        raise SocialConfigError(f"{where}: field 'match' must be a mapping, got {match!r}")
    check_keys(match, ("addressKinds", "members", "textPatterns", "operations"), where)
    for name in ("reason", "feedback"):
        if not isinstance(data.get(name, ""), str):
            raise SocialConfigError(f"{where}: field {name!r} must be a string")
    priority = data.get("priority", 0)
    if not isinstance(priority, int) or isinstance(priority, bool):
        raise SocialConfigError(f"{where}: field 'priority' must be an integer, got {priority!r}")
    return MessageRule(
        id=cast(str, rule_id),
        decision=cast(Decision, data.get("decision")),
        reason=cast(str, data.get("reason", "")),
        feedback=cast(str, data.get("feedback", "")),
        priority=priority,
        address_kinds=cast(
            "tuple[AddressKind, ...]",
            _string_list(match.get("addressKinds", []), where, "addressKinds"),
        ),
        members=_string_list(match.get("members", []), where, "members"),
        text_patterns=_string_list(match.get("textPatterns", []), where, "textPatterns"),
        operations=cast(
            "tuple[Operation, ...]", _string_list(match.get("operations", []), where, "operations")
        ),
    )
