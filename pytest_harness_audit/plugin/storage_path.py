"""``storagePath`` under pytest: where ``--harness-audit`` keeps chains when nothing closer says.

Precedence: ``--harness-audit-dir``, then an ini ``harness_audit_dir`` the project sets, then the
``storagePath`` of the run's policy file (``--harness-audit-policy`` / ini
``harness_audit_policy``; ``~`` expanded, relative to the file), then ``.harness-audit``.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from pytest_harness_audit.plugin.options import AuditOptions

#: The ini default of ``harness_audit_dir`` (an ini file that says it says nothing new).
DEFAULT = ".harness-audit"


def configured_storage(policy: str, root: Path) -> Path | None:
    """The ``storagePath`` of ``policy`` when it names a policy file (None for a preset, or a
    file that says none). A file that does not load is reported where options are checked."""
    if policy == "safety":  # the default preset: no import of the policy package at start-up
        return None
    from pytest_harness_audit.errors import HarnessAuditError
    from pytest_harness_audit.policy.loader import PRESET_NAMES
    from pytest_harness_audit.policy.source import resolve_policy

    if policy in PRESET_NAMES:
        return None
    try:
        return resolve_policy(policy, base_dir=root).storage_path
    except HarnessAuditError:
        return None


def with_storage_path(config: pytest.Config, options: AuditOptions) -> AuditOptions:
    """``options`` with the policy file's ``storagePath`` as the directory, when neither the
    command line nor the ini file names one."""
    if config.getoption("--harness-audit-dir") or config.getini("harness_audit_dir") != DEFAULT:
        return options
    configured = configured_storage(options.policy, Path(str(config.rootpath)))
    if configured is None:
        return options
    return dataclasses.replace(options, directory=Path(config.invocation_params.dir, configured))
