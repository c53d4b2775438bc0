"""What the gate reads of a function tool's arguments and result: their JSON views.

A framework hands a tool the values it validated the model's JSON into; the gate must judge the
values the tool reads, so each is viewed as the tool sees it:

* a path object is its path, bytes their UTF-8 text (at any depth, not base64), a URL, an IP
  address or another value with its own text is that text, a ``re.Pattern`` its pattern, a
  pydantic ``SecretStr`` the value it holds;
* a pydantic model is its fields as the tool reads them (its attributes, and extra fields):
  not its serialised form, which may leave a field out (``exclude=True``), change it (a field
  serializer) or mask it (a ``SecretStr`` field);
* a dataclass is its fields, a named tuple its fields by name; a tuple, a set, a ``deque`` or
  another sequence is a list; a mapping a dict; an iterator the door read its items;
* a value with no JSON form left is recorded as ``<TypeName>``: in its place, so the values
  beside it are still read.
"""

from __future__ import annotations

import dataclasses
import json
import numbers
import os
import re
import uuid
from collections.abc import Mapping, Sequence, Set
from typing import Any

import orjson

from pytest_harness_audit.audit.canonical import ORJSON_DEFAULT, hash_json
from pytest_harness_audit.audit.errors import AuditError
from pytest_harness_audit.doors.tool_args import SeenIterator

#: JSON of a call's values in their own order: a mapping's keys are read as the function gave
#: them (the pieces of a value in its fields are read in the order the model reads them).
_IN_ORDER = orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME
#: Nesting inside a value that is viewed; deeper values are left to the JSON writer.
MAX_NESTING = 200
_TEXTS = (str, bytes, bytearray, memoryview)


def _default(value: Any) -> Any:
    """The JSON of a value orjson does not write: the canonical one, or the text of a number
    (a framework validates the model's number into a ``Decimal`` whose digits leave with the
    call; a list holding one is not hidden whole)."""
    try:
        return ORJSON_DEFAULT(value)
    except TypeError:
        if isinstance(value, (numbers.Number, uuid.UUID)):
            return str(value)
        raise


def plain(value: Any) -> Any:
    """``value`` as plain JSON values (what the gate reads and inspectors scan), else ``None``."""
    if value is None or isinstance(value, (str, bytes, bool, int, float)):
        return value
    try:
        return json.loads(orjson.dumps(value, _default, _IN_ORDER))
    except (TypeError, ValueError, RecursionError):  # beyond orjson: the canonical JSON
        pass
    try:
        return json.loads(hash_json(value))
    except (AuditError, ValueError, RecursionError):
        return None


def param_view(value: Any) -> Any:
    """A call parameter as the gate and the chain see it (``<TypeName>`` when it has no JSON;
    see the module docstring)."""
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).decode("utf-8", "replace")
    try:
        shown = plain(_structured(value, 0))
    except RecursionError:
        shown = None
    if shown is None and value is not None:
        return f"<{type(value).__name__}>"
    return shown


def output_view(value: Any) -> Any:
    """A tool's return value as inspection scans it: its JSON form, or its text when it has
    none. A pydantic model, or a dataclass, mapping or sequence whose class renders its own
    text, is both (``{"value": …, "text": …}``): a framework may show the model that text
    (the OpenAI Agents SDK hands over ``str(result)``), so it is made, and read, in the call."""
    shown = plain(value)
    if shown is None and value is not None:
        return str(value)
    text = _rendered(value)
    return shown if text is None else {"value": shown, "text": text}


#: The ``__str__`` of classes whose text shows no more than their JSON form (a dataclass's
#: ``repr`` shows some of the fields ``asdict`` gives; a pydantic model's ``repr`` may show a
#: field its serialised form leaves out or masks, so it is read).
_FIELD_TEXTS = frozenset({"object.__str__"})


def _rendered(value: Any) -> str | None:
    """``str(value)`` when ``value``'s class renders its own text over a JSON form, else
    ``None``."""
    kind = type(value)
    if value is None or isinstance(value, (*_TEXTS, bool, int, float)):
        return None
    if kind in (list, dict, tuple):
        return None
    structured = (
        dataclasses.is_dataclass(value)
        or isinstance(getattr(kind, "model_fields", None), Mapping)
        or isinstance(value, (Mapping, Sequence))
    )
    method = getattr(kind, "__str__", None)
    if not structured or getattr(method, "__qualname__", "") in _FIELD_TEXTS:
        return None
    if getattr(method, "__module__", None) == "builtins":
        return None
    try:
        return str(value)
    except Exception:  # a text that cannot be made is shown to no model either
        return None


def _own_text(value: Any) -> Any:
    """A leaf orjson cannot write, as its own text (a URL, an address), else itself."""
    try:
        orjson.dumps(value, _default, _IN_ORDER)
        return value
    except (TypeError, ValueError):
        pass
    if isinstance(value, re.Pattern):
        return value.pattern
    opaque = f"<{type(value).__name__}>"  # alone, not hiding the values beside it
    if getattr(type(value), "__str__", None) is object.__str__:
        return opaque
    try:
        return str(value)
    except Exception:  # a broken __str__: recorded by its type name
        return opaque


def _key(key: Any) -> Any:
    """A mapping's key as JSON can hold it (a tuple key as its text)."""
    return key if key is None or isinstance(key, (str, int, float)) else str(key)


def _model_fields(value: Any, depth: int) -> dict[str, Any] | None:
    """A pydantic model's fields as the tool reads them, else ``None`` (not a model)."""
    fields = getattr(type(value), "model_fields", None)
    if not isinstance(fields, Mapping) or isinstance(value, type):
        return None
    found = {name: _structured(getattr(value, name), depth + 1) for name in fields}
    extra = getattr(value, "__pydantic_extra__", None)
    if isinstance(extra, Mapping):
        for key, item in extra.items():
            found.setdefault(str(key), _structured(item, depth + 1))
    return found


def _structured(value: Any, depth: int) -> Any:
    """``value`` in a form with JSON (see the module docstring); ``None`` when a model or a
    dataclass cannot be read."""
    if isinstance(value, (bytes, bytearray, memoryview)):  # a path or text in bytes: its text
        return bytes(value).decode("utf-8", "replace")
    if value is None or isinstance(value, (str, bool, int, float)) or depth > MAX_NESTING:
        return value
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    if isinstance(value, SeenIterator):
        return [_structured(item, depth + 1) for item in value.items]
    secret = getattr(value, "get_secret_value", None)
    if callable(secret) and not isinstance(value, type):  # pydantic's SecretStr, SecretBytes
        try:
            return _structured(secret(), depth + 1)
        except Exception:  # a secret that cannot be read: recorded by its type name
            return None
    try:
        fields = _model_fields(value, depth)
    except Exception:  # a field that cannot be read: recorded by its type name
        return None
    if fields is not None:
        return fields
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        try:
            fields = dataclasses.asdict(value)
        except Exception:  # a field that cannot be copied
            return None
        return _structured(fields, depth + 1)
    as_dict = getattr(value, "_asdict", None)
    if isinstance(value, tuple) and callable(as_dict):  # a named tuple: its fields by name
        try:
            return _structured(dict(as_dict()), depth + 1)
        except Exception:  # not a named tuple after all: read as a tuple below
            pass
    if isinstance(value, Mapping):
        return {_key(key): _structured(item, depth + 1) for key, item in value.items()}
    if isinstance(value, (Sequence, Set)) and not isinstance(value, _TEXTS):
        return [_structured(item, depth + 1) for item in value]
    return _own_text(value)


__all__ = ["MAX_NESTING", "output_view", "param_view", "plain"]
