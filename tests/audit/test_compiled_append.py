"""The compiled build: when CI runs the audit tests against a mypyc wheel, the append path must
really be the compiled one (extension modules), and the draft a plain class."""

from __future__ import annotations

import importlib
import os

import pytest

from pytest_harness_audit.audit.draft import RecordDraft

COMPILED_MODULES = (
    "pytest_harness_audit.audit.chain",
    "pytest_harness_audit.audit.records",
    "pytest_harness_audit.audit.anchor",
    "pytest_harness_audit.audit.canonical",
    "pytest_harness_audit.audit.clock",
    "pytest_harness_audit.audit.record_ids",
)

compiled_only = pytest.mark.skipif(
    os.environ.get("HARNESS_AUDIT_EXPECT_COMPILED") != "1",
    reason="only when the tests run against the compiled wheel (HARNESS_AUDIT_EXPECT_COMPILED=1)",
)


@compiled_only
@pytest.mark.parametrize("name", COMPILED_MODULES)
def test_append_modules_are_extension_modules(name: str) -> None:
    origin = str(importlib.import_module(name).__file__)
    assert origin.endswith(".so"), f"{name} loaded from {origin}, not from the compiled wheel"


def test_the_draft_stays_a_plain_class() -> None:
    # A compiled class would refuse a wrong field type as the draft is made, with a bare
    # TypeError, before ``validate_draft`` could name the field.
    assert RecordDraft.__module__ == "pytest_harness_audit.audit.draft"
    module = importlib.import_module(RecordDraft.__module__)
    assert str(module.__file__).endswith(".py")
    draft = RecordDraft(tool="Grep", category="search", targets=["a"])  # type: ignore[arg-type]
    assert draft.targets == ["a"]
