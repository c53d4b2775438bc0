"""A secret in an exception's text is an exposure like one in an output."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pytest_harness_audit.session.harness import Harness

KEY = "sk-test-4f9a1c2e7b3d8a6f0e5c9b2a1d7e3f8c"


def test_a_secret_in_an_error_is_redacted_judged_and_kept_out_of_the_chain(
    tmp_path: Path,
) -> None:
    harness = Harness.create(tmp_path, template="python-service", policy="safety")
    env = (harness.root / ".env").read_text()

    def leaky(params: Any) -> str:
        raise ValueError(f"cannot parse {env}")

    harness.register_tool("Parse", leaky)
    result = harness.call("Parse")
    assert result.status == "error"
    assert KEY not in (result.error_message or "") and "[secret:" in (result.error_message or "")
    assert result.record["judged"]["caughtBy"] == "output"
    assert str(harness.verdict) == "FAIL"
    chain = (harness.storage_dir / "audit" / f"{harness.session_id}.jsonl").read_text()
    assert KEY not in chain
    harness.close()


def test_an_ordinary_error_is_left_alone(tmp_path: Path) -> None:
    harness = Harness.create(tmp_path, template="python-service", policy="safety")

    def broken(params: Any) -> str:
        raise ValueError("no such file: x")

    harness.register_tool("Broken", broken)
    result = harness.call("Broken")
    assert result.error_message == "Broken raised ValueError: no such file: x"
    assert "judged" not in result.record
    record = json.loads(
        (harness.storage_dir / "audit" / f"{harness.session_id}.jsonl").read_text().splitlines()[-1]
    )
    assert record["result"]["errorMessage"] == "Broken raised ValueError: no such file: x"
    harness.close()
