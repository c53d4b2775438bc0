"""The decision tags of a record's ``rules.constraints``, written and read in one place.

The gate writes what it decided as short tags: ``policy:<decision>``, ``rule:<id>``
(``rule:default`` for the default policy), ``enforced:false`` for a dry-run deny,
``immune:<level>`` for a call an immune quarantine blocked (and on escalation and lift records),
``firewall:<decision>`` for a message the firewall judged. :func:`parse_tags` reads them back; the
first tag of each kind wins.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final

POLICY: Final = "policy:"
RULE: Final = "rule:"
IMMUNE: Final = "immune:"
FIREWALL: Final = "firewall:"
NOT_ENFORCED: Final = "enforced:false"
QUARANTINE: Final = "immune:quarantine"


@dataclass(frozen=True, slots=True)
class DecisionTags:
    """What a record's constraint tags say.

    ``decision`` is the policy decision (``allow``/``warn``/``deny``; ``None`` when the record
    carries none), ``rule`` the deciding rule's id, ``enforced`` false for a dry-run deny,
    ``immune`` the values of the ``immune:`` tags in order, ``firewall`` the firewall's decision.
    """

    decision: str | None = None
    rule: str | None = None
    enforced: bool = True
    immune: tuple[str, ...] = ()
    firewall: str | None = None

    @property
    def quarantined(self) -> bool:
        """Whether an immune quarantine blocked the call."""
        return "quarantine" in self.immune

    @property
    def dry_run_deny(self) -> bool:
        """A deny that was not enforced: the call ran."""
        return self.decision == "deny" and not self.enforced


def _value(tag: str, prefix: str, current: str | None) -> str | None:
    return tag[len(prefix) :] if current is None and tag.startswith(prefix) else current


def parse_tags(constraints: Iterable[object]) -> DecisionTags:
    """Read constraint tags; items that are not strings, and unknown tags, are ignored."""
    decision = rule = firewall = None
    enforced = True
    immune: list[str] = []
    for tag in constraints:
        if not isinstance(tag, str):
            continue
        if tag == NOT_ENFORCED:
            enforced = False
        elif tag.startswith(IMMUNE):
            immune.append(tag[len(IMMUNE) :])
        else:
            decision = _value(tag, POLICY, decision)
            rule = _value(tag, RULE, rule)
            firewall = _value(tag, FIREWALL, firewall)
    return DecisionTags(decision, rule, enforced, tuple(immune), firewall)


def record_constraints(record: Mapping[str, Any]) -> tuple[str, ...]:
    """``rules.constraints`` of a raw record (empty when missing or malformed)."""
    rules = record.get("rules")
    constraints = rules.get("constraints") if isinstance(rules, Mapping) else None
    if not isinstance(constraints, (list, tuple)):
        return ()
    return tuple(item for item in constraints if isinstance(item, str))


def record_tags(record: Mapping[str, Any]) -> DecisionTags:
    """The decision tags of a raw record."""
    return parse_tags(record_constraints(record))


def decision_tags(decision: str, rule: str, *, enforced: bool = True) -> tuple[str, ...]:
    """The tags of a policy decision: ``policy:<decision>``, ``rule:<id>`` and, for an
    unenforced deny, ``enforced:false``."""
    base = (f"{POLICY}{decision}", f"{RULE}{rule}")
    return base if enforced or decision != "deny" else (*base, NOT_ENFORCED)
