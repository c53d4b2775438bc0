"""psql's variables: those it is given (``-v NAME=VALUE``, ``--set``, ``\\set`` in its SQL)
and the SQL with them written in, as psql does before it runs a line: ``:NAME`` as the value,
``:'NAME'`` as a literal, ``:"NAME"`` as an identifier, outside literals (``::`` is a cast) and
outside ``\\!``'s command (psql hands it to the shell as written)."""

from __future__ import annotations

import re
from typing import Final

_VARIABLE_OPTIONS: Final = ("-v", "--set", "--variable")
_SET: Final = re.compile(r"\\set[ \t]+([A-Za-z_]\w*)[ \t]*([^\n\\]*)")
_REFERENCE: Final = re.compile(
    r"""\\![^\n]*|'(?:[^']|'')*'|(?<!:):(?:'([A-Za-z_]\w*)'|"([A-Za-z_]\w*)"|([A-Za-z_]\w*))"""
)


def psql_variables(args: list[str], sql: str) -> dict[str, str]:
    """The variables psql is given (``-v NAME=VALUE``, ``--set``) and ``\\set`` in ``sql``."""
    found: dict[str, str] = {}
    for index, word in enumerate(args):
        for option in _VARIABLE_OPTIONS:
            if word == option and index + 1 < len(args):
                given = args[index + 1]
            elif (
                word.startswith(option + ("=" if option.startswith("--") else ""))
                and word != option
            ):
                given = word[len(option) + (1 if option.startswith("--") else 0) :]
            else:
                continue
            key, equals, value = given.partition("=")
            if equals:
                found[key] = value
    for match in _SET.finditer(sql):
        found[match.group(1)] = "".join(
            part.strip("'") for part in re.findall(r"'(?:[^']|'')*'|\S+", match.group(2))
        )
    return found


def interpolated(sql: str, variables: dict[str, str]) -> str:
    """``sql`` with psql's variables written in (module doc)."""
    if not variables:
        return sql

    def written(match: re.Match[str]) -> str:
        quoted, identifier, plain = match.group(1), match.group(2), match.group(3)
        name = quoted or identifier or plain
        if name is None or name not in variables:
            return match.group()
        value = variables[name]
        if quoted:
            return "'" + value.replace("'", "''") + "'"
        return f'"{value}"' if identifier else value

    return _REFERENCE.sub(written, sql)


__all__ = ["interpolated", "psql_variables"]
