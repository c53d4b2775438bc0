"""``map_strings``: the one walk that rewrites every string of a record or a cassette."""

from __future__ import annotations

from typing import Any

from pytest_harness_audit.inspect.nested_strings import MAX_DEPTH, WITHHELD, map_strings


def test_every_string_is_changed_keys_included() -> None:
    value = {"a": ["b", ("c", 1)], 2: {"d": None, "e": 1.5}}
    assert map_strings(value, str.upper) == {"A": ["B", ("C", 1)], 2: {"D": None, "E": 1.5}}


def test_containers_keep_their_kind() -> None:
    changed = map_strings({"t": ("x",), "l": ["x"]}, str.upper)
    assert type(changed["T"]) is tuple and type(changed["L"]) is list


def test_a_container_nested_too_deep_is_withheld_not_kept() -> None:
    deep: Any = "secret"
    for _ in range(MAX_DEPTH * 50):
        deep = [deep]
    seen: list[str] = []
    changed = map_strings(deep, lambda text: seen.append(text) or text)
    assert seen == [WITHHELD]
    for _ in range(MAX_DEPTH):
        (changed,) = changed
    assert changed == WITHHELD


def test_a_value_within_the_depth_is_walked_to_its_end() -> None:
    deep: Any = "secret"
    for _ in range(MAX_DEPTH):
        deep = {"k": deep}
    changed = map_strings(deep, str.upper)
    for _ in range(MAX_DEPTH):
        changed = changed["K"]
    assert changed == "SECRET"
