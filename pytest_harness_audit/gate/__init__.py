"""The gate: decide before anything runs, then record (DESIGN §2)."""

from pytest_harness_audit.gate.gate import (
    BLOCK_PREFIX,
    Classifier,
    Gate,
    GateDecision,
    immune_entry,
)

__all__ = ["BLOCK_PREFIX", "Classifier", "Gate", "GateDecision", "immune_entry"]
