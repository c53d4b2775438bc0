"""The one reader of decision tags (``policy:``, ``rule:``, ``enforced:false``, ``immune:``)."""

from __future__ import annotations

from pytest_harness_audit.audit.record_view import CallRecord
from pytest_harness_audit.audit.tags import (
    DecisionTags,
    decision_tags,
    parse_tags,
    record_tags,
)


def test_parse_reads_each_kind_of_tag() -> None:
    tags = parse_tags(
        ["policy:deny", "rule:deny-secrets", "enforced:false", "immune:quarantine", "firewall:warn"]
    )
    assert tags == DecisionTags("deny", "deny-secrets", False, ("quarantine",), "warn")
    assert tags.quarantined
    assert tags.dry_run_deny


def test_the_first_tag_of_a_kind_wins_and_strays_are_ignored() -> None:
    tags = parse_tags(["policy:warn", 3, None, "policy:deny", "rule:a", "rule:b", "other:x"])
    assert (tags.decision, tags.rule, tags.enforced, tags.immune) == ("warn", "a", True, ())
    assert not tags.dry_run_deny


def test_no_tags_mean_no_decision() -> None:
    assert parse_tags([]) == DecisionTags()
    assert not DecisionTags().quarantined


def test_record_tags_tolerates_malformed_records() -> None:
    assert record_tags({}) == DecisionTags()
    assert record_tags({"rules": "x"}) == DecisionTags()
    assert record_tags({"rules": {"constraints": "policy:deny"}}) == DecisionTags()
    assert record_tags({"rules": {"constraints": ["policy:allow"]}}).decision == "allow"


def test_decision_tags_round_trip() -> None:
    assert decision_tags("deny", "r", enforced=False) == ("policy:deny", "rule:r", "enforced:false")
    assert decision_tags("warn", "r", enforced=False) == ("policy:warn", "rule:r")
    assert parse_tags(decision_tags("deny", "default", enforced=False)).dry_run_deny


def test_the_record_view_reads_through_the_parser() -> None:
    record = CallRecord(
        {"rules": {"constraints": ["policy:deny", "rule:x", "enforced:false", "immune:quarantine"]}}
    )
    assert (record.decision, record.rule_id, record.enforced, record.quarantined) == (
        "deny",
        "x",
        False,
        True,
    )
    assert record.tags == parse_tags(record.constraints)
