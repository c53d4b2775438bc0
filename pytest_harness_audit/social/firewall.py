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
from dataclasses import dataclass
from typing import cast

from pytest_harness_audit.inspect.secrets import SecretRegistry, fingerprint
from pytest_harness_audit.social.errors import SocialConfigError
from pytest_harness_audit.social.firewall_rules import (
    MODES,
    Decision,
    FirewallMode,
    MessageRule,
    SendCandidate,
    check_keys,
    rule_of,
)
from pytest_harness_audit.social.message_json import (
    canonical_message_json,
    readable_strings,
)

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
#: The secret guard's rule: a known secret in a message.
MESSAGE_SECRET_RULE = MessageRule(SECRET_RULE_ID, "refuse", SECRET_REFUSAL, SECRET_FEEDBACK)


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
            fingerprints, found = self._secrets_in(candidate.guarded_text())
            if fingerprints:
                evidence = {
                    "rule": SECRET_RULE_ID,
                    "sources": [secret.source for secret in found] or ["workspace"],
                    "fingerprints": fingerprints,
                }
                matches.append((MESSAGE_SECRET_RULE, evidence))
        for rule in self.rules:
            evidence_or_none = rule.match(candidate)
            if evidence_or_none is not None:
                matches.append((rule, evidence_or_none))
        return matches

    def _secrets_in(self, text: str) -> tuple[list[str], list[_Secret]]:
        """The fingerprints of the known secrets in ``text``, and the noted values found whole."""
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
        return fingerprints, found

    def unchecked_secrets(self, send_input: object) -> list[str]:
        """Fingerprints of the known secrets in the input of a send refused before any check
        (an invalid address, ill-formed text, a bad form …): the secret guard reads every
        string of it, keys included, lone surrogates left out so that none hides a value.
        Empty without the secret guard."""
        if not self.guard_secrets:
            return []
        return self._secrets_in("\n".join(readable_strings(send_input)))[0]

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


def _firewall_of(data: Mapping[str, object]) -> MessageFirewall:
    if not isinstance(data, Mapping):
        raise SocialConfigError(f"message firewall: must be a mapping, got {data!r}")
    check_keys(data, ("mode", "guardSecrets", "rules"), "message firewall")
    rules = data.get("rules", [])
    if not isinstance(rules, Sequence) or isinstance(rules, str):
        raise SocialConfigError(f"message firewall: field 'rules' must be a list, got {rules!r}")
    guard = data.get("guardSecrets", True)
    if not isinstance(guard, bool):
        raise SocialConfigError(
            f"message firewall: field 'guardSecrets' must be true or false, got {guard!r}"
        )
    return MessageFirewall(
        [rule_of(rule, index) for index, rule in enumerate(rules)],
        mode=cast(FirewallMode, data.get("mode", "enforcement")),
        guard_secrets=guard,
    )
