"""The JSON the record hashes are taken over, and those SHA-256 hashes (``inputHash`` /
``outputHash``).

That JSON (:func:`hash_json`) is canonical in this sense: keys sorted by code point, no whitespace
(``,`` and ``:``), strings kept as UTF-8 (no ``\\u`` escaping of non-ASCII), tuples as arrays,
numbers in their shortest round-trip form as orjson writes them (``1e-7``, ``0.00001``, ``1e+16``;
NaN and infinities as ``null``, as JavaScript does). The same value therefore has the same hash on
every run and every machine.
"""

from __future__ import annotations

import base64
import dataclasses
import datetime as _dt
import enum
import hashlib
import json
import math
from collections.abc import Callable, Mapping
from pathlib import PurePath
from typing import Any, Final

import orjson

from pytest_harness_audit.audit.errors import AuditError

_encode_string: Callable[[str], str] = json.encoder.encode_basestring


def _to_jsonable(value: Any) -> Any:
    """Turn a non-JSON value into a deterministic JSON value, or refuse it."""
    model_dump = getattr(value, "model_dump", None)
    if callable(model_dump):  # pydantic models (e.g. MCP results)
        return model_dump(mode="json", by_alias=True, exclude_none=True)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    if isinstance(value, Mapping):
        return {str(key): item for key, item in value.items()}
    if isinstance(value, (set, frozenset)):
        return sorted(value, key=hash_json)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return base64.b64encode(bytes(value)).decode("ascii")
    if isinstance(value, PurePath):
        return str(value)
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, (_dt.datetime, _dt.date, _dt.time)):
        return value.isoformat()
    raise TypeError(f"a value of type {type(value).__name__!r} has no canonical JSON form")


def _make_encoder(*, sort_keys: bool, allow_nan: bool) -> Callable[[Any], str]:
    c_make_encoder = getattr(json.encoder, "c_make_encoder", None)
    if c_make_encoder is not None:
        # One C encoder reused for every call: ``json.dumps`` would build a new one each time.
        chunks = c_make_encoder(
            None, _to_jsonable, _encode_string, None, ":", ",", sort_keys, False, allow_nan
        )

        def encode(value: Any) -> str:
            if isinstance(value, str):
                return _encode_string(value)
            return "".join(chunks(value, 0))

        return encode
    encoder = json.JSONEncoder(
        sort_keys=sort_keys,
        separators=(",", ":"),
        ensure_ascii=False,
        allow_nan=allow_nan,
        default=_to_jsonable,
    )
    return encoder.encode


_hash_encoder = _make_encoder(sort_keys=True, allow_nan=True)
_c_make_encoder = getattr(json.encoder, "c_make_encoder", None)
_strict_encoder = _make_encoder(sort_keys=True, allow_nan=False)


_orjson_dumps = orjson.dumps
# Dataclasses and datetimes go through ``_to_jsonable`` (sorted fields, ``isoformat``), as they do
# in the fallback encoder.
_CANONICAL_OPTIONS = (
    orjson.OPT_SORT_KEYS | orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME
)
#: ``orjson.dumps(value, ORJSON_DEFAULT, ORJSON_OPTIONS)`` is the canonical JSON when orjson
#: accepts the value (hot paths call it directly and fall back to ``canonical_hash``).
ORJSON_OPTIONS: Final[int] = _CANONICAL_OPTIONS
ORJSON_DEFAULT: Final[Callable[[Any], Any]] = _to_jsonable


def canonical_bytes(value: Any) -> bytes:
    """The canonical JSON of ``value`` as UTF-8 bytes; raises ``TypeError`` or ``ValueError``.

    orjson writes it; what orjson refuses (lone surrogates, integers beyond 64 bits, keys that
    are not strings) is written by the standard library's encoder with the same key order and
    separators, lone surrogates kept as they are (``surrogatepass``).
    """
    try:
        return _orjson_dumps(value, _to_jsonable, _CANONICAL_OPTIONS)
    except TypeError:  # orjson.JSONEncodeError
        pass
    return _hash_encoder(value).encode("utf-8", "surrogatepass")


def hash_json(value: Any) -> str:
    """The canonical JSON text of ``value`` that ``inputHash``/``outputHash`` hash.

    (Not the RFC 8785 form social posts are measured in: that is
    :mod:`pytest_harness_audit.social.canonical`.)
    """
    try:
        return canonical_bytes(value).decode("utf-8", "surrogatepass")
    except (TypeError, ValueError, RecursionError) as exc:
        raise AuditError(f"cannot encode value as canonical JSON: {exc}") from None


def strict_json(value: Any, *, field: str) -> str:
    """Canonical JSON that is valid JSON (no NaN/Infinity); errors name ``field``."""
    try:
        return _strict_encoder(value)
    except (TypeError, ValueError, RecursionError) as exc:
        raise AuditError(f"record field {field!r}: cannot encode as JSON: {exc}") from None


def sha256_hex(data: bytes | str) -> str:
    """Full lowercase hex SHA-256 of ``data`` (str is hashed as UTF-8)."""
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogatepass")
    return hashlib.sha256(data).hexdigest()


_sha256 = hashlib.sha256


def canonical_hash(value: Any, field: str) -> str:
    """SHA-256 (hex) of the canonical JSON of ``value``; ``AuditError`` naming ``field``."""
    try:
        return _sha256(_orjson_dumps(value, _to_jsonable, _CANONICAL_OPTIONS)).hexdigest()
    except TypeError:  # orjson.JSONEncodeError: the standard encoder decides
        pass
    try:
        return _sha256(_hash_encoder(value).encode("utf-8", "surrogatepass")).hexdigest()
    except (TypeError, ValueError, RecursionError) as exc:
        raise AuditError(
            f"record field {field!r}: cannot encode as canonical JSON: {exc}"
        ) from None


def input_hash(params: Mapping[str, Any]) -> str:
    """``request.inputHash``: SHA-256 of the canonical JSON of the call parameters."""
    return canonical_hash(params, "params")


def output_hash(output: Any) -> str:
    """``result.outputHash``: SHA-256 of the canonical JSON of the output.

    A string is hashed as a JSON string (with its quotes), like every other value.
    """
    return canonical_hash(output, "output")


# Insertion order, UTF-8 kept: the fallback for what orjson refuses (lone surrogates, integers
# beyond 64 bits). Its output differs from orjson's only in how it writes some floats below 1e-4.
_line_chunks = (
    _c_make_encoder(None, None, _encode_string, None, ":", ",", False, False, False)
    if _c_make_encoder is not None
    else None
)
_line_encoder = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def record_line(record: Mapping[str, Any]) -> bytes:
    """The compact JSON line of a record (keys in their order, UTF-8), without a newline.

    ``record`` holds JSON values only (``RecordBuilder`` makes sure of that). A lone surrogate
    in a string is written as its ``\\uXXXX`` escape, which reads back as the same string.
    """
    try:
        return _orjson_dumps(record)
    except TypeError:  # orjson.JSONEncodeError
        pass
    text = "".join(_line_chunks(record, 0)) if _line_chunks else _line_encoder.encode(record)
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        # Lone surrogates can only occur inside JSON strings; ``\\udXXX`` is their escape.
        return text.encode("utf-8", "backslashreplace")


def is_finite_number(value: object) -> bool:
    """True for int/float values that JSON can carry (bool excluded)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    return not (isinstance(value, float) and not math.isfinite(value))
