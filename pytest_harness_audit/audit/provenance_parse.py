"""The parse of ``verify --full``'s quick run: each line parsed in full, its ``provenance`` read.

With ``pysimdjson`` (a dependency; a validating SIMD parser, about five times orjson's speed on a
record line) every line is still parsed and validated in full, but at most ``provenance`` is
turned into Python objects (none at all for a line whose tail the caller has matched: see
:func:`json_validator`). Without it (a platform with no wheel), orjson parses each line into a
dict.

Either way a line the reader cannot vouch for gives ``None``, and the caller checks that line with
``check_line`` (orjson and the standard library), which decides and reports. So the quick run may
only ever accept less than orjson would, never more; the differential tests hold it to that:

* a line that names ``"provenance"`` other than once is left to ``check_line``: simdjson reads
  the first of duplicate keys, orjson the last;
* what simdjson rejects and orjson accepts (integers beyond 64 bits) is left to ``check_line``.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Any

import orjson

try:
    import simdjson
except ImportError:  # pragma: no cover - exercised by forcing the fallback in the tests
    simdjson = None  # type: ignore[assignment]

#: A line (without its newline) → its ``provenance`` value, or ``None`` when not vouched for.
ProvenanceReader = Callable[[bytes], Any]

_KEY = b'"provenance"'


def parser_name() -> str:
    """The parser the quick run uses here: ``simdjson`` or ``orjson``."""
    return "simdjson" if simdjson is not None else "orjson"


def provenance_reader(*, prefer_simdjson: bool = True) -> ProvenanceReader:
    """A reader of one line's ``provenance``, for one pass (not shared between threads)."""
    if simdjson is None or not prefer_simdjson:
        return _orjson_provenance
    parse = simdjson.Parser().parse
    object_type = simdjson.Object

    def read(line: bytes) -> Any:
        if line.count(_KEY) != 1:
            return None
        try:
            document = parse(line)
        except Exception:  # any rejection: ``check_line`` decides
            return None
        if type(document) is not object_type:
            return None
        provenance = document.get("provenance")
        # no proxy may outlive this call: the next parse reuses the parser's buffers
        del document
        # anything but an object fails the caller's check anyway
        return provenance.as_dict() if type(provenance) is object_type else None

    return read


def json_validator() -> Callable[[bytes], bool] | None:
    """A full validating parse of one line (``True``: valid JSON that orjson reads too), for
    one pass; ``None`` without simdjson, where only a parse into objects can tell."""
    if simdjson is None:
        return None
    parse = simdjson.Parser().parse

    def is_json(line: bytes) -> bool:
        try:
            parse(line)  # the document is dropped at once: the parser's buffers are free again
        except Exception:  # any rejection: ``check_line`` decides
            return False
        return True

    return is_json


def all_json(lines: list[bytes]) -> bool:
    """``json_validator``'s verdict on every one of ``lines`` (``True``: all valid), in one pass
    in C; ``False`` without simdjson."""
    if simdjson is None:
        return False
    try:
        # each document is dropped before the next parse, which reuses the parser's buffers
        deque(map(simdjson.Parser().parse, lines), maxlen=0)
    except Exception:  # any rejection: the caller looks at each line on its own
        return False
    return True


def _orjson_provenance(line: bytes) -> Any:
    try:
        record = orjson.loads(line)
    except ValueError:  # not JSON
        return None
    if type(record) is not dict:
        return None
    return record.get("provenance")
