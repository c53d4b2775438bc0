"""Every call of the shared benchmark corpus that is not a shell command keeps its decision,
rule, category and targets: a change meant to make evaluation faster changes none of them.

The answers are kept as one digest per policy and tool (``shared_corpus_digests.json``), over two
passes of the corpus: the first decides each tool's first calls on the full path (before its
prefilter is built), the second on the prefiltered path. A change meant to change decisions
(a rule of the ``safety`` preset, a new target form) rewrites them, after its diff is checked
(``HARNESS_AUDIT_BENCH_DIR`` names the corpus's folder when it is not ``../shared/bench``
beside the checkout):

    python tests/policy/test_shared_corpus_decisions.py --write
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from pytest_harness_audit.policy import Policy, SlidingWindowCounter
from pytest_harness_audit.policy.tool_names import BASH

#: The corpus beside the checkout (``../shared/bench``), or where ``HARNESS_AUDIT_BENCH_DIR`` says.
SHARED_BENCH = Path(
    os.environ.get("HARNESS_AUDIT_BENCH_DIR")
    or Path(__file__).resolve().parents[2].parent / "shared" / "bench"
)
DIGESTS = Path(__file__).with_name("shared_corpus_digests.json")
POLICIES = ("safety", "policy-50")


def load_policy(name: str) -> Policy:
    """The ``safety`` preset, or the shared bench's ``policy-50``."""
    if name == "policy-50":
        return Policy.load(SHARED_BENCH / "policy-50.json")
    return Policy.preset(name)


def corpus() -> list[tuple[str, dict[str, Any]]]:
    """The shared corpus's calls that are not shell commands."""
    calls = []
    with (SHARED_BENCH / "calls.jsonl").open(encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                item = json.loads(line)
                if item["tool"] != BASH:
                    calls.append((item["tool"], item["params"]))
    return calls


def digests(name: str, calls: list[tuple[str, dict[str, Any]]]) -> dict[str, str]:
    """SHA-256 of every call's answer, by tool (``mcp__*`` tools together), over two passes."""
    policy = load_policy(name)
    counter = SlidingWindowCounter()
    by_tool: dict[str, Any] = {}
    for each_pass in range(2):
        for index, (tool, params) in enumerate(calls):
            found = policy.evaluate(tool, params, rate_counter=counter)
            answer = [
                each_pass, index, found.decision, found.enforced, found.rule_id,
                found.reason, found.category, found.target, list(found.targets),
            ]  # fmt: skip
            family = "mcp" if tool.startswith("mcp__") else tool
            line = json.dumps(answer, ensure_ascii=False).encode("utf-8", "surrogatepass")
            by_tool.setdefault(family, hashlib.sha256()).update(line + b"\n")
    return {family: digest.hexdigest() for family, digest in sorted(by_tool.items())}


def all_digests() -> dict[str, dict[str, str]]:
    calls = corpus()
    return {name: digests(name, calls) for name in POLICIES}


@pytest.mark.skipif(
    not (SHARED_BENCH / "calls.jsonl").is_file(),
    reason=f"the shared bench corpus is not at {SHARED_BENCH}",
)
def test_every_call_keeps_its_decision_rule_and_targets() -> None:
    want = json.loads(DIGESTS.read_text(encoding="utf-8"))
    got = all_digests()
    changed = [
        f"{name} {tool}"
        for name in POLICIES
        for tool in sorted(set(want[name]) | set(got[name]))
        if want[name].get(tool) != got[name].get(tool)
    ]
    assert not changed, (
        f"answers changed for: {', '.join(changed)} (if meant: python {__file__} --write)"
    )


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        raise SystemExit(f"usage: python {sys.argv[0]} --write")
    DIGESTS.write_text(json.dumps(all_digests(), indent=1) + "\n", encoding="utf-8")
