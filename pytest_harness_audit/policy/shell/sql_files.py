"""The files and commands of SQL a database client runs: ``sqlite3``'s, ``duckdb``'s, and
PostgreSQL's and MySQL's (``psql``, ``mysql``/``mariadb``).

``sqlite3 x.db "select readfile('.e' || 'nv')"`` reads ``.env``; ``select writefile('app/main.py',
'')`` writes a file; ``select edit('x', 'rm -rf app')`` runs ``rm -rf app FILE``; ``.once FILE``,
``.output FILE``, ``.save FILE`` write one; ``.read '|cmd'``, ``.import '|cmd' t``, ``.output
'|cmd'`` run a command; DuckDB's ``copy … to 'FILE'`` writes, ``read_csv('FILE')``, ``read_text``,
``from 'FILE'`` and ``copy … from 'FILE'`` read; PostgreSQL's ``pg_read_file``,
``pg_read_binary_file`` and ``lo_import`` and MySQL's ``load_file`` read, ``select … into
outfile|dumpfile 'FILE'`` writes. The SQL's names are worked out from what writes
them: string literals (``''`` a quote), ``||`` joins, ``char(46, 101)``, ``x'2e'`` blobs,
``chr``, ``unhex``, ``lower``/``upper``/``trim``/``replace``/``substr``/``reverse``/``concat``,
``printf('%s')`` and ``cast(… as text)`` of such values; a file name the SQL computes otherwise
(a column, a subquery) makes the command unreadable. Calls inside a string literal are text.
(``.shell``/``.system``, ``.read FILE`` and ``.import FILE`` are read by
:mod:`.command_strings` as for the other command languages.)
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Final

from pytest_harness_audit.policy.sensitive import glob_candidates
from pytest_harness_audit.policy.shell.context import Context as Runner

#: The database shells whose SQL is read here.
SQL_SHELLS: Final = frozenset({"sqlite3", "duckdb"})
#: Functions reading the file their first argument names.
_READERS: Final = frozenset(
    {"readfile", "read_csv", "read_csv_auto", "read_json", "read_json_auto", "read_ndjson",
     "read_ndjson_auto", "read_parquet", "parquet_scan", "read_text", "read_blob", "read_xlsx",
     "sniff_csv", "read_json_objects", "st_read", "pg_read_file", "pg_read_binary_file",
     "lo_import", "load_file"}
)  # fmt: skip
_CALL: Final = re.compile(r"\b([A-Za-z_]\w*)\s*\(")
#: Statements naming a file: ``copy … to 'F'`` and ``vacuum into 'F'`` write it; ``attach 'F'``,
#: ``import database 'F'``, ``from 'F'`` read it, ``export database 'F'`` writes there.
_WRITTEN: Final = re.compile(
    r"(?is)\bcopy\b[^;]*\bto\s+(?!program\b|stdout\b)(?=['xX(a-zA-Z_])"
    r"|\bvacuum\b[^;]*?\binto\s+(?=['xX(a-zA-Z_])|\binto\s+(?:outfile|dumpfile)\s+(?=['xX(])"
)
_STATEMENT: Final = re.compile(
    r"(?is)\b(?:(attach)(?:\s+database)?|(export|import)\s+database|(from|join))\s+"
    r"(?=['xX(a-zA-Z_])"
)
_DOT: Final = re.compile(r"(?m)^\s*\.(once|output|log|save|backup|clone|open|restore|read|import)"
                         r"\b[ \t]*(.*)$")  # fmt: skip
_DOT_WRITES: Final = frozenset({"once", "output", "log", "save", "backup", "clone"})
_BLOB: Final = re.compile(r"[xX]'([0-9A-Fa-f]*)'")
_MAX_TEXT: Final = 1 << 16
_MAX_DEPTH: Final = 16


def sql_effects(text: str, runner: Runner) -> None:
    """Record what the SQL ``text`` reads, writes and runs (module doc)."""
    text = text[:_MAX_TEXT]
    masked = _masked(text)
    reading = runner.reading
    for match in _CALL.finditer(masked):
        name = match.group(1).lower()
        if name not in _READERS and name not in ("writefile", "edit", "lo_export"):
            continue
        inside = _closing(text, match.end())
        args = _arguments(inside) if inside is not None else []
        second = name in ("edit", "lo_export")  # `lo_export(oid, 'FILE')`
        if not args or (second and len(args) < 2):
            continue
        value = evaluate(args[1] if second else args[0])
        if value is None:
            runner.unknown(f"SQL {name}() of a name worked out at run time")
        elif name == "edit":
            runner.script(f"{value} sql-edit.tmp")  # the editor is run on a temporary file
        elif name in ("writefile", "lo_export"):
            reading.writes.append(value)
        else:
            _read(value, runner)
    for match in _WRITTEN.finditer(masked):
        value = evaluate(_operand(text, match.end()))
        if value is None:
            runner.unknown("SQL writes a file named at run time")
        else:
            reading.writes.append(value)
    for match in _STATEMENT.finditer(masked):
        kind = (match.group(1) or match.group(2) or match.group(3)).lower()
        value = evaluate(_operand(text, match.end()))
        if value is None:
            if kind not in ("from", "join"):  # `from users`: a table
                runner.unknown(f"SQL {kind} of a file named at run time")
            continue
        if kind == "export":
            reading.writes.append(value)
        else:
            _read(value, runner)
    for match in _DOT.finditer(text):
        _dot_command(match.group(1), match.group(2), runner)


def _read(value: str, runner: Runner) -> None:
    """A file the SQL reads; a pattern (DuckDB's ``read_text('.e*')``), the sensitive files it
    can match."""
    runner.reading.reads.append(value)
    if any(char in value for char in "*?["):
        runner.reading.reads.extend(glob_candidates(value))


def _dot_command(command: str, rest: str, runner: Runner) -> None:
    """A dot-command of the sqlite shell naming a file (or a ``|command``)."""
    words = [word for word in _shell_words(rest) if not word.startswith("-")]
    if not words:
        return
    target = words[-1] if command in ("backup", "save", "clone", "restore") else words[0]
    if target.startswith("|"):
        runner.script(target[1:])  # what it prints to a shell: :func:`.sql_output.sql_pipes`
        return
    if command in ("read", "import"):
        return  # read by `command_strings` (and its text followed there)
    if command in _DOT_WRITES or (command == "open" and ("--new" in rest or "-new" in rest)):
        runner.reading.writes.append(target)
    else:
        runner.reading.reads.append(target)


def _shell_words(rest: str) -> list[str]:
    """A dot-command's arguments: words, quoted ones unquoted."""
    return [
        one or two or three
        for one, two, three in re.findall(r"'([^']*)'|\"([^\"]*)\"|(\S+)", rest)
        if one or two or three
    ]


def evaluate(expression: str, depth: int = 0) -> str | None:
    """The text the SQL ``expression`` makes of literals (module doc), else ``None``."""
    if depth > _MAX_DEPTH:
        return None
    parts = _concatenated(expression.strip())
    if parts is None:
        return None
    values = [_term(part.strip(), depth) for part in parts]
    return None if any(value is None for value in values) else "".join(map(str, values))


def _term(term: str, depth: int) -> str | None:
    if len(term) >= 2 and term[0] == "'" and term[-1] == "'":
        body = term[1:-1]
        return body.replace("''", "'") if "'" not in body.replace("''", "") else None
    if re.fullmatch(r"[-+]?\d{1,9}", term):
        return term  # a number (`substr(…, 2, 4)`); as a name, its digits
    blob = _BLOB.fullmatch(term)
    if blob is not None:
        return _unhexed(blob.group(1))
    if term.startswith("(") and term.endswith(")") and _closing(term, 1) == term[1:-1]:
        return evaluate(term[1:-1], depth + 1)
    call = re.fullmatch(r"([A-Za-z_]\w*)\s*\((.*)\)", term, re.DOTALL)
    if call is None or _closing(term, call.start(2)) != call.group(2):
        return None
    name, inside = call.group(1).lower(), call.group(2)
    if name == "cast":
        cast = re.fullmatch(r"(?is)(.*)\s+as\s+(?:text|varchar|blob|string)\b.*", inside)
        return evaluate(cast.group(1), depth + 1) if cast else None
    args = _arguments(inside)
    if name in ("char", "chr"):
        codes = [arg.strip() for arg in args]
        if not all(code.isdigit() and int(code) < 0x110000 for code in codes):
            return None
        return "".join(chr(int(code)) for code in codes)
    values = [evaluate(arg, depth + 1) for arg in args]
    function = _FUNCTIONS.get(name)
    if function is None or any(value is None for value in values):
        return None
    try:
        return function([str(value) for value in values])
    except (ValueError, IndexError, TypeError):
        return None


def _substr(values: list[str]) -> str:
    text, start = values[0], int(values[1])
    length = int(values[2]) if len(values) > 2 else len(text)
    begin = start - 1 if start > 0 else (len(text) + start if start < 0 else 0)
    return text[begin : begin + length]


def _printf(values: list[str]) -> str:
    template, rest = values[0], values[1:]
    if template.replace("%%", "").count("%") != template.count("%s") or len(rest) < template.count(
        "%s"
    ):
        raise ValueError(template)
    for value in rest:
        template = template.replace("%s", value.replace("%", "%%"), 1)
    return template.replace("%%", "%")


def _unhexed(digits: str) -> str | None:
    try:
        return bytes.fromhex(digits).decode("utf-8")
    except ValueError:
        return None


_FUNCTIONS: Final[dict[str, Callable[[list[str]], str | None]]] = {
    "lower": lambda v: v[0].lower(),
    "upper": lambda v: v[0].upper(),
    "lcase": lambda v: v[0].lower(),
    "ucase": lambda v: v[0].upper(),
    "trim": lambda v: v[0].strip(v[1] if len(v) > 1 else None),
    "ltrim": lambda v: v[0].lstrip(v[1] if len(v) > 1 else None),
    "rtrim": lambda v: v[0].rstrip(v[1] if len(v) > 1 else None),
    "replace": lambda v: v[0].replace(v[1], v[2]) if v[1] else v[0],
    "substr": _substr,
    "substring": _substr,
    "reverse": lambda v: v[0][::-1],
    "concat": "".join,
    "concat_ws": lambda v: v[0].join(v[1:]),
    "printf": _printf,
    "format": _printf,
    "unhex": lambda v: _unhexed(v[0]),
    "unistr": lambda v: v[0] if "\\" not in v[0] else None,
    "quote": lambda v: v[0],
}


def _concatenated(expression: str) -> list[str] | None:
    """``expression``'s parts joined by ``||`` at the top level (``None``: nothing to join)."""
    if not expression:
        return None
    parts: list[str] = []
    depth = 0
    quoted = False
    start = 0
    index = 0
    while index < len(expression):
        char = expression[index]
        if char == "'":
            quoted = not quoted
        elif not quoted and char == "(":
            depth += 1
        elif not quoted and char == ")":
            depth -= 1
        elif not quoted and depth == 0 and expression.startswith("||", index):
            parts.append(expression[start:index])
            start = index + 2
            index += 2
            continue
        index += 1
    parts.append(expression[start:])
    return parts


def _masked(text: str) -> str:
    """``text`` with every string literal's characters blanked (a call in a literal is text)."""
    return re.sub(r"'(?:[^']|'')*'", lambda m: "'" + " " * (len(m.group()) - 2) + "'", text)


def _closing(text: str, start: int) -> str | None:
    """The text from ``start`` to the parenthesis closing the one before it (quotes skipped)."""
    depth = 1
    quoted = False
    for index in range(start, min(len(text), start + _MAX_TEXT)):
        char = text[index]
        if char == "'":
            quoted = not quoted
        elif quoted:
            continue
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth == 0:
                return text[start:index]
    return None


def _arguments(inside: str) -> list[str]:
    """A call's arguments: ``inside`` split at the commas outside parentheses and quotes."""
    return list(_split_top(inside))


def _split_top(inside: str) -> Iterator[str]:
    depth = 0
    quoted = False
    start = 0
    for index, char in enumerate(inside):
        if char == "'":
            quoted = not quoted
        elif quoted:
            continue
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        elif char == "," and depth == 0:
            yield inside[start:index].strip()
            start = index + 1
    if inside[start:].strip():
        yield inside[start:].strip()


def _operand(text: str, start: int) -> str:
    """The expression a statement names its file by, from ``start``: up to the next keyword,
    ``;`` or the end, a parenthesised one whole."""
    if text[start : start + 1] == "(":
        inside = _closing(text, start + 1)
        return "" if inside is None else f"({inside})"
    match = re.match(
        r"(?:'(?:[^']|'')*'|[xX]'[0-9A-Fa-f]*'|\w+\s*\([^;]*?\)|\|\||\s+)+", text[start:]
    )
    return match.group().strip() if match else ""


__all__ = ["SQL_SHELLS", "evaluate", "sql_effects"]
