"""``parse_message_text``: plain texts, stated operations, and the refusal table (§5)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st
from social_support import SLOT_SCHEMA

from pytest_harness_audit.social import MessageTextError, parse_message_text
from pytest_harness_audit.social.inputs import (
    MAXIMUM_DEADLINE_SECONDS,
    Accept,
    Collecting,
    Decline,
    ResponseSend,
    TextSend,
)

GROUP = "group:alice,bob,carol"
OPERATION_KEYS = ("gather", "all_gather", "action")

PLAIN_TEXTS = [
    "Monday works for me.",
    '{"note": "a JSON object with no operation key"}',
    '["gather", 60]',
    '"gather"',
    '{"gather": "Which day?"',
    'Answer with {"action":"accept","content":{"slot":"mon"}}',
    "",
    '{"gather": NaN}',
    "null",
    "60",
]


@pytest.mark.parametrize("text", PLAIN_TEXTS)
def test_plain_texts_are_multicasts_of_the_whole_text(text: str) -> None:
    assert parse_message_text(GROUP, text) == TextSend(GROUP, text)


@pytest.mark.parametrize("op", ["gather", "all_gather"])
@pytest.mark.parametrize("padding", ["", "\n  ", "\t"])
def test_questions_read_as_collectives(op: str, padding: str) -> None:
    text = (
        padding
        + json.dumps({op: "Which day?", "deadline": 600, "requestedSchema": SLOT_SCHEMA})
        + padding
    )
    parsed = parse_message_text(GROUP, text)
    assert parsed == TextSend(GROUP, "Which day?", Collecting(op, 600, SLOT_SCHEMA))  # type: ignore[arg-type]


def test_answers_read_as_responses() -> None:
    accept = parse_message_text(GROUP, '{"action": "accept", "content": {"slot": "mon"}}')
    assert accept == ResponseSend(GROUP, Accept({"slot": "mon"}))
    assert parse_message_text(GROUP, '{"action": "decline"}') == ResponseSend(GROUP, Decline())


REFUSALS: list[tuple[dict[str, object], str, str]] = [
    ({"gather": "Q", "requestedSchema": SLOT_SCHEMA}, "gather", "deadline"),
    ({"gather": "Q", "deadline": 60}, "gather", "requestedSchema"),
    ({"gather": "Q", "deadline": 0, "requestedSchema": SLOT_SCHEMA}, "gather", "deadline"),
    ({"gather": "Q", "deadline": 1.5, "requestedSchema": SLOT_SCHEMA}, "gather", "deadline"),
    (
        {"gather": "Q", "deadline": MAXIMUM_DEADLINE_SECONDS + 1, "requestedSchema": SLOT_SCHEMA},
        "gather",
        "deadline",
    ),
    (
        {"gather": "Q", "deadline": 60, "requestedSchema": {**SLOT_SCHEMA, "type": "array"}},
        "gather",
        "requestedSchema.type",
    ),
    ({"gather": 7, "deadline": 60, "requestedSchema": SLOT_SCHEMA}, "gather", "gather"),
    (
        {"gather": "Q", "all_gather": "Q", "deadline": 60, "requestedSchema": SLOT_SCHEMA},
        "gather",
        "all_gather",
    ),
    (
        {"gather": "Q", "deadline": 60, "requestedSchema": SLOT_SCHEMA, "to": "agent:bob"},
        "gather",
        "to",
    ),
    ({"all_gather": "Q", "deadline": 60}, "all_gather", "requestedSchema"),
    ({"action": "maybe"}, "answer", "action"),
    ({"action": "cancel"}, "answer", "action"),
    ({"action": "accept"}, "answer", "content"),
    ({"action": "decline", "content": {"slot": "mon"}}, "answer", "content"),
    ({"action": "accept", "content": {"slot": "mon"}, "id": "col_x"}, "answer", "id"),
    ({"action": "accept", "content": {"slot": {"day": "mon"}}}, "answer", "content.slot"),
]


@pytest.mark.parametrize(("value", "operation", "field"), REFUSALS)
def test_refusal_table(value: dict[str, object], operation: str, field: str) -> None:
    with pytest.raises(MessageTextError) as caught:
        parse_message_text(GROUP, json.dumps(value))
    assert caught.value.operation == operation
    assert str(caught.value).startswith(f"{operation} not sent: ")
    assert f"{field}: " in caught.value.detail


def test_refusal_message_format_is_exact() -> None:
    text = json.dumps(
        {"gather": "Q", "deadline": 60, "requestedSchema": {**SLOT_SCHEMA, "type": "obj"}}
    )
    with pytest.raises(MessageTextError) as caught:
        parse_message_text(GROUP, text)
    assert (
        str(caught.value)
        == 'gather not sent: requestedSchema.type: Expected "object", actual "obj"'
    )


def test_several_issues_are_joined() -> None:
    with pytest.raises(MessageTextError) as caught:
        parse_message_text(GROUP, json.dumps({"gather": 7, "deadline": 0}))
    detail = caught.value.detail
    assert detail.count("; ") == 2
    assert "requestedSchema: is missing" in detail
    assert "gather: Expected string, actual 7" in detail


def test_ill_formed_plain_text_is_refused() -> None:
    with pytest.raises(MessageTextError) as caught:
        parse_message_text(GROUP, "broken \ud800 text")
    assert caught.value.operation == "message"
    assert str(caught.value).startswith("message not sent: ")


def test_ill_formed_question_is_refused_as_that_operation() -> None:
    text = (
        '{"gather": "bad \\ud800", "deadline": 60, "requestedSchema": '
        + json.dumps(SLOT_SCHEMA)
        + "}"
    )
    with pytest.raises(MessageTextError) as caught:
        parse_message_text(GROUP, text)
    assert caught.value.operation == "gather"


def test_operation_keys_are_looked_for_in_order() -> None:
    # A text with both gather and action is a gather (and its action key is extra).
    text = json.dumps(
        {"gather": "Q", "deadline": 60, "requestedSchema": SLOT_SCHEMA, "action": "x"}
    )
    with pytest.raises(MessageTextError) as caught:
        parse_message_text(GROUP, text)
    assert caught.value.operation == "gather"
    assert "action: is unexpected" in caught.value.detail


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(), children, max_size=3)
    ),
    max_leaves=8,
)


@given(st.text())
def test_any_text_without_an_operation_is_a_multicast(text: str) -> None:
    try:
        value = json.loads(text)
    except ValueError:
        value = None
    if isinstance(value, dict) and any(key in value for key in OPERATION_KEYS):
        return
    if any(0xD800 <= ord(char) <= 0xDFFF for char in text):
        return
    assert parse_message_text(GROUP, text) == TextSend(GROUP, text)


@given(st.dictionaries(st.text(), json_values, max_size=5))
def test_any_object_without_an_operation_key_is_a_multicast(value: dict[str, object]) -> None:
    for key in OPERATION_KEYS:
        value.pop(key, None)
    text = json.dumps(value)
    assert parse_message_text(GROUP, text) == TextSend(GROUP, text)


@given(
    st.sampled_from(["gather", "all_gather"]),
    st.text().filter(lambda text: not any(0xD800 <= ord(c) <= 0xDFFF for c in text)),
    st.integers(min_value=1, max_value=MAXIMUM_DEADLINE_SECONDS),
)
def test_any_valid_question_parses(op: str, question: str, deadline: int) -> None:
    text = json.dumps({op: question, "deadline": deadline, "requestedSchema": SLOT_SCHEMA})
    parsed = parse_message_text(GROUP, text)
    assert isinstance(parsed, TextSend)
    assert parsed.text == question
    assert parsed.collective == Collecting(op, deadline, SLOT_SCHEMA)  # type: ignore[arg-type]
