"""Tamper: every class of change to a stored chain is detected — by the library and the CLI.

Random chains (hypothesis) of random records get one mutation of a class (see
``chain_mutations``); ``verify_chain`` (fast and full parse) must report the chain invalid, and
``harness-audit audit verify SESSION`` must exit 1. Unaltered chains must verify.

Whole stored sessions get one tamper of a class of ``session_tampers`` (files deleted, copied,
linked, anchors and head copies forged, every link recomputed, rollbacks, forged checkpoints):
each is detected exactly from its level on — verify alone, the writer's witness, a published
head, a signed checkpoint — and not below. Live sessions (``live_tampers``: a rewrite between
calls through a recording proxy, a rewrite after the run of records a writer outside the test
process appended) are played honestly and tampered, and checked the same way, with the heads
the plugin keeps and publishes.
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
from live_tampers import LIVE_CASES, SESSION, LiveCase, Played
from reliability_support import drafts, run_cli
from session_tampers import (
    CASES,
    LEVELS,
    OWN,
    WHY,
    Case,
    Stage,
    build_session,
    recompute_everything,
)

from pytest_harness_audit.audit import AuditChain, RecordDraft, StorageLayout, verify_chain
from pytest_harness_audit.audit.checkpoint import verify_checkpointed
from pytest_harness_audit.audit.witness import Head
from pytest_harness_audit.readers.report import load_report_head

FAST_EXAMPLES = 40  # the default run; the slow variants try SLOW_EXAMPLES
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


@pytest.fixture
def no_fsync(monkeypatch: pytest.MonkeyPatch) -> None:
    """``os.fsync`` does nothing: these chains are built to be tampered with and read back at
    once, so durability on power loss is no part of what is checked (and a new session's
    flushes were most of an example's own time)."""
    monkeypatch.setattr(os, "fsync", lambda fd: None)


@pytest.mark.slow
@pytest.mark.parametrize("kind", sorted(MUTATIONS))
def test_every_mutation_class_is_detected(
    tmp_path: Path, kind: str, reliability_counts: Any, no_fsync: None
) -> None:
    _property(tmp_path, kind, FAST_EXAMPLES)(counts=reliability_counts)


@pytest.mark.slow
@pytest.mark.parametrize("kind", sorted(MUTATIONS))
def test_every_mutation_class_is_detected_many_examples(
    tmp_path: Path, kind: str, reliability_counts: Any, no_fsync: None
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


# -- whole sessions: every tamper class of the issue and more, with its detection level ----------


@pytest.fixture(scope="module")
def signing_keys(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """One Ed25519 key pair for the module (kept outside every storage directory)."""
    pytest.importorskip("cryptography")
    from pytest_harness_audit.audit.checkpoint import generate_key_pair

    return generate_key_pair(tmp_path_factory.mktemp("keys") / "audit.key")


def _detections(stage: Stage, witness: Head, public_key: Path) -> dict[str, bool]:
    """Which level detects the tampering (see ``session_tampers``)."""
    plain = verify_chain(stage.storage, "s")
    full = verify_chain(stage.storage, "s", full=True)
    assert plain.valid == full.valid, (plain, full)
    cli = run_cli(["--storage", str(stage.storage), "audit", "verify", "s"])
    assert cli.code == (0 if plain.valid else 1), cli
    by_witness = verify_chain(stage.storage, "s", witness=witness)
    by_head = run_cli(
        ["audit", "verify", "s", "--head", witness.short, "--storage", str(stage.storage)]
    )
    assert by_head.code in (0, 1), by_head
    by_checkpoint = verify_checkpointed(stage.storage, "s", public_key)
    return {
        "verify": not plain.valid,
        "witness": not by_witness.valid or by_witness.witness_state != "current",
        "head": by_head.code == 1 or "Published head: current" not in by_head.stdout,
        "checkpoint": not by_checkpoint.valid or by_checkpoint.checkpoint_state != "current",
    }


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_session_tamper_is_detected_at_its_level(
    tmp_path: Path, case: Case, signing_keys: tuple[Path, Path], reliability_counts: Any
) -> None:
    from pytest_harness_audit.audit.checkpoint import sign_session_end

    private, public = signing_keys
    storage = tmp_path / "store"
    witness = build_session(storage, "s")
    build_session(storage, "other")
    sign_session_end(storage, "s", private, witness=witness)
    layout = StorageLayout.at(storage)
    stage = Stage(storage, layout.paths("s"), layout.paths("other"), tmp_path)
    untouched = _detections(stage, witness, public)
    assert not any(untouched.values()), untouched
    case.tamper(stage)
    detected = _detections(stage, witness, public)
    weakest = LEVELS.index(case.level)
    expected = {level: index >= weakest for index, level in enumerate(LEVELS)}
    assert detected == expected, (case.name, detected)
    reliability_counts.add("tamper", "session classes detected")
    reliability_counts.detail("tamper", f"{case.origin}: {case.name} → {case.level}")


def _live_detections(played: Played, public_key: Path) -> dict[str, bool]:
    """Which level detects the tampering of a live session (see ``live_tampers``)."""
    storage = str(played.storage)
    plain = run_cli(["--storage", storage, "audit", "verify", SESSION])
    assert plain.code in (0, 1), plain
    published = load_report_head(played.storage, SESSION)
    assert published is not None and published.count is not None
    by_head = run_cli(["--storage", storage, "audit", "verify", SESSION, "--head", str(published)])
    assert by_head.code in (0, 1), by_head
    by_checkpoint = verify_checkpointed(played.storage, SESSION, public_key)
    return {
        "verify": plain.code == 1,
        "witness": not played.harness.verify().valid,
        "head": by_head.code == 1,
        "checkpoint": not by_checkpoint.valid,
    }


@pytest.mark.parametrize("case", LIVE_CASES, ids=[case.name for case in LIVE_CASES])
def test_live_session_tamper_is_detected_at_its_level(
    tmp_path: Path, case: LiveCase, signing_keys: tuple[Path, Path], reliability_counts: Any
) -> None:
    private, public = signing_keys
    honest = case.play(tmp_path / "honest", private, False)
    untouched = _live_detections(honest, public)
    assert not any(untouched.values()), untouched
    assert honest.harness.verify().witness_state in ("current", "extended")
    forged = case.play(tmp_path / "forged", private, True)
    detected = _live_detections(forged, public)
    weakest = LEVELS.index(case.level)
    expected = {level: index >= weakest for index, level in enumerate(LEVELS)}
    assert detected == expected, (case.name, detected)
    reliability_counts.add("tamper", "live session classes detected")
    reliability_counts.detail("tamper", f"{case.origin}: {case.name} → {case.level} (live)")


def test_session_tamper_corpus_covers_the_issue_and_twenty_more() -> None:
    origins = [case.origin for case in CASES]
    assert origins.count(WHY) >= 11 and origins.count(OWN) >= 20
    names = [case.name for case in [*CASES, *LIVE_CASES]]
    assert len(set(names)) == len(names)
    assert {case.level for case in [*CASES, *LIVE_CASES]} <= set(LEVELS)
    assert {case.level for case in LIVE_CASES} == {"witness", "head"}


def test_recompute_everything_passes_verify_fails_head_and_public_key(
    tmp_path: Path, signing_keys: tuple[Path, Path]
) -> None:
    """The forgery verify cannot see by design, caught by a published head and a checkpoint."""
    from pytest_harness_audit.audit.checkpoint import sign_session_end

    private, public = signing_keys
    storage = tmp_path / "store"
    witness = build_session(storage, "s")
    build_session(storage, "other")
    sign_session_end(storage, "s", private, witness=witness)
    layout = StorageLayout.at(storage)
    recompute_everything(Stage(storage, layout.paths("s"), layout.paths("other"), tmp_path))
    base = ["--storage", str(storage), "audit", "verify", "s"]
    plain = run_cli(base)
    assert plain.code == 0 and "Chain valid: true" in plain.stdout
    head = run_cli([*base, "--head", witness.hash])
    assert head.code == 1 and "witness_mismatch" in head.stdout
    signed = run_cli([*base, "--public-key", str(public)])
    assert signed.code == 1 and "checkpoint_mismatch" in signed.stdout
