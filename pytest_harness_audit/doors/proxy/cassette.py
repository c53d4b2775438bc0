"""Cassettes: the upstream exchanges of a proxy session as a reviewable YAML file.

A cassette holds, per upstream, what its handshake announced (server info, capabilities,
instructions) and its tool listing, then every exchange in order — ``tools/call``, resource
and prompt listings and reads, completions — with its arguments and its result or MCP error.
The workspace path is written as ``{workspace}`` and secrets as ``[secret:<fingerprint>]``,
so a cassette can be committed and replayed in another checkout.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import yaml

from pytest_harness_audit.audit.atomic_file import replace_file
from pytest_harness_audit.doors.proxy.cassette_model import (
    CASSETTE_VERSION,
    Cassette,
    CassetteError,
    Interaction,
    RecordedUpstream,
)
from pytest_harness_audit.doors.proxy.cassette_parse import parse_cassette
from pytest_harness_audit.doors.proxy.errors import ProxyError
from pytest_harness_audit.inspect.nested_strings import map_strings

__all__ = [
    "CASSETTE_VERSION",
    "DEFAULT_MATCH_ON",
    "MATCH_FIELDS",
    "WORKSPACE_TOKEN",
    "Cassette",
    "CassetteError",
    "Interaction",
    "Matcher",
    "RecordedUpstream",
    "Redactor",
    "from_cassette_text",
    "load_cassette",
    "make_matcher",
    "to_cassette_text",
    "write_cassette",
]

#: What a recorded exchange is matched on by default.
DEFAULT_MATCH_ON = ("method", "name", "arguments")
#: ``tool`` is another word for ``name``.
MATCH_FIELDS = frozenset({"method", "upstream", "name", "tool", "arguments"})
#: How the workspace directory is written in a cassette.
WORKSPACE_TOKEN = "{workspace}"

Redactor = Callable[[object], object]


def write_cassette(
    cassette: Cassette, path: Path, *, redact: Redactor, workspace: Path | None
) -> None:
    """Write ``cassette`` to ``path`` atomically, workspace and secrets replaced."""
    data = to_cassette_text(redact(cassette.to_dict()), workspace)
    text = yaml.dump(data, Dumper=_ReviewableDumper, sort_keys=False, allow_unicode=True, width=100)
    replace_file(path, text.encode("utf-8"))


class _ReviewableDumper(yaml.SafeDumper):
    """Writes multi-line strings (tool output) as literal blocks, line for line."""


def _represent_text(dumper: yaml.SafeDumper, value: str) -> yaml.Node:
    if "\n" in value and all(line == line.rstrip() for line in value.split("\n")):
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style="|")
    return dumper.represent_scalar("tag:yaml.org,2002:str", value)


_ReviewableDumper.add_representer(str, _represent_text)
_ReviewableDumper.add_representer(tuple, yaml.SafeDumper.represent_list)


def load_cassette(path: Path) -> Cassette:
    """Read ``path``; ``CassetteError`` names the file and the problem."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise CassetteError(f"cassette {path}: not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise CassetteError(f"cassette {path}: cannot be read ({exc})") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        where = getattr(exc, "problem_mark", None)
        line = f" at line {where.line + 1}" if where is not None else ""
        problem = getattr(exc, "problem", None) or type(exc).__name__
        raise CassetteError(f"cassette {path}: not valid YAML{line} ({problem})") from None
    return parse_cassette(data, path)


def _replace_strings(value: object, old: Sequence[str], new: str) -> object:
    def replace(text: str) -> str:
        for part in old:
            text = text.replace(part, new)
        return text

    return map_strings(value, replace)


def _workspace_forms(workspace: Path) -> list[str]:
    forms = {str(workspace), str(workspace.resolve())}
    return sorted(forms, key=len, reverse=True)


def to_cassette_text(value: Any, workspace: Path | None) -> Any:
    """``value`` with the workspace path written as ``{workspace}``."""
    if workspace is None:
        return value
    return _replace_strings(value, _workspace_forms(workspace), WORKSPACE_TOKEN)


def from_cassette_text(value: Any, workspace: Path | None) -> Any:
    """``value`` with ``{workspace}`` written as the workspace path."""
    if workspace is None:
        return value
    return _replace_strings(value, [WORKSPACE_TOKEN], str(workspace))


#: A matcher: ``(recorded, call) -> bool``; ``call`` has the fields of an ``Interaction``.
Matcher = Callable[[Interaction, Interaction], bool]


def make_matcher(match_on: Sequence[str] | Matcher) -> Matcher:
    """A matcher from field names (``method``, ``upstream``, ``tool``, ``arguments``) or a
    callable ``(recorded, call) -> bool`` used as it is."""
    if callable(match_on):
        return match_on
    fields = tuple(match_on)
    unknown = sorted(set(fields) - MATCH_FIELDS)
    if isinstance(match_on, str) or unknown:
        raise ProxyError(
            f"match_on {match_on!r}: expected field names among {sorted(MATCH_FIELDS)} "
            "or a callable (recorded, call) -> bool"
        )

    def matches(recorded: Interaction, call: Interaction) -> bool:
        return all(getattr(recorded, name) == getattr(call, name) for name in fields)

    return matches
