"""The compiled build: when CI runs the policy tests against a mypyc wheel, they must really
run against it (an extension module), not against the source tree beside them."""

from __future__ import annotations

import importlib
import os

import pytest

HOT_MODULES = (
    "pytest_harness_audit.policy.engine",
    "pytest_harness_audit.policy.compiled_rule",
    "pytest_harness_audit.policy.prefilter",
    "pytest_harness_audit.policy.targets",
    "pytest_harness_audit.policy.shell.reading",
)


@pytest.mark.skipif(
    os.environ.get("HARNESS_AUDIT_EXPECT_COMPILED") != "1",
    reason="only when the tests run against the compiled wheel (HARNESS_AUDIT_EXPECT_COMPILED=1)",
)
@pytest.mark.parametrize("name", HOT_MODULES)
def test_hot_modules_are_extension_modules(name: str) -> None:
    origin = str(importlib.import_module(name).__file__)
    assert origin.endswith(".so"), f"{name} loaded from {origin}, not from the compiled wheel"
