"""Print figures for the social endpoint: send latency, gather round trip, firewall check cost.

Run: python tests/social/bench_social.py [count]
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

from pytest_harness_audit.social import ManualClock, MessageFirewall, MessageRule, SocialEndpoint
from pytest_harness_audit.social.addresses import canonical_address
from pytest_harness_audit.social.firewall_rules import SendCandidate

SCHEMA = {
    "type": "object",
    "properties": {"slot": {"type": "string", "enum": ["mon", "tue"]}},
    "required": ["slot"],
}


def per_call(label: str, count: int, started: float) -> None:
    elapsed = time.perf_counter() - started
    print(f"{label:<44} {elapsed / count * 1e6:10.1f} us/call  ({count} calls)")


def main(count: int) -> None:
    with tempfile.TemporaryDirectory() as directory:
        clock = ManualClock()
        endpoint = SocialEndpoint(Path(directory), "alice", ["bob", "carol"], clock=clock)
        started = time.perf_counter()
        for index in range(count):
            endpoint.send("group:bob,carol", f"message {index}")
        per_call("multicast send (durable post, fsync)", count, started)

        bob, carol = endpoint.peer("bob"), endpoint.peer("carol")
        started = time.perf_counter()
        for _ in range(count // 4):
            bob.answer({"slot": "mon"})
            carol.decline()
            endpoint.send(
                "group:bob,carol",
                "Which day?",
                {"op": "gather", "deadline": 60, "requestedSchema": SCHEMA},
            )
        per_call("gather to 2 peers, both answer, result", count // 4, started)
        endpoint.close()

    rules = [
        MessageRule(f"rule-{index}", "refuse", text_patterns=(rf"(?i)token-{index}\b",))
        for index in range(50)
    ]
    firewall = MessageFirewall(rules)
    for index in range(10):
        firewall.note_secret(f"secret-value-{index:04d}", ".env")
    text = "x" * 32_000
    candidate = SendCandidate(canonical_address("group:bob,carol", "alice"), "multicast", text)
    started = time.perf_counter()
    for index in range(count):
        firewall.check(candidate, f"chk_{index}")
    per_call("firewall check: 50 RE2 rules, 10 secrets, 32 kB", count, started)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 400)
