"""A rewrite of the chain during a test is caught by the head the test process keeps."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from pytest_harness_audit.session.harness import Harness


def forge(chain_path: Path) -> None:
    """Turn a blocked call into a success and recompute every link (a forger's best chain)."""
    records = [json.loads(line) for line in chain_path.read_text().splitlines()]
    for record in records:
        if record["result"]["status"] == "blocked":
            record["result"]["status"] = "success"
            record["rules"]["constraints"] = ["policy:allow", "rule:default"]
    lines, previous = [], "genesis"
    for index, record in enumerate(records):
        record["provenance"]["actionIndex"] = index
        record["provenance"]["prevRecordHash"] = previous
        line = json.dumps(record, separators=(",", ":"), ensure_ascii=False)
        lines.append(line)
        previous = hashlib.sha256(line.encode()).hexdigest()
    chain_path.write_text("".join(line + "\n" for line in lines))


def test_a_recomputed_chain_fails_the_session(tmp_path: Path) -> None:
    harness = Harness.create(tmp_path, template="python-service", policy="safety")
    harness.call("Bash", command="echo hi")
    harness.call("Bash", command="rm -rf app")
    assert str(harness.verdict) == "FAIL"
    forge(harness.chain.path)
    report = harness.verify()
    assert not report.valid
    assert "witness_mismatch" in str(report.to_dict() if hasattr(report, "to_dict") else report)
    assert str(harness.verdict) == "FAIL"  # the forged PASS does not stand
    harness.close()


def test_an_untouched_chain_matches_its_witness(tmp_path: Path) -> None:
    harness = Harness.create(tmp_path, template="python-service", policy="safety")
    harness.call("Bash", command="echo hi")
    assert harness.verify().valid
    assert str(harness.verdict) == "PASS"
    harness.close()
