"""The gate: decide before anything runs, act, inspect, then record (DESIGN §2)."""

from pytest_harness_audit.gate.decision import BLOCK_PREFIX, GateDecision
from pytest_harness_audit.gate.follower import immune_entry
from pytest_harness_audit.gate.gate import Classifier, Gate
from pytest_harness_audit.gate.seam import CallFindings, GatedCall, Outcome

__all__ = [
    "BLOCK_PREFIX",
    "CallFindings",
    "Classifier",
    "Gate",
    "GateDecision",
    "GatedCall",
    "Outcome",
    "immune_entry",
]
