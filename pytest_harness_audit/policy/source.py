"""The one way to get a policy from what a user wrote: a preset name, a file path, or a policy.

Markers, fixtures, ``Harness(policy=…)``, scenario files and the ``harness-audit`` commands all
resolve their policy here, so a name means the same thing everywhere:

* ``None`` is the ``safety`` preset;
* a :class:`Policy` is used as it is;
* a ``str`` that names a shipped preset is that preset; any other ``str`` is a file path;
* a :class:`os.PathLike` is always a file path (``--policy FILE`` never means a preset).

A relative path is read relative to ``base_dir`` (default: the current directory).
``default_policy`` and ``enforce`` override the resolved policy's own.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Final, TypeAlias

from pytest_harness_audit.errors import PolicyError
from pytest_harness_audit.policy.loader import PRESET_NAMES
from pytest_harness_audit.policy.policy import Policy

#: The preset a session gets when it names no policy.
DEFAULT_PRESET: Final = "safety"

#: What a user may name a policy by.
PolicySource: TypeAlias = "Policy | str | os.PathLike[str] | None"


def resolve_policy(
    source: PolicySource,
    *,
    base_dir: str | os.PathLike[str] | None = None,
    default_policy: str | None = None,
    enforce: bool | None = None,
) -> Policy:
    """The policy ``source`` names (see the module docstring), with the overrides applied.

    Raises :class:`PolicyError` naming the value when it is neither a preset nor a policy file,
    or when the file is invalid.
    """
    if source is None:
        source = DEFAULT_PRESET
    if isinstance(source, str) and source in PRESET_NAMES:
        return Policy.preset(source, default_policy=default_policy, enforce=enforce)
    if isinstance(source, Policy):
        return _override(source, default_policy, enforce)
    if not isinstance(source, (str, os.PathLike)):
        raise PolicyError(
            f"policy {source!r}: expected a Policy, a preset name or a policy file path, "
            f"not {type(source).__name__}"
        )
    path = Path(os.fspath(source))
    if not path.is_absolute() and base_dir is not None:
        path = Path(base_dir) / path
    if isinstance(source, str) and not path.exists():
        raise PolicyError(
            f"policy {source!r}: not a preset, and no policy file at {path} (file not found). "
            f"Available: {', '.join(PRESET_NAMES)}"
        )
    return _override(Policy.load(path), default_policy, enforce)


def _override(policy: Policy, default_policy: str | None, enforce: bool | None) -> Policy:
    if default_policy is None and enforce is None:
        return policy
    data = policy.to_dict()
    if default_policy is not None:
        data["defaultPolicy"] = default_policy
    if enforce is not None:
        data["enforce"] = enforce
    return Policy.from_dict(data, source=policy.source, name=policy.name)
