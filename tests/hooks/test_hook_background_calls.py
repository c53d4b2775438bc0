"""A command the host runs in the background gets its post at once: its effects come later.

Claude Code's ``Bash`` with ``run_in_background: true`` answers the call with a
``backgroundTaskId`` and sends ``PostToolUse`` before the command has done anything. Compared
then, the workspace showed no change and the session ended PASS although the command went on
to delete ``app/``. Now such a call is recorded with its effects unknown (``effects_unavailable``,
WARN): the verdict no longer claims the call did nothing.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hook_processes import (
    answer_of,
    as_post,
    call_records,
    committed_project,
    hook,
    host_env,
    recorded,
    verdict,
)

from pytest_harness_audit.readers.verdict import Verdict

SESSION = "host-effects-1"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return committed_project(tmp_path / "demo", {"app/main.py": "print('hello')\n"})


def _post_at_once(storage: Path, pre: dict[str, object], response: dict[str, object]) -> dict:  # type: ignore[type-arg]
    code, out, err = hook(storage, "pre", pre, env=host_env())
    assert code == 0 and answer_of(out) == {}, err
    code, out, err = hook(storage, "post", as_post(pre, response), env=host_env())
    assert code == 0, err
    record: dict = call_records(storage, SESSION)[-1]  # type: ignore[type-arg]
    return record


@pytest.mark.parametrize(
    ("background", "response"),
    [
        (True, {"stdout": "", "stderr": "", "interrupted": False}),
        (False, {"stdout": "", "stderr": "", "backgroundTaskId": "bash_1"}),
    ],
    ids=["asked-in-the-input", "told-by-the-response"],
)
def test_a_background_command_is_recorded_with_its_effects_unknown(
    project: Path, tmp_path: Path, background: bool, response: dict[str, object]
) -> None:
    storage = tmp_path / "store"
    pre = recorded("bash-rmtree-disguised.json", project)
    if background:
        pre["tool_input"]["run_in_background"] = True
    record = _post_at_once(storage, pre, response)  # the command has not run yet
    assert "effects_unavailable" in record["alerts"]
    assert "runs on in the background" in record["effects"]["unknown"]
    assert verdict(storage, SESSION) is Verdict.WARN


def test_a_foreground_command_that_changed_nothing_still_passes(
    project: Path, tmp_path: Path
) -> None:
    storage = tmp_path / "store"
    pre = recorded("bash-rmtree-disguised.json", project)
    pre["tool_input"] = {"command": "git status --short", "run_in_background": False}
    record = _post_at_once(storage, pre, {"stdout": "", "stderr": "", "interrupted": False})
    assert not record.get("alerts")
    assert verdict(storage, SESSION) is Verdict.PASS
