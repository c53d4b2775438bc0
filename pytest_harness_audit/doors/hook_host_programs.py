"""The protection of the hook door's snapshots: what the library protects, the project
settings' ``permissions`` apart (judged by what a change adds, :mod:`.hook_host_project`), and
the workspace files the host's settings, the project's and the user's, name as programs it runs
itself (its hook commands, ``statusLine``, its helpers, the project's MCP servers:
:mod:`~pytest_harness_audit.inspect.host_programs`). A call that rewrites one has its code run
by the host after the call, outside every tool call: a protected change of the call."""

from __future__ import annotations

import os

from pytest_harness_audit.inspect.effects import Protection
from pytest_harness_audit.inspect.host_programs import host_programs
from pytest_harness_audit.policy import Policy


def protection_at(root: str | None, policy: Policy) -> Protection:
    """The protection of the hook door's snapshots of the workspace ``root`` (``None``: no
    workspace, no programs)."""
    programs = host_programs(root, os.path.expanduser("~")) if root else frozenset()
    return Protection(policy.protect, permissions_apart=True, programs=programs)


__all__ = ["protection_at"]
