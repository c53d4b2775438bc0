"""An exact check of a JSON value against the small JSON Schema subset the tool schemas use.

Supported keywords: ``type`` (object, array, string, number, integer, boolean, null),
``properties``, ``required``, ``additionalProperties`` (false or a schema), ``items``,
``pattern`` (a full-match anchor is the schema's own), ``enum``, ``const``, ``anyOf``,
``minimum`` and ``maximum``. Any other keyword is a programming error, never silently passed.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from functools import lru_cache

_KNOWN = frozenset(
    {
        "type",
        "properties",
        "required",
        "additionalProperties",
        "items",
        "pattern",
        "enum",
        "const",
        "anyOf",
        "minimum",
        "maximum",
        "description",
        "title",
    }
)


@lru_cache(maxsize=64)
def _compiled(pattern: str) -> re.Pattern[str]:
    # ECMA's ``$`` ends the text; Python's also matches before a final newline
    if pattern.endswith("$") and not pattern.endswith("\\$"):
        pattern = pattern[:-1] + "\\Z"
    return re.compile(pattern)


def _type_ok(value: object, kind: str) -> bool:
    if kind == "object":
        return isinstance(value, Mapping)
    if kind == "array":
        return isinstance(value, Sequence) and not isinstance(value, (str, bytes))
    if kind == "string":
        return isinstance(value, str)
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if kind == "null":
        return value is None
    raise ValueError(f"unsupported schema type {kind!r}")


def schema_issues(value: object, schema: Mapping[str, object], path: str = "") -> list[str]:
    """Every way ``value`` fails ``schema``, each ``<path>: <issue>`` (empty when it conforms)."""
    unknown = set(schema) - _KNOWN
    if unknown:
        raise ValueError(f"unsupported schema keywords {sorted(unknown)}")
    where = path or "(result)"
    kind = schema.get("type")
    if isinstance(kind, str) and not _type_ok(value, kind):
        return [f"{where}: Expected {kind}, actual {type(value).__name__}"]
    issues: list[str] = []
    if "const" in schema and value != schema["const"]:
        issues.append(f"{where}: Expected {schema['const']!r}")
    enum = schema.get("enum")
    if isinstance(enum, Sequence) and value not in enum:
        issues.append(f"{where}: Expected one of {list(enum)!r}, actual {value!r}")
    pattern = schema.get("pattern")
    if isinstance(pattern, str) and isinstance(value, str) and not _compiled(pattern).search(value):
        issues.append(f"{where}: does not match {pattern}")
    for bound, sign in (("minimum", 1), ("maximum", -1)):
        limit = schema.get(bound)
        numbers = isinstance(limit, (int, float)) and isinstance(value, (int, float))
        if numbers and sign * (value - limit) < 0:  # type: ignore[operator]
            issues.append(f"{where}: {bound} {limit}, actual {value}")
    any_of = schema.get("anyOf")
    if isinstance(any_of, Sequence) and not any(
        not schema_issues(value, option, path) for option in any_of if isinstance(option, Mapping)
    ):
        issues.append(f"{where}: matches none of the allowed forms")
    if isinstance(value, Mapping):
        issues.extend(_object_issues(value, schema, path))
    items = schema.get("items")
    if isinstance(items, Mapping) and isinstance(value, Sequence) and not isinstance(value, str):
        for index, item in enumerate(value):
            issues.extend(schema_issues(item, items, f"{path}[{index}]"))
    return issues


def _object_issues(
    value: Mapping[object, object], schema: Mapping[str, object], path: str
) -> list[str]:
    issues: list[str] = []
    properties = schema.get("properties")
    declared: Mapping[str, object] = properties if isinstance(properties, Mapping) else {}
    required = schema.get("required")
    for name in required if isinstance(required, Sequence) else ():
        if name not in value:
            issues.append(f"{path + '.' if path else ''}{name}: is missing")
    extra = schema.get("additionalProperties", True)
    for key, item in value.items():
        where = f"{path + '.' if path else ''}{key}"
        sub = declared.get(key) if isinstance(key, str) else None
        if isinstance(sub, Mapping):
            issues.extend(schema_issues(item, sub, where))
        elif extra is False:
            issues.append(f"{where}: is unexpected")
        elif isinstance(extra, Mapping):
            issues.extend(schema_issues(item, extra, where))
    return issues
