"""What psql itself does to the SQL it is given before it runs it.

psql writes its variables in (``psql -v c='|sh' -c '\\o :c'``, ``\\set c …``; ``:NAME``,
``:'NAME'`` as a literal, ``:"NAME"`` as an identifier, outside literals), runs the text between
backquotes in a meta-command's arguments as a shell command (``\\set x `rm -rf app```; not in
``\\!``'s, which is a command already), and runs the rows a query prints as SQL (``\\gexec``):
each is read as what it amounts to, the rows when they are constants, else the SQL is unknown.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Final

from pytest_harness_audit.policy.shell.context import Context as Runner
from pytest_harness_audit.policy.shell.psql_vars import psql_variables
from pytest_harness_audit.policy.shell.sql_output import client_sql, printed_rows

_BACKQUOTED: Final = re.compile(r"\\(?!!)[A-Za-z_][^\n`\\]*((?:`[^`\n]*`[^\n`\\]*)+)")


def psql_text(args: list[str], runner: Runner, language: Callable[[str], None]) -> None:
    """Read what psql makes of its SQL (module doc); ``language``: reads an SQL text."""
    sql = client_sql("psql", args, lambda: runner.stdin_text)  # its variables written in
    if sql is None:
        return
    if psql_variables(args, sql):
        language(sql)
    for match in _BACKQUOTED.finditer(sql):
        for command in re.findall(r"`([^`\n]*)`", match.group(1)):
            runner.script(command)
    for index, part in enumerate(re.split(r"\\gexec\b", sql)[:-1]):
        statement = part[part.rfind(";") + 1 :] if index == 0 else part
        rows = printed_rows(statement, "psql")
        if rows is None:
            runner.unknown("psql \\gexec runs SQL worked out at run time")
            for literal in re.findall(r"'((?:[^']|'')*)'", statement):
                language(literal.replace("''", "'"))
            continue
        for row in rows:
            for value in row:
                language(value)


__all__ = ["psql_text"]
