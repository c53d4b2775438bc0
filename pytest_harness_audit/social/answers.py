"""Checking an answer against its form: each field's type, limits, options and format.

:func:`validate_answer` returns one :class:`~.errors.AnswerFieldFailure` per failing field of a
:class:`~.forms.FormSchema` (missing required fields, undeclared ones, wrong types, lengths in
code points, bounds, options, and the ``email`` / ``uri`` / ``date`` / ``date-time`` formats).
"""

from __future__ import annotations

import datetime
import math
from collections.abc import Mapping

import re2

from pytest_harness_audit.audit.canonical import is_finite_number
from pytest_harness_audit.social.errors import AnswerFieldFailure
from pytest_harness_audit.social.forms import FormField, FormSchema

_EMAIL = re2.compile(r"[^\s@]+@[^\s@]+\.[^\s@]+")
_URI = re2.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:\S*")
_DATE = re2.compile(r"\d{4}-\d{2}-\d{2}")
_DATE_TIME = re2.compile(
    r"(\d{4}-\d{2}-\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.\d+)?(?:[Zz]|[+-](\d{2}):(\d{2}))"
)


def _valid_date(text: str) -> bool:
    try:
        datetime.date.fromisoformat(text)
    except ValueError:
        return False
    return True


def matches_format(value: str, form: str) -> bool:
    """Whether ``value`` matches a form-mode ``format`` (email, uri, date, date-time)."""
    if form == "email":
        return _EMAIL.fullmatch(value) is not None
    if form == "uri":
        return _URI.fullmatch(value) is not None
    if form == "date":
        return _DATE.fullmatch(value) is not None and _valid_date(value)
    if form == "date-time":
        match = _DATE_TIME.fullmatch(value)
        if match is None or not _valid_date(match.group(1)):
            return False
        hour, minute, second = int(match.group(2)), int(match.group(3)), int(match.group(4))
        offset_ok = match.group(5) is None or (
            int(match.group(5)) < 24 and int(match.group(6)) < 60
        )
        return hour < 24 and minute < 60 and second <= 60 and offset_ok
    return True


def _number_text(value: float) -> str:
    return str(int(value)) if value == int(value) else repr(value)


def _string_issues(field: FormField, value: object) -> list[str]:
    if not isinstance(value, str):
        return ["type: must be string"]
    issues = []
    if field.min_length is not None and len(value) < field.min_length:
        issues.append(
            f"minLength: must NOT have fewer than {_number_text(field.min_length)} characters"
        )
    if field.max_length is not None and len(value) > field.max_length:
        issues.append(
            f"maxLength: must NOT have more than {_number_text(field.max_length)} characters"
        )
    if field.format is not None and not matches_format(value, field.format):
        issues.append(f'format: must match format "{field.format}"')
    return issues


def _number_issues(field: FormField, value: object) -> list[str]:
    if not is_finite_number(value):
        return [f"type: must be {field.kind}"]
    assert isinstance(value, (int, float))
    if field.kind == "integer" and value != math.floor(value):
        return ["type: must be integer"]
    issues = []
    if field.minimum is not None and value < field.minimum:
        issues.append(f"minimum: must be >= {_number_text(field.minimum)}")
    if field.maximum is not None and value > field.maximum:
        issues.append(f"maximum: must be <= {_number_text(field.maximum)}")
    return issues


def _multi_select_issues(field: FormField, value: object) -> list[str]:
    if not isinstance(value, (list, tuple)):
        return ["type: must be array"]
    issues = []
    if field.min_items is not None and len(value) < field.min_items:
        issues.append(f"minItems: must NOT have fewer than {_number_text(field.min_items)} items")
    if field.max_items is not None and len(value) > field.max_items:
        issues.append(f"maxItems: must NOT have more than {_number_text(field.max_items)} items")
    for index, item in enumerate(value):
        if not isinstance(item, str):
            issues.append(f"items[{index}].type: must be string")
        elif item not in field.options:
            issues.append(
                f"items[{index}].{field.options_keyword}: must be one of the allowed values"
            )
    return issues


def field_issues(field: FormField, value: object) -> list[str]:
    """Every way ``value`` fails ``field``, each led by its keyword (empty when it passes)."""
    if field.kind == "string":
        return _string_issues(field, value)
    if field.kind == "select":
        if not isinstance(value, str):
            return ["type: must be string"]
        if value not in field.options:
            return [f"{field.options_keyword}: must be one of the allowed values"]
        return []
    if field.kind in ("number", "integer"):
        return _number_issues(field, value)
    if field.kind == "boolean":
        return [] if isinstance(value, bool) else ["type: must be boolean"]
    return _multi_select_issues(field, value)


def validate_answer(
    form: FormSchema, content: Mapping[str, object]
) -> tuple[AnswerFieldFailure, ...]:
    """Check an answer against its request's form, field by field.

    Returns every failing field (``missing``, ``unexpected`` or ``invalid`` with the keyword
    issues as detail), or an empty tuple when the answer is valid.
    """
    failures: list[AnswerFieldFailure] = []
    names = list(form.fields) + [name for name in content if name not in form.fields]
    for name in names:
        field = form.fields.get(name)
        if field is None:
            failures.append(AnswerFieldFailure(name, "unexpected"))
            continue
        if name not in content:
            if name in form.required:
                failures.append(AnswerFieldFailure(name, "missing"))
            continue
        issues = field_issues(field, content[name])
        if issues:
            failures.append(AnswerFieldFailure(name, "invalid", ", ".join(issues)))
    return tuple(failures)
