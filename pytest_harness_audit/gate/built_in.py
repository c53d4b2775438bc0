"""The rules no policy overrides, together: what of the harness a call may never reach.

The audit store (:mod:`.store_guard`), the auditor's installation and policy
(:mod:`.install_guard`) and the harness's own processes (:mod:`.process_guard`). The gate asks
them before a call runs; the hook door asks them again of a call the host's transcript shows
ran with no hook step seeing it, so a call that got past killed hooks is judged by the same
rules.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any, NamedTuple

from pytest_harness_audit.gate.install_guard import InstallGuard
from pytest_harness_audit.gate.process_guard import HARNESS_PROCESSES, ProcessGuard
from pytest_harness_audit.gate.store_guard import StoreGuard
from pytest_harness_audit.policy import Evaluation, Policy

#: What the store rule's refusal says is out of the agent's reach.
STORE = "the audit store"


class Reached(NamedTuple):
    """What a call reaches (``STORE``, ``INSTALLATION``, ``HARNESS_PROCESSES``) and how (the
    target or command that does)."""

    what: str
    touched: str


class BuiltInRules:
    """The three guards of one session (each replaceable, as tests do on a gate)."""

    def __init__(
        self, store_guard: StoreGuard, install_guard: InstallGuard, process_guard: ProcessGuard
    ) -> None:
        self.store_guard = store_guard
        self.install_guard = install_guard
        self.process_guard = process_guard

    @classmethod
    def for_session(
        cls, storage: str | os.PathLike[str], root: str | None, policy: Policy
    ) -> BuiltInRules:
        """The guards of a session stored under ``storage``, its workspace ``root``."""
        return cls(
            StoreGuard(storage, root),
            InstallGuard(root, policy_source=policy.source),
            ProcessGuard(root, os.fspath(storage), policy.source or policy.name),
        )

    def reached(self, evaluation: Evaluation, params: Mapping[str, Any]) -> Reached | None:
        """The first thing out of the agent's reach the call reaches, else ``None``."""
        touched = self.store_guard.offending(evaluation.targets, params)
        if touched is not None:
            return Reached(STORE, touched)
        touched = self.install_guard.offending(evaluation)
        if touched is not None:  # the installation, or the evidence the hook door guards with it
            return Reached(self.install_guard.what(touched), touched)
        touched = self.process_guard.offending(evaluation.targets, params)
        if touched is not None:
            return Reached(HARNESS_PROCESSES, touched)
        return None


__all__ = ["STORE", "BuiltInRules", "Reached"]
