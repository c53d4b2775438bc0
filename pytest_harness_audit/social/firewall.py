"""The message firewall: rules over sends, checked after membership resolution, before any post.

A rule matches a send by address kind (``direct``/``group``), members (any named agent is a
recipient), text patterns (RE2, linear time, unanchored search) and operation (``multicast``,
``gather``, ``all_gather``, ``response``); criteria are AND-ed, each list OR-ed, an omitted
criterion is ignored. Its decision is ``admit``, ``guide`` or ``refuse``; when several rules match,
the most restrictive decision wins (``refuse`` > ``guide`` > ``admit``), and a check that cannot be
evaluated refuses (fail closed). No match admits.

In ``enforcement`` mode a refusal blocks the send (:class:`~.errors.FirewallSendError`); a ``guide``
decision lets it out with guidance. In ``guidance`` mode a rule's refusal becomes guidance and the
send goes out; the secret guard's refusal, or that of a check that could not run, blocks in both.
Each check is retained under a check id with its private evidence (matched rules and patterns,
member names, secret sources); what the model reads — refusal, feedback, advice — never contains
that evidence.

Evidence revisions: every change to the evidence a check reads (a secret noted, or
:meth:`MessageFirewall.note_evidence` from any other source) advances the firewall's
``evidence_revision``; a check records the revision it assessed. The send binds its intent only
if that revision is still current (see :mod:`.capture`).

A secret guard (on by default) refuses any send whose text contains a value registered with
:meth:`MessageFirewall.note_secret`, such as a secret read from the workspace earlier in the
session. Secrets stay in memory; checks retain only their source and a fingerprint.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias, cast, get_args

import re2

from pytest_harness_audit.inspect.secrets import SecretRegistry, fingerprint
from pytest_harness_audit.social.addresses import CanonicalAddress
from pytest_harness_audit.social.errors import SocialConfigError
from pytest_harness_audit.social.inputs import Operation
from pytest_harness_audit.social.message_json import canonical_message_json, json_strings

Decision: TypeAlias = Literal["admit", "guide", "refuse"]
FirewallMode: TypeAlias = Literal["enforcement", "guidance"]
AddressKind: TypeAlias = Literal["direct", "group"]

DECISIONS: tuple[Decision, ...] = get_args(Decision)
MODES: tuple[FirewallMode, ...] = get_args(FirewallMode)
_ADDRESS_KINDS: tuple[AddressKind, ...] = get_args(AddressKind)
_OPERATIONS: tuple[Operation, ...] = get_args(Operation)
_RESTRICTION: Mapping[Decision, int] = {"admit": 0, "guide": 1, "refuse": 2}

#: The rule id the secret guard reports.
SECRET_RULE_ID = "secret-in-message"
#: Registered secrets shorter than this are ignored: they would match ordinary text.
MINIMUM_SECRET_LENGTH = 6
DEFAULT_REFUSAL = "the message firewall does not permit this send"
DEFAULT_FEEDBACK = "revise the message or its address and send again"
SECRET_REFUSAL = "the message contains a secret value read earlier in this session"
SECRET_FEEDBACK = "remove the secret value from the message and send again"
UNCHECKABLE_REFUSAL = "the message firewall could not check this send"
#: The rule id of a check that could not run (it refuses: fail closed).
ERROR_RULE_ID = "firewall-error"
#: Refusals that block in ``guidance`` mode too.
ABSOLUTE_RULE_IDS = frozenset({SECRET_RULE_ID, ERROR_RULE_ID})


def _compile(pattern: str) -> Any:
    options = re2.Options()
    options.log_errors = False
    return re2.compile(pattern, options)


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
        """The text, then every string of ``content`` on lines of their own."""
        if self.content is None:
            return self.text
        return "\n".join((self.text, *json_strings(self.content)))


@dataclass(frozen=True)
class Guidance:
    """The firewall's advice on an admitted send (the ``guidance`` of a send result)."""

    check_id: str
    decision: Decision
    advice: str

    def to_json(self) -> dict[str, object]:
        """``{checkId, decision, advice}``."""
        return {"checkId": self.check_id, "decision": self.decision, "advice": self.advice}


@dataclass(frozen=True)
class FirewallCheck:
    """The outcome of one check. ``evidence`` is private: it is retained, never shown the model."""

    check_id: str
    mode: FirewallMode
    decision: Decision
    rule_ids: tuple[str, ...]
    refusal: str | None
    feedback: str | None
    advice: str | None
    evidence: tuple[Mapping[str, object], ...]
    policy_hash: str
    #: The firewall's evidence revision this check assessed.
    evidence_revision: int = 0
    #: The evidence went stale again after a second check: held (see :mod:`.capture`).
    held: bool = False

    @property
    def blocks(self) -> bool:
        """Whether the send must not go out: a refusal no mode softens (a known secret, a check
        that could not run), or any refusal or hold in enforcement mode."""
        if self.decision == "refuse" and ABSOLUTE_RULE_IDS.intersection(self.rule_ids):
            return True
        return self.mode == "enforcement" and (self.decision == "refuse" or self.held)

    @property
    def guidance(self) -> Guidance | None:
        """The guidance the admitted send carries, if any (never a held check's stale advice)."""
        if self.advice is None or self.blocks or self.held:
            return None
        return Guidance(self.check_id, self.decision, self.advice)

    def to_json(self) -> dict[str, object]:
        """The retained form of the check (evidence included)."""
        return {
            "checkId": self.check_id,
            "mode": self.mode,
            "decision": self.decision,
            "ruleIds": list(self.rule_ids),
            "refusal": self.refusal,
            "feedback": self.feedback,
            "advice": self.advice,
            "evidence": [dict(item) for item in self.evidence],
            "policyHash": self.policy_hash,
            "evidenceRevision": self.evidence_revision,
            **({"held": True} if self.held else {}),
        }


@dataclass(frozen=True)
class _Secret:
    value: str
    source: str
    fingerprint: str


class MessageFirewall:
    """Rules over sends, in ``enforcement`` or ``guidance`` mode, with an optional secret guard."""

    def __init__(
        self,
        rules: Iterable[MessageRule] = (),
        *,
        mode: FirewallMode = "enforcement",
        guard_secrets: bool = True,
    ) -> None:
        if mode not in MODES:
            raise SocialConfigError(
                f"message firewall: field 'mode' must be enforcement or guidance, got {mode!r}"
            )
        indexed = list(enumerate(rules))
        ids = [rule.id for _, rule in indexed]
        repeated = sorted({rule_id for rule_id in ids if ids.count(rule_id) > 1})
        if repeated:
            raise SocialConfigError(f"message firewall: rule id {repeated[0]!r} is used twice")
        # Ascending priority, stable: ties keep the order given.
        self.rules: tuple[MessageRule, ...] = tuple(
            rule for _, rule in sorted(indexed, key=lambda pair: (pair[1].priority, pair[0]))
        )
        self.mode: FirewallMode = mode
        self.guard_secrets = guard_secrets
        #: Finds known secrets in a text in any form (encoded, reversed, spaced, split over
        #: sends) and returns their fingerprints; the session's inspection sets it.
        self.secret_scanner: Callable[[str], Sequence[str]] | None = None
        self._secrets: list[_Secret] = []
        #: The noted values in every form the inspection matches (encoded, reversed, spaced,
        #: split over sends): a value noted here may be one the inspection does not know.
        self._registry = SecretRegistry()
        self._sends = self._registry.stream()
        #: Held while evidence changes, and by a send binding its intent (see :mod:`.capture`).
        self.evidence_lock = threading.RLock()
        self._revision = 0
        self._hashed: tuple[str, bool] | None = None
        self._hash = ""

    @property
    def policy_hash(self) -> str:
        """Hex SHA-256 of the canonical configuration, retained with every check."""
        config = (self.mode, self.guard_secrets)
        if self._hashed != config:
            data = {
                "mode": self.mode,
                "guardSecrets": self.guard_secrets,
                "rules": [rule.to_json() for rule in self.rules],
            }
            self._hash = hashlib.sha256(canonical_message_json(data).encode()).hexdigest()
            self._hashed = config
        return self._hash

    @property
    def evidence_revision(self) -> int:
        """The revision of the evidence checks read; it advances with every change."""
        return self._revision

    def note_evidence(self) -> int:
        """Say the evidence changed (a source other than :meth:`note_secret`); the new revision."""
        with self.evidence_lock:
            self._revision += 1
            return self._revision

    def note_secret(self, value: str, source: str) -> bool:
        """Register a secret value seen in the session (e.g. read from ``.env``).

        Returns whether it was registered: values shorter than :data:`MINIMUM_SECRET_LENGTH`
        characters, and repeats, are not.
        """
        if not isinstance(value, str) or len(value) < MINIMUM_SECRET_LENGTH:
            return False
        with self.evidence_lock:
            if any(secret.value == value for secret in self._secrets):
                return False
            self._secrets.append(_Secret(value, str(source), fingerprint(value)))
            self._registry.add(value, str(source))
            self._revision += 1
        return True

    @property
    def secret_count(self) -> int:
        """How many secret values are registered."""
        return len(self._secrets)

    def check(self, candidate: SendCandidate, check_id: str) -> FirewallCheck:
        """Check one send; the caller retains the result under ``check_id``."""
        revision = self._revision  # captured before the evidence is read
        try:
            matches = self._matches(candidate)
        except Exception as error:  # fail closed: a check that cannot run refuses
            matches = [
                (
                    MessageRule(ERROR_RULE_ID, "refuse", UNCHECKABLE_REFUSAL, DEFAULT_FEEDBACK),
                    {"rule": ERROR_RULE_ID, "error": type(error).__name__},
                )
            ]
        decision: Decision = "admit"
        for rule, _ in matches:
            if _RESTRICTION[rule.decision] > _RESTRICTION[decision]:
                decision = rule.decision
        deciding = next((rule for rule, _ in matches if rule.decision == decision), None)
        refusal = feedback = advice = None
        if deciding is not None and decision == "refuse":
            refusal = deciding.reason or DEFAULT_REFUSAL
            feedback = deciding.feedback or DEFAULT_FEEDBACK
            if self.mode == "guidance" and not any(r.id in ABSOLUTE_RULE_IDS for r, _ in matches):
                advice = f"the message firewall would refuse this send: {refusal}; {feedback}"
        elif deciding is not None and decision == "guide":
            advice = deciding.reason or "the message firewall advises care with this send"
            if deciding.feedback:
                advice = f"{advice}; {deciding.feedback}"
        return FirewallCheck(
            check_id=check_id,
            mode=self.mode,
            decision=decision,
            rule_ids=tuple(rule.id for rule, _ in matches),
            refusal=refusal,
            feedback=feedback,
            advice=advice,
            evidence=tuple(evidence for _, evidence in matches),
            policy_hash=self.policy_hash,
            evidence_revision=revision,
        )

    def _matches(self, candidate: SendCandidate) -> list[tuple[MessageRule, Mapping[str, object]]]:
        matches: list[tuple[MessageRule, Mapping[str, object]]] = []
        if self.guard_secrets:
            text = candidate.guarded_text()
            found = [secret for secret in self._secrets if secret.value in text]
            fingerprints = [secret.fingerprint for secret in found]
            if self._secrets:
                scan = self._sends.scan(text, runs=True)
                fingerprints.extend(
                    f.fingerprint for f in scan.findings if f.fingerprint not in fingerprints
                )
            if self.secret_scanner is not None:
                scanned = self.secret_scanner(text)
                fingerprints.extend(fp for fp in scanned if fp not in fingerprints)
            if fingerprints:
                rule = MessageRule(SECRET_RULE_ID, "refuse", SECRET_REFUSAL, SECRET_FEEDBACK)
                evidence = {
                    "rule": SECRET_RULE_ID,
                    "sources": [secret.source for secret in found] or ["workspace"],
                    "fingerprints": fingerprints,
                }
                matches.append((rule, evidence))
        for rule in self.rules:
            evidence_or_none = rule.match(candidate)
            if evidence_or_none is not None:
                matches.append((rule, evidence_or_none))
        return matches

    @classmethod
    def from_mapping(cls, data: Mapping[str, object], source: str | None = None) -> MessageFirewall:
        """Build a firewall from configuration (YAML/JSON), naming the file, field and value of
        any error::

            mode: enforcement          # or guidance
            guardSecrets: true
            rules:
              - id: no-secrets-to-groups
                decision: refuse       # admit | guide | refuse
                reason: secrets never go to groups
                feedback: send it to one agent instead
                priority: 10
                match: {addressKinds: [group], members: [mallory],
                        textPatterns: ["(?i)password"], operations: [multicast]}
        """
        prefix = f"{source}: " if source else ""
        try:
            return _firewall_of(data)
        except SocialConfigError as error:
            raise SocialConfigError(f"{prefix}{error}") from error


def _string_list(value: object, where: str, name: str) -> tuple[str, ...]:
    if not isinstance(value, Sequence) or isinstance(value, str):
        raise SocialConfigError(f"{where}: field {name!r} must be a list of strings, got {value!r}")
    if not all(isinstance(item, str) for item in value):
        raise SocialConfigError(f"{where}: field {name!r} must be a list of strings, got {value!r}")
    return tuple(value)


def _check_keys(data: Mapping[str, object], allowed: tuple[str, ...], where: str) -> None:
    for key in data:
        if key not in allowed:
            raise SocialConfigError(
                f"{where}: unknown field {key!r} (allowed: {', '.join(allowed)})"
            )


def _rule_of(data: object, index: int) -> MessageRule:
    where = f"message firewall rules[{index}]"
    if not isinstance(data, Mapping):
        raise SocialConfigError(f"{where}: must be a mapping, got {data!r}")
    rule_id = data.get("id")
    if isinstance(rule_id, str) and rule_id:
        where = f"message firewall rule {rule_id!r}"
    _check_keys(data, ("id", "decision", "reason", "feedback", "priority", "match"), where)
    match = data.get("match", {})
    if not isinstance(match, Mapping):
        raise SocialConfigError(f"{where}: field 'match' must be a mapping, got {match!r}")
    _check_keys(match, ("addressKinds", "members", "textPatterns", "operations"), where)
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


def _firewall_of(data: Mapping[str, object]) -> MessageFirewall:
    if not isinstance(data, Mapping):
        raise SocialConfigError(f"message firewall: must be a mapping, got {data!r}")
    _check_keys(data, ("mode", "guardSecrets", "rules"), "message firewall")
    rules = data.get("rules", [])
    if not isinstance(rules, Sequence) or isinstance(rules, str):
        raise SocialConfigError(f"message firewall: field 'rules' must be a list, got {rules!r}")
    guard = data.get("guardSecrets", True)
    if not isinstance(guard, bool):
        raise SocialConfigError(
            f"message firewall: field 'guardSecrets' must be true or false, got {guard!r}"
        )
    return MessageFirewall(
        [_rule_of(rule, index) for index, rule in enumerate(rules)],
        mode=cast(FirewallMode, data.get("mode", "enforcement")),
        guard_secrets=guard,
    )
