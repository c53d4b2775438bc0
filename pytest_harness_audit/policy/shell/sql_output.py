"""What a database client prints: the rows of SQL whose values are constants.

``sqlite3 x.db "select 'rm -r' || 'f app'" | sh`` runs ``rm -rf app``: the shell runs what the
client prints. The SQL a client runs (``sqlite3``/``duckdb`` operands, ``-cmd``, ``-c``;
``psql -c``; ``mysql -e``; ``clickhouse local --query``; a ``-f``/``-init`` file of the
workspace; or the standard input) is worked out statement by statement: a
``select`` (or ``values``) of constants with no ``from`` (values worked out as
:func:`.sql_files.evaluate` does; a ``"…"`` is a string, as MySQL and SQLite's shell read it) prints
its rows; a statement that changes data or settings prints nothing of the agent's; anything else
(a ``from``, a column, a meta-command that lists) prints what the reading cannot know.

The printed text is read as every form it can take: each value alone, the values of a row joined
by each separator (``|``, tab, space, ``,``, none, and a separator the command sets), the rows
joined by a record separator the command sets; column names given by ``as`` (a header) are
printed too, and with an echo option (``-echo``, ``psql -e``/``-a``, ``mysql -v``) so is the SQL
itself. When the output is not known, :func:`printable_texts` gives what it may hold (the
values it can work out, every literal) for a shell that runs it; :func:`piped_output` reads a
command the SQL sends its output to (:mod:`.sql_meta`).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import Final

from pytest_harness_audit.policy.shell.context import Context as Runner
from pytest_harness_audit.policy.shell.psql_vars import interpolated, psql_variables
from pytest_harness_audit.policy.shell.sql_files import evaluate

#: The database clients whose printed rows are worked out here.
SQL_CLIENTS: Final = frozenset(
    {"sqlite3", "duckdb", "psql", "mysql", "mariadb", "usql", "mycli", "litecli", "clickhouse",
     "clickhouse-local", "clickhouse-client"}
)  # fmt: skip
#: Options whose value is SQL (the client runs it), by client.
_SQL_OPTIONS: Final[dict[str, frozenset[str]]] = {
    "sqlite3": frozenset({"-cmd"}),
    "duckdb": frozenset({"-c", "-s", "-cmd"}),
    "psql": frozenset({"-c", "--command"}),
    "mysql": frozenset({"-e", "--execute"}),
    "mariadb": frozenset({"-e", "--execute"}),
    "usql": frozenset({"-c", "--command"}),
    "mycli": frozenset({"-e", "--execute"}),
    "litecli": frozenset({"-e", "--execute"}),
    "clickhouse": frozenset({"-q", "--query"}),
}
#: Options that take a value (a separate word), by client (SQL options besides).
_VALUED: Final[dict[str, frozenset[str]]] = {
    "sqlite3": frozenset({"-init", "-separator", "-newline", "-nullvalue", "-vfs", "-lookaside",
                          "-maxsize", "-mmap", "-pagecache", "-heap", "-escape"}),
    "duckdb": frozenset({"-init", "-f", "-separator", "-newline", "-nullvalue"}),
    "psql": frozenset({"-d", "--dbname", "-h", "--host", "-p", "--port", "-U", "--username",
                       "-f", "--file", "-o", "--output", "-F", "--field-separator", "-R",
                       "--record-separator", "-v", "--set", "--variable", "-P", "--pset",
                       "-L", "--log-file", "-T", "--table-attr"}),
    "mysql": frozenset({"-u", "--user", "-h", "--host", "-P", "--port", "-D", "--database",
                        "-S", "--socket", "--init-command"}),
    "clickhouse": frozenset({"--queries-file", "-h", "--host", "--port", "-u", "--user",
                             "--password", "-d", "--database", "--format", "--output-format",
                             "--input-format", "-S", "--structure", "-N", "--table",
                             "--file", "-F", "--config-file", "-C"}),
}  # fmt: skip
#: The options naming a file of SQL the client runs.
_SQL_FILES: Final = frozenset({"-f", "--file", "-init", "--queries-file"})
#: Clients whose short options bundle (``-tAc``) and take a value in the same word.
_BUNDLING: Final = frozenset({"psql", "mysql", "mariadb"})
_SEPARATOR_OPTIONS: Final = frozenset(
    {"-separator", "-newline", "-F", "--field-separator", "-R", "--record-separator"}
)
#: Options that make a client print the SQL it runs, by client.
_ECHO_OPTIONS: Final[dict[str, frozenset[str]]] = {
    "sqlite3": frozenset({"-echo"}),
    "duckdb": frozenset({"-echo"}),
    "psql": frozenset({"-e", "--echo-queries", "-a", "--echo-all"}),
    "mysql": frozenset({"-v", "--verbose", "-vv", "-vvv"}),
}
#: Statements that print nothing the agent wrote (a command tag at most).
_SILENT: Final = re.compile(
    r"(?is)\s*(?:create|insert|update|delete|drop|alter|begin|commit|end|rollback|savepoint"
    r"|release|use|attach|detach|vacuum|analyze|reindex|truncate|grant|revoke|set|start"
    r"|pragma\s+[\w.]+\s*=)\b"
)
#: Meta-commands that only set how the client prints (``.mode``, ``\pset``).
_SETTINGS: Final = re.compile(
    r"(?i)[.\\](?:mode|headers?|separator|nullvalue|bail|changes|timeout|width|pset"
    r"|set|unset|timing|x|a|t|f|encoding|H|C|q|output|once|o|out|g|gx)\b"
)
_PRINTS: Final = re.compile(r"(?is)[.\\](?:print|echo|qecho)\s(.*)")
_LITERALS: Final = re.compile(
    r"""'((?:[^']|'')*)'|"((?:[^"]|"")*)"|\$(\w*)\$(.{0,4096}?)\$\3\$""", re.S
)
_MAX_TEXT: Final = 1 << 16
#: Programs that run what they read: a shell, an interpreter.
RUNNERS: Final = re.compile(
    r"(?:\S*/)?(?:env\s+)?(?:sh|bash|dash|zsh|ksh|fish|python[0-9.]*|perl|ruby|node|php|xargs"
    r"|source|eval|busybox)\b"
)


def client_sql(
    name: str,
    args: list[str],
    stdin: Callable[[], str | None],
    files: Callable[[str], str | None] | None = None,
) -> str | None:
    """The SQL client ``name`` runs with ``args`` (``stdin``: its standard input, asked for
    only when no SQL is in the words; ``files``: the text of a ``-f`` file, when known),
    ``None`` when not known. ClickHouse's (``clickhouse local``/``client``, ``clickhouse-local``)
    is its ``--query``/``-q`` text."""
    if name.startswith("clickhouse"):
        name, args = "clickhouse", args[1:] if args[:1] in (["local"], ["client"]) else args
    sql_options = _SQL_OPTIONS.get(name, frozenset())
    valued = _VALUED.get("mysql" if name == "mariadb" else name, frozenset())
    texts: list[str] = []
    operands: list[str] = []
    index = 0
    while index < len(args):
        word = args[index]
        option, equals, value = word.partition("=")
        if name in _BUNDLING and option not in valued and not equals:
            option, equals, value = _bundled(word, sql_options | valued)
        if option in sql_options or option in valued:
            if not equals:
                value = args[index + 1] if index + 1 < len(args) else ""
                index += 1
            if option in sql_options:
                texts.append(value)
            elif option in _SQL_FILES and (name, option) not in (("clickhouse", "--file"),):
                text = files(value) if files is not None else None
                if text is None:
                    return None
                texts.append(text)
        elif not word.startswith("-") or word == "-":
            operands.append(word)
        index += 1
    if name in ("sqlite3", "duckdb"):
        texts.extend(operands[1:])
    if not texts or (name == "sqlite3" and not operands[1:]) or _duckdb_reads_input(name, args):
        text = stdin()
        if text is None:
            return None
        texts.append(text)
    sql = "\n".join(texts)[:_MAX_TEXT]
    return interpolated(sql, psql_variables(args, sql)) if name == "psql" else sql


def _duckdb_reads_input(name: str, args: list[str]) -> bool:
    """Whether ``duckdb`` reads its standard input too: no ``-c``/``-s`` SQL, no SQL operand."""
    if name != "duckdb":
        return False
    return (
        not any(word.partition("=")[0] in ("-c", "-s") for word in args)
        and not [word for word in args if word[:1] != "-"][1:]
    )


def _echoes(name: str, args: list[str]) -> bool:
    """Whether client ``name`` prints the SQL it runs (an echo option)."""
    options = _ECHO_OPTIONS.get("mysql" if name in ("mariadb", "mycli") else name, frozenset())
    return any(option in options for option in args)


def _bundled(word: str, valued: frozenset[str]) -> tuple[str, str, str]:
    """A bundle of short options (``psql -tAc SQL``, ``mysql -uroot``): the one taking a value,
    ``=`` when the value is in the word, the value; else ``word`` itself."""
    if word[:1] != "-" or word[1:2] == "-" or len(word) < 3:
        return word, "", ""
    for at, char in enumerate(word[1:], 1):
        if f"-{char}" in valued:
            rest = word[at + 1 :]
            return f"-{char}", "=" if rest else "", rest
    return word, "", ""


def client_output(
    name: str,
    args: list[str],
    stdin: Callable[[], str | None],
    files: Callable[[str], str | None] | None = None,
) -> str | None:
    """What client ``name`` prints (module doc), ``None`` when the reading cannot know it."""
    sql = client_sql(name, args, stdin, files)
    if sql is None:
        return None
    rows = printed_rows(sql, name)
    if rows is None:
        return None
    columns, records = _separators(args, sql)
    forms: list[str] = []
    for row in rows:
        forms.extend(row)
        forms.extend(column.join(row) for column in columns if len(row) > 1)
    for record in records:
        forms.append(record.join("|".join(row) for row in rows))
    if _echoes(name, args) or re.search(r"(?im)^[ \t]*\.echo[ \t]+on", sql):
        forms.append(sql)
    return "\n".join(forms) + "\n" if forms else ""


def printable_texts(
    name: str,
    args: list[str],
    stdin: Callable[[], str | None],
    files: Callable[[str], str | None] | None = None,
) -> list[str]:
    """What client ``name`` may print when :func:`client_output` cannot know it: the values of
    its statements it can work out and every literal of its SQL."""
    sql = client_sql(name, args, stdin, files)
    if sql is None:
        return []
    texts = [value for statement in _statements(sql) for value in _values(statement, name)]
    if _echoes(name, args):
        texts.extend(_statements(sql))
    for match in _LITERALS.finditer(sql):
        text = match.group(1) or match.group(2) or match.group(4) or ""
        texts.append(text.replace("''", "'").replace('""', '"'))
    return list(dict.fromkeys(text for text in texts if text.strip()))[:64]


def piped_output(command: str, sql: str, runner: Runner, name: str = "sqlite3") -> None:
    """``command`` reads what the SQL ``sql`` prints: a shell or an interpreter runs it."""
    if not RUNNERS.match(command.strip()):
        return
    rows = printed_rows(sql, name)
    if rows is None:
        runner.unknown("SQL output piped to a program that runs it")
        texts = printable_texts(name, ["-c", sql], lambda: None)
    else:
        texts = [value for row in rows for value in row] + [" ".join(row) for row in rows]
    for text in texts[:256]:
        runner.script(text)


def printed_rows(sql: str, name: str = "sqlite3") -> list[list[str]] | None:
    """The rows the SQL ``sql`` prints (headers of ``as`` names among them), ``None`` when a
    statement prints what the reading cannot know (kept for the texts read again: a nested
    script works out its standard input once more)."""
    rows = _printed_rows(sql, "mysql" if name in ("mysql", "mariadb", "mycli") else "sql")
    return None if rows is None else [list(row) for row in rows]


@functools.lru_cache(maxsize=32)
def _printed_rows(sql: str, name: str) -> tuple[tuple[str, ...], ...] | None:
    rows: list[list[str]] = []
    for statement in _statements(sql):
        stripped = statement.strip()
        if not stripped or stripped.startswith("--") or _SETTINGS.fullmatch(stripped.split()[0]):
            continue
        printed = _PRINTS.fullmatch(stripped)
        if printed is not None:
            rows.append([printed.group(1).strip()])
            continue
        if _SILENT.match(stripped) and not re.search(r"(?i)\breturning\b", stripped):
            continue
        statement_rows = _select_rows(stripped, name)
        if statement_rows is None:
            return None
        rows.extend(statement_rows)
    return tuple(tuple(row) for row in rows)


def _statements(sql: str) -> list[str]:
    """The statements of ``sql``: split at ``;`` outside quotes, and before a meta-command
    (``.x`` at a line's start, ``\\x`` anywhere outside quotes) that runs to its line's end."""
    statements: list[str] = []
    start = index = 0
    quote = ""
    blank = True  # nothing but spaces since the statement's start
    while index < len(sql):
        char = sql[index]
        if quote:
            quote = "" if char == quote else quote
        elif char == ";":
            statements.append(sql[start:index])
            start, blank, index = index + 1, True, index + 1
            continue
        elif char == "\\" or (char == "." and blank):
            statements.append(sql[start:index])
            end = sql.find("\n", index)
            end = len(sql) if end < 0 else end
            statements.append(sql[index:end])
            start = index = end
            blank = True
            continue
        elif char in "'\"`":
            quote = char
        blank = blank and char.isspace()
        index += 1
    statements.append(sql[start:])
    return [statement for statement in statements if statement.strip()]


def _select_rows(statement: str, name: str) -> list[list[str]] | None:
    """The rows of a ``select`` of constants with no ``from`` (``union all`` of such), or of
    ``values (…), (…)``; ``None`` for any other statement."""
    values = re.fullmatch(r"(?is)values\s*(\(.*\))", statement)
    if values is not None:
        found = [_row(group, name) for group in _top_split(values.group(1), ",")]
        return None if any(row is None for row in found) else [r for r in found if r is not None]
    rows: list[list[str]] = []
    for part in re.split(r"(?i)\bunion(?:\s+all)?\b", statement):
        select = re.match(r"(?is)\s*select\s+(?:(?:distinct|all)\s+)?", part)
        if select is None or re.search(r"(?i)\b(?:from|where|having|group|window)\b", _bare(part)):
            return None
        listed = part[select.end() :].strip()
        limit = re.search(r"(?i)\blimit\s+\d+\Z", listed)
        items = _items(listed[: limit.start()] if limit else listed, name) if listed else None
        if items is None:
            return None
        rows.extend(items)
    return rows


def _row(group: str, name: str) -> list[str] | None:
    group = group.strip()
    if not (group.startswith("(") and group.endswith(")")):
        return None
    values = [_value(item, name) for item in _top_split(group[1:-1], ",")]
    return None if any(value is None for value in values) else [v or "" for v in values]


def _items(select_list: str, name: str) -> list[list[str]] | None:
    """A select list's row, and its header of ``as`` names when it names any."""
    row: list[str] = []
    header: list[str] = []
    for item in _top_split(select_list, ","):
        value = _value(item, name)
        alias = _alias(item) if value is None else None
        if alias is not None:
            value = _value(alias[0], name)
            header.append(alias[1])
        if value is None:
            return None
        row.append(value)
    return [header, row] if header else [row]


def _alias(item: str) -> tuple[str, str] | None:
    """A select item's expression and the column name it gives it (``'x' as "y"``, ``'x' y``),
    ``None`` when it names none (worked out without a regular expression's backtracking)."""
    text = item.rstrip()
    if text.endswith(('"', "`")):
        start = len(text) - 1
        while True:  # the opening quote (`""` inside is one)
            start = text.rfind(text[-1], 0, start)
            if start <= 0 or text[start - 1] != text[-1]:
                break
            start -= 1
        if start < 0:
            return None
        head, name = text[:start], text[start + 1 : -1].replace('""', '"')
    elif text.endswith("]") and "[" in text:
        start = text.rindex("[")
        head, name = text[:start], text[start + 1 : -1]
    else:
        words = text.rsplit(None, 1)
        if len(words) < 2 or not re.fullmatch(r"[A-Za-z_]\w*", words[1]):
            return None
        head, name = words
    head = head.rstrip()
    if head[-3:].lower() == " as" or head.lower() == "as":
        head = head[:-2].rstrip()
    return (head, name) if head and head != text else None


def _values(statement: str, name: str) -> list[str]:
    """The values of a statement's select list it can work out (the rest left out)."""
    select = re.match(r"(?is)\s*select\s+(.*?)(?:\bfrom\b|\Z)", _bare(statement))
    if select is None:
        return []
    found = [_value(item, name) for item in _top_split(statement[select.start(1) :], ",")]
    return [value for value in found if value]


def _value(expression: str, name: str) -> str | None:
    """The text an expression prints: a constant worked out, ``NULL`` as nothing."""
    expression = expression.strip()
    if re.fullmatch(r"(?i)null", expression):
        return ""
    expression = re.sub(
        r"'(?:[^']|'')*'|\"((?:[^\"]|\"\")*)\"",
        lambda m: m.group() if m.group(1) is None else _quoted(m.group(1)),
        expression,
    )
    if name == "mysql":
        expression = re.sub(r"\b0[xX]([0-9A-Fa-f]+)\b", r"x'\1'", expression)
    expression = re.sub(r"(?i)\bchr\s*\(", "char(", expression)
    return evaluate(expression)


def _quoted(body: str) -> str:
    """A ``"…"`` string as a ``'…'`` one."""
    return "'" + body.replace('""', '"').replace("'", "''") + "'"


def _bare(text: str) -> str:
    """``text`` with its literals blanked (a keyword inside one is text)."""
    return _LITERALS.sub(lambda m: "''", text)


def _top_split(text: str, separator: str) -> list[str]:
    """``text`` split at ``separator`` outside quotes and parentheses."""
    parts: list[str] = []
    depth = 0
    quote = ""
    start = 0
    for index, char in enumerate(text):
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"`":
            quote = char
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        elif char == separator and depth == 0:
            parts.append(text[start:index])
            start = index + 1
    parts.append(text[start:])
    return [part.strip() for part in parts]


def _separators(args: list[str], sql: str) -> tuple[list[str], list[str]]:
    """The separators between a row's values and between rows the output may use: the usual
    ones and those the command sets (its options, ``.separator``)."""
    columns = ["|", "\t", " ", ",", ""]
    records: list[str] = []
    for index, word in enumerate(args[:-1]):
        option, equals, value = word.partition("=")
        if option in _SEPARATOR_OPTIONS:
            value = value if equals else args[index + 1]
            (records if option in ("-newline", "-R", "--record-separator") else columns).append(
                value
            )
    for match in re.finditer(r"(?im)^\s*\.separator\s+(\S+)(?:\s+(\S+))?", sql):
        columns.append(match.group(1).strip("'\""))
        if match.group(2):
            records.append(match.group(2).strip("'\""))
    return columns, records


__all__ = [
    "RUNNERS",
    "SQL_CLIENTS",
    "client_output",
    "client_sql",
    "piped_output",
    "printable_texts",
    "printed_rows",
]
