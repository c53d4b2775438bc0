"""The meta-commands of database clients that run commands or write files, and the commands
they send output to.

psql's and mysql's backslash commands run anywhere on a line outside a literal: ``\\! CMD``
(and mysql's ``system CMD``) runs a command; ``\\o |CMD``, ``\\g |CMD`` (psql) send the output
to a command, ``\\w |CMD`` the query text; ``\\o FILE``, ``\\g FILE``, ``\\w FILE``, ``\\s FILE``,
``\\lo_export OID FILE`` (psql), ``\\T FILE``/``tee FILE`` (mysql) write a file; ``\\P CMD`` /
``pager CMD`` (mysql) name a pager command. sqlite's ``.once``/``.output '|CMD'`` and ``psql -o
'|CMD'`` send the output to a command. A command that runs what it reads (a shell, an
interpreter) is read as running what it is sent (:func:`.sql_output.piped_output`).
"""

from __future__ import annotations

import re
from typing import Final

from pytest_harness_audit.policy.literal_gate import LiteralGate
from pytest_harness_audit.policy.shell.context import Context as Runner
from pytest_harness_audit.policy.shell.sql_output import (
    RUNNERS,
    SQL_CLIENTS,
    client_sql,
    piped_output,
)

_DOT_PIPED: Final = re.compile(r"(?im)^[ \t]*\.(?:once|output)[ \t]+(?:-\w+[ \t]+)*['\"]?\|")
#: A backslash command and its argument (to the line's end or the next backslash command).
_META: Final = re.compile(
    r"\\(!|o|out|g|gx|w|write|s|lo_export|T|P)(?![A-Za-z_])[ \t]*([^\n\\]*)"
    r"|(?:^|(?<=[;\n]))[ \t]*((?i:tee|pager))[ \t]+([^\n;]*)"
)
_META_GATE: Final = LiteralGate(_META)
_WRITES: Final = frozenset({"o", "out", "g", "gx", "w", "write", "s", "lo_export", "T", "tee"})


def sql_pipes(sql: str, runner: Runner) -> None:
    """Read the meta-commands of the SQL ``sql`` (module doc)."""
    masked = re.sub(r"'(?:[^']|'')*'", lambda m: "'" + " " * (len(m.group()) - 2) + "'", sql)
    for match in _DOT_PIPED.finditer(sql):
        end = sql.find("\n", match.end())
        command = sql[match.end() : len(sql) if end < 0 else end].strip().rstrip("'\";").strip()
        piped_output(command, sql, runner)  # (the command itself: `.sql_files`)
    for match in _META_GATE.finditer(masked):
        name = match.group(1) or match.group(3).lower()
        start, end = match.span(2) if match.group(1) else match.span(4)
        argument = sql[start:end].strip()
        if name in ("!", "P", "pager"):
            runner.script(argument)
            continue
        words = argument.split()
        target = (words[-1] if name == "lo_export" else words[0]).strip("'\"") if words else ""
        if target.startswith("|"):
            command = argument[argument.index("|") + 1 :].strip().strip("'\"")
            runner.script(command)
            if name not in ("w", "write"):
                piped_output(command, sql, runner, "psql")
            elif RUNNERS.match(command):  # the query typed so far is what it is sent
                runner.script(sql[sql.rfind(";", 0, match.start()) + 1 : match.start()])
        elif target and name in _WRITES:
            runner.reading.writes.append(target)


def client_pipes(name: str, args: list[str], runner: Runner) -> None:
    """``psql -o '|cmd'``: the client's output goes to ``cmd`` (read as :func:`piped_output`);
    the meta-commands of its SQL as one text (``psql -c '\\o |sh' -c "select …"``)."""
    if name not in SQL_CLIENTS:
        return
    whole = client_sql(name, args, lambda: runner.stdin_text)
    if whole is not None:
        sql_pipes(whole, runner)
    for index, word in enumerate(args):
        option, equals, value = word.partition("=")
        if option not in ("-o", "--output") or name != "psql":
            continue
        value = value if equals else (args[index + 1] if index + 1 < len(args) else "")
        if value.startswith("|"):
            runner.script(value[1:])
            if whole is None:
                runner.unknown("SQL output piped to a program that runs it")
            else:
                piped_output(value[1:], whole, runner, name)


__all__ = ["client_pipes", "sql_pipes"]
