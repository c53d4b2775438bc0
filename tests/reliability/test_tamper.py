"""Tamper: every class of change to a stored chain is detected — by the library and the CLI.

Random chains (hypothesis) of random records get one mutation of a class (see
``chain_mutations``); ``verify_chain`` (fast and full parse) must report the chain invalid, and
``harness-audit audit verify SESSION`` must exit 1. Unaltered chains must verify.
"""

from __future__ import annotations

import itertools
import os
from pathlib import Path
from typing import Any

import pytest
from chain_mutations import MIN_RECORDS, MUTATIONS
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reliability_support import drafts, run_cli

from pytest_harness_audit.audit import AuditChain, RecordDraft, verify_chain

FAST_EXAMPLES = 80
SLOW_EXAMPLES = 600
_sessions = itertools.count()


def _build(storage: str, session: str, batch: list[RecordDraft]) -> bytes:
    with AuditChain(storage, session) as chain:
        for draft in batch:
            chain.append(draft)
    return chain.path.read_bytes()


def _check_detected(
    storage: str, kind: str, batch: list[RecordDraft], data: Any, counts: Any
) -> None:
    session = f"t{next(_sessions)}"
    original = _build(storage, session, batch)
    mutated = MUTATIONS[kind](original, data.draw)
    if mutated == original:  # a mutation that changes nothing is no tampering
        return
    with open(os.path.join(storage, "audit", f"{session}.jsonl"), "wb") as handle:
        handle.write(mutated)
    counts.add("tamper", "mutations tried")
    counts.detail("tamper", kind)
    fast = verify_chain(storage, session)
    full = verify_chain(storage, session, full=True)
    cli = run_cli(["--storage", storage, "audit", "verify", session])
    assert not fast.valid, (kind, fast)
    assert not full.valid, (kind, full)
    assert cli.code == 1, (kind, cli)
    assert "Chain valid: false" in cli.stdout
    counts.add("tamper", "detected")


def _property(storage: Path, kind: str, examples: int) -> Any:
    @settings(
        max_examples=examples,
        deadline=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )
    @given(batch=st.lists(drafts, min_size=MIN_RECORDS.get(kind, 1), max_size=8), data=st.data())
    def check(batch: list[RecordDraft], data: Any, counts: Any) -> None:
        _check_detected(str(storage), kind, batch, data, counts)

    return check


@pytest.mark.parametrize("kind", sorted(MUTATIONS))
def test_every_mutation_class_is_detected(
    tmp_path: Path, kind: str, reliability_counts: Any
) -> None:
    _property(tmp_path, kind, FAST_EXAMPLES)(counts=reliability_counts)


@pytest.mark.slow
@pytest.mark.parametrize("kind", sorted(MUTATIONS))
def test_every_mutation_class_is_detected_many_examples(
    tmp_path: Path, kind: str, reliability_counts: Any
) -> None:
    _property(tmp_path, kind, SLOW_EXAMPLES)(counts=reliability_counts)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(batch=st.lists(drafts, max_size=10))
def test_unaltered_chains_verify(tmp_path: Path, batch: list[RecordDraft]) -> None:
    session = f"t{next(_sessions)}"
    _build(str(tmp_path), session, batch)
    assert verify_chain(tmp_path, session).valid
    assert verify_chain(tmp_path, session, full=True).record_count == len(batch)
    assert run_cli(["--storage", str(tmp_path), "audit", "verify", session]).code == 0
