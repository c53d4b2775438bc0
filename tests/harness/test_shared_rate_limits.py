"""``rateLimit`` rules count every call of a session, whichever process gated it.

Two gates on one storage directory and session stand for two processes (each opens its own
chain): the count is rebuilt from the records' ``rateHits``, so it is shared through the chain.
"""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from pytest_harness_audit.audit.chain import AuditChain
from pytest_harness_audit.audit.reader import iter_records
from pytest_harness_audit.audit.records import RecordDraft
from pytest_harness_audit.audit.verify import verify_chain
from pytest_harness_audit.gate import Gate
from pytest_harness_audit.policy import Policy
from pytest_harness_audit.policy.ratelimit import RateHits

SESSION = "shared-rate"


class FakeClock:
    """A clock the test moves by hand (seconds)."""

    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now


def burst_policy(max_count: int = 2, window_ms: int = 60_000, **match: Any) -> Policy:
    return Policy.from_dict(
        {
            "defaultPolicy": "allow",
            "rules": [
                {
                    "id": "burst",
                    "name": "Bash burst",
                    "priority": 1,
                    "decision": "deny",
                    "reason": "Too many Bash calls",
                    "match": {
                        "tools": ["Bash"],
                        "rateLimit": {"maxCount": max_count, "windowMs": window_ms},
                        **match,
                    },
                }
            ],
        }
    )


def burst_and_immune_policy(max_count: int) -> Policy:
    """``burst_policy`` plus a secret-file deny and an immune ladder it climbs in two denials."""
    document = burst_policy(max_count=max_count).to_dict()
    document["rules"].append(
        {
            "id": "deny-secrets",
            "name": "no secrets",
            "priority": 2,
            "decision": "deny",
            "match": {"targetPatterns": ["**/secret*"]},
        }
    )
    document["immune"] = {
        "window": {"calls": 20},
        "triggers": {"enforced_deny": 2},
        "thresholds": {"notice": 2, "quarantine": 4},
    }
    return Policy.from_dict(document)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def open_gate(tmp_path: Path, clock: FakeClock) -> Iterator[Any]:
    """Open a gate on the session as a new process would: its own chain object."""
    chains: list[AuditChain] = []

    def opener(policy: Policy | None = None) -> Gate:
        chain = AuditChain(tmp_path, SESSION)
        chains.append(chain)
        return Gate(policy or burst_policy(), chain, clock=clock)

    yield opener
    for chain in chains:
        chain.close()


def call(gate: Gate, tool: str = "Bash", **params: Any) -> dict[str, Any]:
    """Decide and record one call as a door does; return its record."""
    decision = gate.decide(tool, params or {"command": "make test"})
    status = "blocked" if decision.blocked else "success"
    return gate.record(decision, status=status)


def decision_of(record: dict[str, Any]) -> str:
    return next(c[7:] for c in record["rules"]["constraints"] if c.startswith("policy:"))


@pytest.mark.parametrize("third", ["first gate", "second gate"])
def test_the_third_call_is_denied_whichever_gate_makes_it(
    third: str, open_gate: Any, clock: FakeClock
) -> None:
    first, second = open_gate(), open_gate()
    assert call(first)["result"]["status"] == "success"
    clock.now += 1
    assert call(second)["result"]["status"] == "success"
    clock.now += 1
    record = call(first if third == "first gate" else second)
    assert record["result"]["status"] == "blocked"
    assert "rule:burst" in record["rules"]["constraints"]
    assert record["result"]["errorMessage"] == "[blocked] [web4-policy] Too many Bash calls"


def test_a_record_the_fast_reader_refuses_still_counts(open_gate: Any, clock: FakeClock) -> None:
    first, second = open_gate(), open_gate()
    # A lone surrogate reaches the line escaped, which orjson will not read back.
    assert call(first, command="echo \udc80")["rateHits"] == ["burst"]
    clock.now += 1
    assert call(second)["result"]["status"] == "success"
    clock.now += 1
    assert call(second)["result"]["status"] == "blocked"


def test_calls_outside_the_window_do_not_count(open_gate: Any, clock: FakeClock) -> None:
    first, second = open_gate(), open_gate()
    call(first)
    clock.now += 70  # the first call has left the 60 s window
    call(second)
    clock.now += 5
    assert call(first)["result"]["status"] == "success"  # only the second call is in the window
    clock.now += 1
    assert call(second)["result"]["status"] == "blocked"


def test_a_gate_opened_later_replays_the_whole_chain(open_gate: Any, clock: FakeClock) -> None:
    first = open_gate()
    call(first)
    call(first, "Read", file_path="README.md")
    call(first)
    later = open_gate()
    assert call(later)["result"]["status"] == "blocked"


def test_own_records_are_not_counted_twice(open_gate: Any, clock: FakeClock) -> None:
    first, second = open_gate(burst_policy(max_count=3)), open_gate(burst_policy(max_count=3))
    call(first)
    call(first)
    call(second, "Read", file_path="README.md")  # makes the first gate read the chain again
    assert call(first)["result"]["status"] == "success"  # 2 earlier calls, not 4
    assert call(second)["result"]["status"] == "blocked"  # 3 earlier calls


def test_records_carry_rate_hits_only_when_there_were_hits(
    open_gate: Any, clock: FakeClock
) -> None:
    gate = open_gate()
    records = [call(gate, "Read", file_path="README.md")]
    for _ in range(3):
        clock.now += 0.5
        records.append(call(gate))
    assert "rateHits" not in records[0] and "rateClock" not in records[0]
    assert [r.get("rateHits") for r in records[1:]] == [["burst"]] * 3
    assert [r["rateClock"] for r in records[1:]] == [1_000.5, 1_001.0, 1_001.5]
    assert records[-1]["result"]["status"] == "blocked"


def test_a_policy_without_rate_limits_writes_no_rate_hits(open_gate: Any, tmp_path: Path) -> None:
    gate = open_gate(Policy.preset("safety"))
    call(gate)
    call(gate, "Read", file_path="README.md")
    assert not any("rateHits" in r for r in iter_records(tmp_path, SESSION))


def test_a_chain_written_before_rate_hits_still_works(
    open_gate: Any, clock: FakeClock, tmp_path: Path
) -> None:
    chain = AuditChain(tmp_path, SESSION)
    for extra in ({"clock": clock.now}, {}, {"clock": clock.now, "rateHits": ["burst"]}):
        # records of earlier versions: no rateHits, or rateHits timed by ``clock`` alone
        chain.append(
            RecordDraft(
                tool="Bash",
                category="command",
                target="make",
                targets=("make",),
                params={"command": "make"},
                constraints=("policy:allow", "rule:default"),
                status="success",
                output=None,
                error_message=None,
                duration_ms=1.0,
                extra=extra,
            )
        )
    chain.close()
    gate = open_gate()
    clock.now += 1
    assert call(gate)["result"]["status"] == "success"  # one earlier hit: the third record's
    assert call(gate)["result"]["status"] == "blocked"
    assert verify_chain(tmp_path, SESSION).valid


def test_redecide_answers_as_the_earlier_decision_and_counts_nothing(
    open_gate: Any, clock: FakeClock
) -> None:
    gate = open_gate()
    earlier = RateHits(("burst",), (2,), clock.now)
    decision = gate.redecide("Bash", {"command": "make"}, earlier)
    assert decision.blocked and decision.rate_hits == earlier
    allowed = gate.redecide("Bash", {"command": "make"}, RateHits(("burst",), (0,), clock.now))
    assert not allowed.blocked
    assert not gate.redecide("Bash", {"command": "make"}, None).blocked
    assert call(gate)["result"]["status"] == "success"  # nothing counted by redecide
    assert call(gate)["result"]["status"] == "success"
    assert call(gate)["result"]["status"] == "blocked"


def test_quarantine_blocks_still_carry_the_hits(open_gate: Any) -> None:
    gate = open_gate(burst_and_immune_policy(max_count=100))
    call(gate, "Read", file_path="secret1")
    call(gate, "Read", file_path="secret2")
    assert gate.ladder.level == "quarantine"
    record = call(gate)
    assert record["result"]["status"] == "blocked"
    assert "immune:quarantine" in record["rules"]["constraints"]
    assert record["rateHits"] == ["burst"]


def test_one_pass_feeds_both_the_ladder_and_the_counter(open_gate: Any) -> None:
    policy = burst_and_immune_policy(max_count=1)
    first, second = open_gate(policy), open_gate(policy)
    call(first)
    call(first, "Read", file_path="secret1")
    call(first, "Read", file_path="secret2")
    record = call(second)  # the first gate's records both quarantine it and fire the limit
    assert "immune:quarantine" in record["rules"]["constraints"]
    assert "rule:burst" in record["rules"]["constraints"]
    assert second.ladder.level == "quarantine"


def test_threads_sharing_one_gate_count_every_call(open_gate: Any) -> None:
    gate = open_gate(burst_policy(max_count=50))

    def worker() -> list[str]:
        return [call(gate)["result"]["status"] for _ in range(25)]

    with ThreadPoolExecutor(max_workers=4) as pool:
        statuses = [s for batch in pool.map(lambda _: worker(), range(4)) for s in batch]
    assert statuses.count("success") == 50 and statuses.count("blocked") == 50
