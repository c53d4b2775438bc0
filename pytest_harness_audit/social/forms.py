"""The MCP form-mode subset of a collecting operation's ``requestedSchema``.

A form is a flat object of primitive properties, each one of the MCP form-mode shapes: a string
(``minLength``/``maxLength`` in code points, ``format``), a single-select (``enum``, or titled
``oneOf``), a number or integer (``minimum``/``maximum``), a boolean, or a string multi-select
(``items`` with ``enum`` or titled ``anyOf``, ``minItems``/``maxItems``). ``required`` may name only
declared properties. Keywords outside a shape are ignored, as the MCP grammar does.

A property no shape admits is refused naming each failing keyword of the shape it most plausibly
meant, then that shape, so a requester can repair what it meant to write. Answers are checked
against a parsed form by :mod:`.answers`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Literal, TypeAlias

from pytest_harness_audit.audit.canonical import is_finite_number
from pytest_harness_audit.errors import HarnessAuditError
from pytest_harness_audit.social.inputs import join_path

FieldKind: TypeAlias = Literal["string", "select", "number", "integer", "boolean", "multi-select"]
FORMATS = ("email", "uri", "date", "date-time")


class FormSchemaError(HarnessAuditError):
    """A ``requestedSchema`` is outside the form-mode grammar; ``detail`` names each keyword."""

    def __init__(self, detail: str) -> None:
        self.detail = detail
        super().__init__(detail)


@dataclass(frozen=True)
class FormField:
    """One admitted property: its kind and only the keywords its shape declares."""

    name: str
    kind: FieldKind
    options: tuple[str, ...] = ()
    options_keyword: Literal["enum", "oneOf", "anyOf", ""] = ""
    min_length: float | None = None
    max_length: float | None = None
    format: str | None = None
    minimum: float | None = None
    maximum: float | None = None
    min_items: float | None = None
    max_items: float | None = None


@dataclass(frozen=True)
class FormSchema:
    """An admitted form: its fields in declaration order and the required field names."""

    fields: Mapping[str, FormField]
    required: tuple[str, ...]


# -- the grammar --------------------------------------------------------------------------------

_Check: TypeAlias = Callable[[object], bool]
_STRING_LIST = "an array of strings"
_OPTIONS = 'an array of {"const": string, "title": string}'


def _is_string(value: object) -> bool:
    return isinstance(value, str)


def _is_boolean(value: object) -> bool:
    return isinstance(value, bool)


def _is_string_list(value: object) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


def _is_options(value: object) -> bool:
    return isinstance(value, list) and all(
        isinstance(item, Mapping)
        and isinstance(item.get("const"), str)
        and isinstance(item.get("title"), str)
        for item in value
    )


def _literal(*allowed: str) -> _Check:
    return lambda value: isinstance(value, str) and value in allowed


@dataclass(frozen=True)
class _Keyword:
    name: str
    check: _Check
    expected: str
    required: bool = False
    nested: tuple[_Keyword, ...] = ()


_LABELS = (_Keyword("title", _is_string, "string"), _Keyword("description", _is_string, "string"))
_STRING_TYPE = _Keyword("type", _literal("string"), '"string"', required=True)
_ARRAY_TYPE = _Keyword("type", _literal("array"), '"array"', required=True)
_ITEM_COUNTS = (
    _Keyword("minItems", is_finite_number, "number"),
    _Keyword("maxItems", is_finite_number, "number"),
    _Keyword("default", _is_string_list, _STRING_LIST),
)


@dataclass(frozen=True)
class _Shape:
    kind: str
    keywords: tuple[_Keyword, ...]
    expected: str


_LEGACY_TITLED_ENUM = _Shape(
    "legacy-select",
    (
        _STRING_TYPE,
        *_LABELS,
        _Keyword("enum", _is_string_list, _STRING_LIST, required=True),
        _Keyword("enumNames", _is_string_list, _STRING_LIST),
        _Keyword("default", _is_string, "string"),
    ),
    'a single-select is {"type":"string","enum":["a","b"]}',
)
_SINGLE_SELECT = _Shape(
    "select",
    (
        _STRING_TYPE,
        *_LABELS,
        _Keyword("enum", _is_string_list, _STRING_LIST, required=True),
        _Keyword("default", _is_string, "string"),
    ),
    'a single-select is {"type":"string","enum":["a","b"]}',
)
_TITLED_SELECT = _Shape(
    "titled-select",
    (
        _STRING_TYPE,
        *_LABELS,
        _Keyword("oneOf", _is_options, _OPTIONS, required=True),
        _Keyword("default", _is_string, "string"),
    ),
    'a titled single-select is {"type":"string","oneOf":[{"const":"a","title":"A"}]}',
)
_MULTI_SELECT = _Shape(
    "multi-select",
    (
        _ARRAY_TYPE,
        *_LABELS,
        *_ITEM_COUNTS,
        _Keyword(
            "items",
            lambda value: isinstance(value, Mapping),
            "an object",
            required=True,
            nested=(
                _STRING_TYPE,
                _Keyword("enum", _is_string_list, _STRING_LIST, required=True),
            ),
        ),
    ),
    'a multi-select is {"type":"array","items":{"type":"string","enum":["a","b"]}}',
)
_TITLED_MULTI_SELECT = _Shape(
    "titled-multi-select",
    (
        _ARRAY_TYPE,
        *_LABELS,
        *_ITEM_COUNTS,
        _Keyword(
            "items",
            lambda value: isinstance(value, Mapping),
            "an object",
            required=True,
            nested=(_Keyword("anyOf", _is_options, _OPTIONS, required=True),),
        ),
    ),
    'a titled multi-select is {"type":"array","items":{"anyOf":[{"const":"a","title":"A"}]}}',
)
_BOOLEAN = _Shape(
    "boolean",
    (
        _Keyword("type", _literal("boolean"), '"boolean"', required=True),
        *_LABELS,
        _Keyword("default", _is_boolean, "boolean"),
    ),
    'a boolean is {"type":"boolean"}',
)
_STRING = _Shape(
    "string",
    (
        _STRING_TYPE,
        *_LABELS,
        _Keyword("minLength", is_finite_number, "number"),
        _Keyword("maxLength", is_finite_number, "number"),
        _Keyword("format", _literal(*FORMATS), 'one of "email", "uri", "date" or "date-time"'),
        _Keyword("default", _is_string, "string"),
    ),
    'a string is {"type":"string"} with optional minLength, maxLength or format',
)
_NUMBER = _Shape(
    "number",
    (
        _Keyword("type", _literal("number", "integer"), '"number" or "integer"', required=True),
        *_LABELS,
        _Keyword("minimum", is_finite_number, "number"),
        _Keyword("maximum", is_finite_number, "number"),
        _Keyword("default", is_finite_number, "number"),
    ),
    'a number is {"type":"number"} or {"type":"integer"} with optional minimum and maximum',
)

#: The shapes in the MCP specification's union order; the first that admits a property wins.
_ADMISSION_ORDER = (
    _LEGACY_TITLED_ENUM,
    _SINGLE_SELECT,
    _TITLED_SELECT,
    _MULTI_SELECT,
    _TITLED_MULTI_SELECT,
    _BOOLEAN,
    _STRING,
    _NUMBER,
)


def _declares(definition: Mapping[str, object], *types: str) -> bool:
    return definition.get("type") in types


def _intended_shape(definition: Mapping[str, object]) -> _Shape | None:
    """The shape a property most plausibly meant, each listed before any shape it refines."""
    if _declares(definition, "string"):
        if "oneOf" in definition:
            return _TITLED_SELECT
        return _SINGLE_SELECT if "enum" in definition else _STRING
    if _declares(definition, "number", "integer"):
        return _NUMBER
    if _declares(definition, "boolean"):
        return _BOOLEAN
    if _declares(definition, "array"):
        items = definition.get("items")
        if isinstance(items, Mapping) and "anyOf" in items:
            return _TITLED_MULTI_SELECT
        return _MULTI_SELECT
    return None


def _keyword_issues(
    definition: Mapping[str, object], keywords: tuple[_Keyword, ...], path: str
) -> list[str]:
    issues: list[str] = []
    for keyword in keywords:
        keyword_path = join_path(path, keyword.name)
        if keyword.name not in definition:
            if keyword.required:
                issues.append(f"{keyword_path}: Invalid input: expected {keyword.expected}")
            continue
        value = definition[keyword.name]
        if not keyword.check(value):
            issues.append(f"{keyword_path}: Invalid input: expected {keyword.expected}")
        elif keyword.nested and isinstance(value, Mapping):
            issues.extend(_keyword_issues(value, keyword.nested, keyword_path))
    return issues


def _no_options(field: FormField) -> str | None:
    if field.kind in ("select", "multi-select") and not field.options:
        where = field.options_keyword
        path = where if field.kind == "select" else f"items.{where}"
        return f"{path}: Invalid input: expected at least one option"
    return None


def _option_values(options: object) -> tuple[str, ...]:
    if isinstance(options, list):
        return tuple(
            str(item["const"]) if isinstance(item, Mapping) else str(item) for item in options
        )
    return ()


def _number_keyword(definition: Mapping[str, object], name: str) -> float | None:
    value = definition.get(name)
    return float(value) if is_finite_number(value) else None  # type: ignore[arg-type]


def _admitted_field(name: str, shape: _Shape, definition: Mapping[str, object]) -> FormField:

    def number(keyword: str) -> float | None:
        return _number_keyword(definition, keyword)

    if shape in (_LEGACY_TITLED_ENUM, _SINGLE_SELECT):
        return FormField(name, "select", _option_values(definition["enum"]), "enum")
    if shape is _TITLED_SELECT:
        return FormField(name, "select", _option_values(definition["oneOf"]), "oneOf")
    if shape in (_MULTI_SELECT, _TITLED_MULTI_SELECT):
        items = definition["items"]
        assert isinstance(items, Mapping)
        keyword: Literal["enum", "anyOf"] = "enum" if shape is _MULTI_SELECT else "anyOf"
        return FormField(
            name,
            "multi-select",
            _option_values(items[keyword]),
            keyword,
            min_items=number("minItems"),
            max_items=number("maxItems"),
        )
    if shape is _BOOLEAN:
        return FormField(name, "boolean")
    if shape is _STRING:
        form = definition.get("format")
        return FormField(
            name,
            "string",
            min_length=number("minLength"),
            max_length=number("maxLength"),
            format=form if isinstance(form, str) else None,
        )
    kind: FieldKind = "integer" if definition.get("type") == "integer" else "number"
    return FormField(name, kind, minimum=number("minimum"), maximum=number("maximum"))


def admit_field(name: str, definition: object) -> FormField:
    """Admit one property under the first form-mode shape that matches it.

    Raises :class:`FormSchemaError` whose detail names each failing keyword by path within the
    property, then the intended shape, e.g. ``items.type: Invalid input: expected "string"; a
    multi-select is {...}``.
    """
    if not isinstance(definition, Mapping):
        raise FormSchemaError("Invalid input: expected an object")
    for shape in _ADMISSION_ORDER:
        if not _keyword_issues(definition, shape.keywords, ""):
            field = _admitted_field(name, shape, definition)
            empty = _no_options(field)
            if empty is not None:
                raise FormSchemaError(empty)
            return field
    intended = _intended_shape(definition)
    if intended is None:
        raise FormSchemaError('"type" must be "string", "number", "integer", "boolean" or "array"')
    issues = _keyword_issues(definition, intended.keywords, "")
    raise FormSchemaError("; ".join([*issues, intended.expected]))


def parse_form_schema(schema: Mapping[str, object]) -> FormSchema:
    """Admit a ``requestedSchema`` (outline already checked) under the form-mode grammar.

    Raises :class:`FormSchemaError` naming each failing property (``properties.<name>: …``) and
    each ``required`` name the properties do not declare.
    """
    issues: list[str] = []
    fields: dict[str, FormField] = {}
    properties = schema.get("properties")
    if not isinstance(properties, Mapping):
        raise FormSchemaError("properties: Invalid input: expected an object")
    for name, definition in properties.items():
        try:
            fields[str(name)] = admit_field(str(name), definition)
        except FormSchemaError as error:
            issues.append(f"properties.{name}: {error.detail}")
    required_value = schema.get("required", [])
    required = (
        tuple(item for item in required_value if isinstance(item, str))
        if isinstance(required_value, list)
        else ()
    )
    for name in required:
        if not isinstance(properties, Mapping) or name not in properties:
            issues.append(f'required: names "{name}", which properties does not declare')
    if issues:
        raise FormSchemaError("; ".join(issues))
    return FormSchema(fields, required)
