"""Host settings under a protection that judges ``permissions`` apart (the hook door's): a
change of ``permissions`` alone is no protected change; any other key, or a file that is not
JSON, still is. Every other door keeps judging the whole file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_harness_audit.inspect.effects import Protection, WorkspaceSnapshot, diff

SETTINGS = ".claude/settings.local.json"


def _changed(tmp_path: Path, before: str | None, after: str | None, apart: bool) -> tuple[str, ...]:
    settings = tmp_path / SETTINGS
    settings.parent.mkdir(exist_ok=True)
    if before is not None:
        settings.write_text(before)
    protection = Protection(permissions_apart=apart)
    first = WorkspaceSnapshot.take(tmp_path, protection=protection, tracked=False)
    if after is None:
        settings.unlink()
    else:
        settings.write_text(after)
    return diff(
        first, WorkspaceSnapshot.take(tmp_path, protection=protection, tracked=False)
    ).protected


def _fresh(tmp_path: Path) -> Path:
    other = tmp_path / "other"
    other.mkdir()
    return other


ALLOW = json.dumps({"permissions": {"allow": ["Bash(npm test:*)"]}})
HOOKS = json.dumps({"hooks": {"PreToolUse": []}})


@pytest.mark.parametrize(
    ("before", "after"),
    [
        (None, ALLOW),  # created by the host's prompt
        (json.dumps({"permissions": {"allow": []}}), ALLOW),  # a rule added
        (HOOKS, json.dumps({"hooks": {"PreToolUse": []}, "permissions": {"allow": ["Read"]}})),
        (None, "{}"),
        (ALLOW, None),  # deleted: a permission taken away
    ],
)
def test_permissions_alone_are_judged_apart(tmp_path: Path, before: str | None, after: str) -> None:
    assert _changed(tmp_path, before, after, apart=True) == ()
    assert _changed(_fresh(tmp_path), before, after, apart=False) == (SETTINGS,)


@pytest.mark.parametrize(
    ("before", "after"),
    [
        (None, HOOKS),
        (ALLOW, json.dumps({"permissions": {"allow": ["Read"]}, "disableAllHooks": True})),
        (HOOKS, json.dumps({"hooks": {}})),
        (None, ""),  # not JSON: judged whole
        (ALLOW, "not json"),
        (HOOKS, None),  # deleted with its hooks
    ],
)
def test_any_other_change_is_protected(
    tmp_path: Path, before: str | None, after: str | None
) -> None:
    assert _changed(tmp_path, before, after, apart=True) == (SETTINGS,)
