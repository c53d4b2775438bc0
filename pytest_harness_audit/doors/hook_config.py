"""``ConfigChange``: the host says one of its settings files changed during a session.

The host runs this event when ``~/.claude/settings.json`` (``user_settings``), the project's
``.claude/settings.json`` (``project_settings``) or ``.claude/settings.local.json``
(``local_settings``), its managed settings (``policy_settings``) or a skill file (``skills``)
changes, before the change takes effect; a hook's ``decision: "block"`` keeps it from taking
effect (never for ``policy_settings``). So a change that would fail the session is judged while
it can still be refused, instead of at the next event (by then an agent that removed the
harness's hooks has stopped every later event).

The event compares the host's settings (:mod:`.hook_host_settings`) with the state the host
still has in effect, the ``permissions`` of the project's settings files among them (the host
writes an ``allow`` rule there when the user allows a tool for good at its prompt, so they are
judged by what a change adds, as ``allowedTools`` is, :mod:`.hook_host_project`). A change that
counts is recorded as a ``note``
:data:`CONFIG_CHANGE` in error (FAIL, ``host-settings-changed``) and blocked; one that does not
(a key that does not count, an ``allow`` rule naming a call the host is asking about, a rule
removed) is a ``note`` in success, allowed. A blocked change stays on disk but not in effect:
its record keeps the state still in effect (:data:`IN_EFFECT_FIELD`), so a later change of the
same file, which would bring it into effect, is judged against that state too.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from pytest_harness_audit.audit.storage import StorageLayout
from pytest_harness_audit.doors.chain_faults import open_gate as open_session_gate
from pytest_harness_audit.doors.hook import read_payload
from pytest_harness_audit.doors.hook_effects import workspace_root
from pytest_harness_audit.doors.hook_host_digest import marked_records
from pytest_harness_audit.doors.hook_host_permissions import (
    ALLOWED_TOOLS,
    PERMISSIONS_EFFECTS_KEY,
    Change,
)
from pytest_harness_audit.doors.hook_host_project import is_permissions
from pytest_harness_audit.doors.hook_host_settings import (
    STATE_FIELD,
    HostWatch,
    host_settings_state,
    recorded_state,
    shown,
)
from pytest_harness_audit.errors import UsageError
from pytest_harness_audit.gate.seam import Outcome
from pytest_harness_audit.inspect import PROTECTED_FILE_CHANGED
from pytest_harness_audit.policy import Policy
from pytest_harness_audit.readers.verdict import CONFIG_CHANGE

#: The source whose change the host applies whatever a hook answers: recorded, never blocked.
POLICY_SETTINGS = "policy_settings"
#: The record field holding the event's source, file and answer.
RECORD_FIELD = "configChange"
#: The field of a blocked change's record: the host's settings state still in effect.
IN_EFFECT_FIELD = "hostSettingsInEffect"


@dataclass(frozen=True)
class ConfigPayload:
    """The fields of a ``ConfigChange`` payload the door uses."""

    session_id: str
    cwd: str | None
    source: str
    file_path: str | None


def parse_config_payload(text: str) -> ConfigPayload:
    """Validate a ``ConfigChange`` payload (unknown fields and sources are kept as they come);
    a malformed one raises one clear :class:`UsageError`."""
    data, _event = read_payload(text, CONFIG_CHANGE)
    for key in ("session_id", "source"):
        if not isinstance(data.get(key), str) or not data[key]:
            raise UsageError(
                f"hook payload: field {key!r} must be a non-empty string, got {data.get(key)!r}"
            )
    file_path = data.get("file_path")
    if file_path is not None and not isinstance(file_path, str):
        raise UsageError(f"hook payload: field 'file_path' must be a string, got {file_path!r}")
    cwd = data.get("cwd")
    return ConfigPayload(
        data["session_id"], cwd if isinstance(cwd, str) else None, data["source"], file_path
    )


@dataclass(frozen=True)
class InEffect:
    """What the session's chain says the host has in effect."""

    #: The host's settings state (``None``: none recorded, nothing compared), the project
    #: settings' ``permissions`` among it.
    state: dict[str, str | None] | None = None

    @classmethod
    def read(cls, storage: Path, session_id: str) -> InEffect:
        """Read from the session's chain: the last state recorded, or the one a blocked change
        kept in effect (until a later record holds another)."""
        state: dict[str, str | None] | None = None
        for record in _records(StorageLayout.at(storage).paths(session_id).chain):
            kept = record.get(IN_EFFECT_FIELD)
            recorded = recorded_state({STATE_FIELD: kept} if isinstance(kept, Mapping) else record)
            if recorded is not None:
                state = recorded
        return cls(state)


def _records(path: Path) -> Iterable[Mapping[str, Any]]:
    return marked_records(path, (f'"{STATE_FIELD}"'.encode(),))


@dataclass(frozen=True)
class ConfigJudgement:
    """A change judged: what counts in it, and whether the door blocks it."""

    payload: ConfigPayload
    #: The settings (as :func:`~.hook_host_settings.shown`) whose change counts.
    changed: list[str]
    #: The change of ``allowedTools`` and of the project's ``permissions`` (``None``: none).
    allowed: Change | None
    permissions: Change | None
    blocked: bool

    @property
    def fails(self) -> bool:
        """Whether the change fails the session."""
        return bool(self.changed) or bool(self.permissions and self.permissions.unexplained)

    def reason(self) -> str:
        """What counts in the change, as one line."""
        parts = list(self.changed)
        if self.permissions is not None and self.permissions.unexplained:
            parts.append("permissions added: " + ", ".join(self.permissions.unexplained))
        where = self.payload.file_path or self.payload.source
        text = f"the host's settings changed ({self.payload.source}: {where}): " + "; ".join(parts)
        return text + (" (change blocked)" if self.blocked else " (the host applies it)")


def handle_config_change(text: str, *, storage: Path, policy: Policy) -> dict[str, Any]:
    """Judge and record a ``ConfigChange`` payload; the answer blocks a change that fails the
    session (``{}``: the change is allowed)."""
    payload = parse_config_payload(text)
    project = workspace_root(payload.cwd)
    effect = InEffect.read(storage, payload.session_id)
    where = (os.fspath(storage), payload.session_id)
    if effect.state is not None:
        now = host_settings_state(names=list(effect.state), project=project)
    else:  # nothing recorded to compare with: this record starts the session's state
        now = host_settings_state(project=project)
    watch = HostWatch(effect.state, now, where)
    names = watch.changed
    counted = watch.counted(names)
    allowed = watch.allowed_change() if ALLOWED_TOOLS in names else None
    permissions = watch.permission_change(names)  # its added rules are the reason's own part
    listed = sorted(shown(name) for name in counted if not is_permissions(name))
    judged = ConfigJudgement(payload, listed, allowed, permissions, False)
    if judged.fails and payload.source != POLICY_SETTINGS:
        judged = replace(judged, blocked=True)
    _record(storage, judged, policy, now, effect)
    if not judged.blocked:
        return {}
    return {"decision": "block", "reason": f"[web4-policy] {judged.reason()}"}


def _record(
    storage: Path,
    judged: ConfigJudgement,
    policy: Policy,
    now: Mapping[str, str | None],
    effect: InEffect,
) -> None:
    """The change's ``note`` :data:`CONFIG_CHANGE`: in error (alert ``protected_file_changed``)
    when it fails the session, with the state now and, when blocked, the state still in
    effect."""
    payload = judged.payload
    details: dict[str, Any] = {
        "event": CONFIG_CHANGE,
        "source": payload.source,
        "filePath": payload.file_path,
        "changed": judged.changed,
        "blocked": judged.blocked,
    }
    effects: dict[str, Any] = {"hostSettings": judged.changed} if judged.changed else {}
    if judged.allowed is not None:
        effects.update(judged.allowed.effects())
    if judged.permissions is not None:
        effects.update(judged.permissions.effects(PERMISSIONS_EFFECTS_KEY))
    # kept at every audit level (the call's parameters only at ``verbose``)
    extra: dict[str, Any] = {RECORD_FIELD: details, STATE_FIELD: dict(now), "effects": effects}
    # not in effect: a later change, the next event's comparison aside, is judged from before it
    if judged.blocked and effect.state is not None:
        extra[IN_EFFECT_FIELD] = dict(effect.state)
    error = judged.reason() if judged.fails else None
    outcome = Outcome("error" if error else "success", None, error)
    gate = open_session_gate(
        storage_dir=storage,
        session_id=payload.session_id,
        policy=policy,
        root=payload.cwd,
        door="hook",
    )
    try:
        decision = gate.unjudged(CONFIG_CHANGE, "hook", details, target=None, kind="note")
        if judged.fails:
            decision = replace(decision, alerts=(PROTECTED_FILE_CHANGED,))
        gate.run(CONFIG_CHANGE, details, lambda _decision: outcome, extra=extra, decision=decision)
    finally:
        gate.chain.close()


__all__ = [
    "IN_EFFECT_FIELD",
    "POLICY_SETTINGS",
    "RECORD_FIELD",
    "ConfigJudgement",
    "ConfigPayload",
    "InEffect",
    "handle_config_change",
    "parse_config_payload",
]
