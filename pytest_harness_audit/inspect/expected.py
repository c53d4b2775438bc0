"""The protected changes a call's own text announces: hooks a hook manager's install command
writes, ``*.pth`` files a package installer writes (:func:`.exec_config.expected_by`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from pytest_harness_audit.inspect.effect_set import Effects
from pytest_harness_audit.inspect.exec_config import expected_by


def expected_changes(effects: Effects, params: Mapping[str, Any]) -> Effects:
    """``effects`` with the protected changes the call's own text announces moved to
    :attr:`Effects.installed`: hooks (and the configuration) a hook manager's install command
    writes, ``*.pth`` files a package installer writes (:func:`.exec_config.expected_by`)."""
    if not effects.protected:
        return effects
    command = params.get("command", params.get("cmd"))
    if not isinstance(command, str):
        return effects
    installed = tuple(path for path in effects.protected if expected_by(command, path))
    if not installed:
        return effects
    kept = tuple(path for path in effects.protected if path not in installed)
    return replace(effects, protected=kept, installed=installed)


__all__ = ["expected_changes"]
