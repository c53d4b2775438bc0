"""The MCP form-mode subset of ``requestedSchema`` and answer validation."""

from __future__ import annotations

import pytest

from pytest_harness_audit.social import FormSchemaError
from pytest_harness_audit.social.answers import matches_format, validate_answer
from pytest_harness_audit.social.forms import admit_field, parse_form_schema


def form(properties: dict[str, object], required: list[str] | None = None) -> dict[str, object]:
    schema: dict[str, object] = {"type": "object", "properties": properties}
    if required is not None:
        schema["required"] = required
    return schema


@pytest.mark.parametrize(
    ("definition", "kind"),
    [
        ({"type": "string"}, "string"),
        ({"type": "string", "minLength": 1, "maxLength": 5, "format": "email"}, "string"),
        ({"type": "string", "enum": ["a", "b"]}, "select"),
        ({"type": "string", "enum": ["a"], "enumNames": ["A"]}, "select"),
        ({"type": "string", "oneOf": [{"const": "a", "title": "A"}]}, "select"),
        ({"type": "number", "minimum": 0, "maximum": 1.5}, "number"),
        ({"type": "integer"}, "integer"),
        ({"type": "boolean", "default": True}, "boolean"),
        (
            {"type": "array", "items": {"type": "string", "enum": ["a"]}, "maxItems": 2},
            "multi-select",
        ),
        ({"type": "array", "items": {"anyOf": [{"const": "a", "title": "A"}]}}, "multi-select"),
        ({"type": "string", "pattern": "^x$", "title": "ignored keywords are dropped"}, "string"),
        # As in the MCP grammar, the first shape that admits a property wins: a malformed
        # titled select is still a valid plain string field.
        ({"type": "string", "oneOf": [{"const": "a"}]}, "string"),
    ],
)
def test_admitted_shapes(definition: dict[str, object], kind: str) -> None:
    assert admit_field("f", definition).kind == kind


def test_multi_select_without_item_type_names_keyword_and_shape() -> None:
    schema = form(
        {"note": {"type": "string"}, "slots": {"type": "array", "items": {"enum": ["mon", "tue"]}}}
    )
    with pytest.raises(FormSchemaError) as caught:
        parse_form_schema(schema)
    assert caught.value.detail == (
        'properties.slots: items.type: Invalid input: expected "string"; a multi-select is '
        '{"type":"array","items":{"type":"string","enum":["a","b"]}}'
    )


def test_required_must_name_declared_properties() -> None:
    with pytest.raises(FormSchemaError) as caught:
        parse_form_schema(form({"note": {"type": "string"}}, ["slot"]))
    assert caught.value.detail == 'required: names "slot", which properties does not declare'


@pytest.mark.parametrize(
    ("definition", "expected"),
    [
        ({"type": "object"}, '"type" must be "string", "number", "integer", "boolean" or "array"'),
        ({}, '"type" must be'),
        ({"type": "string", "enum": []}, "enum: Invalid input: expected at least one option"),
        ({"type": "string", "minLength": "3"}, "minLength: Invalid input: expected number"),
        ({"type": "string", "format": "phone"}, 'format: Invalid input: expected one of "email"'),
        (
            {"type": "number", "maximum": "x"},
            "maximum: Invalid input: expected number; a number is",
        ),
        ({"type": "array", "items": {"anyOf": [{"const": "a"}]}}, "items.anyOf: Invalid input"),
        ({"type": "array", "items": {"type": "string", "enum": []}}, "items.enum: Invalid input"),
    ],
)
def test_refused_properties(definition: dict[str, object], expected: str) -> None:
    with pytest.raises(FormSchemaError) as caught:
        parse_form_schema(form({"f": definition}))
    assert caught.value.detail.startswith("properties.f: ")
    assert expected in caught.value.detail


SCHEMA = parse_form_schema(
    form(
        {
            "slot": {"type": "string", "enum": ["mon", "tue", "wed"]},
            "hours": {"type": "integer", "minimum": 1, "maximum": 8},
            "note": {"type": "string", "minLength": 2, "maxLength": 4},
            "ok": {"type": "boolean"},
            "days": {
                "type": "array",
                "items": {"type": "string", "enum": ["mon", "tue"]},
                "minItems": 1,
                "maxItems": 2,
            },
            "pick": {"type": "string", "oneOf": [{"const": "a", "title": "A"}]},
            "tags": {"type": "array", "items": {"anyOf": [{"const": "x", "title": "X"}]}},
        },
        ["slot", "hours"],
    )
)


def test_a_valid_answer_passes() -> None:
    answer = {
        "slot": "mon",
        "hours": 2,
        "note": "h\u00e9",
        "ok": False,
        "days": ["tue"],
        "pick": "a",
    }
    assert validate_answer(SCHEMA, answer) == ()


@pytest.mark.parametrize(
    ("answer", "field", "reason", "detail"),
    [
        ({"slot": "sun", "hours": 1}, "slot", "invalid", "enum: must be one of the allowed values"),
        ({"hours": 1}, "slot", "missing", None),
        ({"slot": "mon", "hours": 1, "mood": "ok"}, "mood", "unexpected", None),
        ({"slot": "mon", "hours": 1, "constructor": "x"}, "constructor", "unexpected", None),
        ({"slot": 3, "hours": 1}, "slot", "invalid", "type: must be string"),
        ({"slot": "mon", "hours": 1.5}, "hours", "invalid", "type: must be integer"),
        ({"slot": "mon", "hours": 9}, "hours", "invalid", "maximum: must be <= 8"),
        ({"slot": "mon", "hours": True}, "hours", "invalid", "type: must be integer"),
        (
            {"slot": "mon", "hours": 1, "note": "\U0001f600"},
            "note",
            "invalid",
            "minLength: must NOT have fewer than 2 characters",
        ),
        ({"slot": "mon", "hours": 1, "ok": "yes"}, "ok", "invalid", "type: must be boolean"),
        (
            {"slot": "mon", "hours": 1, "days": ["mon", "tue", "mon"]},
            "days",
            "invalid",
            "maxItems: must NOT have more than 2 items",
        ),
        ({"slot": "mon", "hours": 1, "days": []}, "days", "invalid", "minItems"),
        (
            {"slot": "mon", "hours": 1, "days": ["mon", "sun"]},
            "days",
            "invalid",
            "items[1].enum: must be one of the allowed values",
        ),
        (
            {"slot": "mon", "hours": 1, "tags": ["y"]},
            "tags",
            "invalid",
            "items[0].anyOf: must be one of the allowed values",
        ),
        ({"slot": "mon", "hours": 1, "pick": "b"}, "pick", "invalid", "oneOf: must be one of"),
    ],
)
def test_failing_answers_name_each_field(
    answer: dict[str, object], field: str, reason: str, detail: str | None
) -> None:
    failures = validate_answer(SCHEMA, answer)
    assert [(failure.field, failure.reason) for failure in failures] == [(field, reason)]
    if detail is None:
        assert failures[0].detail is None
    else:
        assert failures[0].detail is not None and detail in failures[0].detail


def test_answer_failure_text() -> None:
    failures = validate_answer(SCHEMA, {"slot": "sun"})
    assert [failure.text() for failure in failures] == [
        'field "slot" is invalid (enum: must be one of the allowed values)',
        'field "hours" is missing',
    ]


@pytest.mark.parametrize(
    ("value", "form_name", "ok"),
    [
        ("a@b.co", "email", True),
        ("a@b", "email", False),
        ("https://example.org/x", "uri", True),
        ("not a uri", "uri", False),
        ("2024-02-29", "date", True),
        ("2023-02-29", "date", False),
        ("2024-01-01T10:00:00Z", "date-time", True),
        ("2024-01-01T10:00:00.5+02:00", "date-time", True),
        ("2024-01-01T25:00:00Z", "date-time", False),
        ("2024-01-01 10:00", "date-time", False),
    ],
)
def test_formats(value: str, form_name: str, ok: bool) -> None:
    assert matches_format(value, form_name) is ok
