"""Print what the bridge adds to a send: the gate decision and the chain record.

Run: python tests/social_bridge/bench_bridge.py [count]
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

from pytest_harness_audit.doors.social import SocialSession, firewall_from_policy, sent_records
from pytest_harness_audit.session.harness import Harness
from pytest_harness_audit.social import ManualClock, SocialEndpoint

API_KEY = "sk-test-4f9a1c2e7b3d8a6f0e5c9b2a1d7e3f8c"


def per_call(label: str, count: int, started: float) -> None:
    elapsed = time.perf_counter() - started
    print(f"{label:<52} {elapsed / count * 1e6:10.1f} us/call  ({count} calls)")


def main(count: int) -> None:
    with tempfile.TemporaryDirectory() as directory:
        base = Path(directory)
        endpoint = SocialEndpoint(base / "raw", "alice", ["bob", "carol"], clock=ManualClock())
        started = time.perf_counter()
        for index in range(count):
            endpoint.send("group:bob,carol", f"message {index}")
        per_call("endpoint alone: multicast", count, started)
        endpoint.close()

        harness = Harness.create(base / "h", template="python-service", policy="safety")
        session = SocialSession(
            harness.gate,
            base / "social",
            "alice",
            ("bob", "carol"),
            firewall=firewall_from_policy(harness.policy),
            clock=ManualClock(),
        )
        session.note_secret(API_KEY, ".env")
        started = time.perf_counter()
        for index in range(count):
            session.endpoint.send("group:bob,carol", f"message {index}")
        per_call("bridge: gated + firewall + recorded multicast", count, started)

        started = time.perf_counter()
        records = harness.records
        found = sent_records(records, "group:bob,carol", "message 1*")
        per_call(f"sent_records over {len(records)} records", 1, started)
        assert found
        session.close()


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 500)
