"""The shell reading's path joins and normalisation give what ``posixpath`` gives (they only
spare a compiled caller the Python frame of ``posixpath.join`` and ``posixpath.normpath``)."""

from __future__ import annotations

import posixpath

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_harness_audit.policy.path_forms import join_path, normal_path

PATH = st.text(alphabet="ab./ ~$\\", max_size=10)


@settings(max_examples=300, deadline=None)
@given(PATH, PATH)
def test_join_path_is_posixpath_join(folder: str, path: str) -> None:
    assert join_path(folder, path) == posixpath.join(folder, path)


@settings(max_examples=300, deadline=None)
@given(PATH)
def test_normal_path_is_posixpath_normpath(path: str) -> None:
    assert normal_path(path) == posixpath.normpath(path)


@pytest.mark.parametrize(
    ("folder", "path", "joined", "normal"),
    [
        ("", "a", "a", "a"),
        ("a/", "b", "a/b", "a/b"),
        ("a", "/b", "/b", "/b"),
        ("//w", "../.env", "//w/../.env", "//.env"),  # POSIX keeps a leading `//`
        (".", "", "./", "."),
        ("a", "../..", "a/../..", ".."),
    ],
)
def test_known_paths(folder: str, path: str, joined: str, normal: str) -> None:
    assert join_path(folder, path) == joined
    assert normal_path(joined) == normal
