"""RFC 8785 canonical JSON, which measures the content limit and hashes records."""

from __future__ import annotations

import pytest

from pytest_harness_audit.social.message_json import (
    MessageJsonError,
    canonical_message_json,
    message_json_size,
)


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (1.0, "1"),
        (-0.0, "0"),
        (0.5, "0.5"),
        (1e21, "1e+21"),
        (1e20, "100000000000000000000"),
        (1.5e-7, "1.5e-7"),
        (0.000001, "0.000001"),
        (123456789012.5, "123456789012.5"),
        (2**60, "1152921504606847000"),
        (0.1 + 0.2, "0.30000000000000004"),
        (5e-324, "5e-324"),
        (True, "true"),
        (None, "null"),
    ],
)
def test_numbers_and_literals(value: object, text: str) -> None:
    assert canonical_message_json(value) == text


def test_keys_sort_by_utf16_code_units_and_strings_escape_minimally() -> None:
    value = {"b": 1, "a": ['x\n\u0001\u00e9"\\'], "\U0001f600": 2, "\uffff": 3}
    assert (
        canonical_message_json(value)
        == '{"a":["x\\n\\u0001\u00e9\\"\\\\"],"b":1,"\U0001f600":2,"\uffff":3}'
    )


def test_size_counts_utf8_bytes() -> None:
    assert message_json_size("\u00e9") == 4


@pytest.mark.parametrize("value", [float("nan"), float("inf"), "\ud800", {1: 2}, object()])
def test_values_without_a_canonical_form(value: object) -> None:
    with pytest.raises(MessageJsonError):
        canonical_message_json(value)
