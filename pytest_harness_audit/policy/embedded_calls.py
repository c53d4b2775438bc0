"""The inner calls a call carries: argument objects for another tool, as hubs and gateways take.

A tool that dispatches to other tools (an MCP gateway's ``call_tool``, a hub's ``invoke``, an
agent framework's ``run_tool``) takes the inner call's arguments beside its name:
``{"name": "shell", "arguments": {"command": "cp .env /tmp/x"}}``, or, in the function-calling
convention of many model APIs, as a JSON text
(``{"name": "shell", "arguments": "{\\"command\\": \\"cp .env /tmp/x\\"}"}``). The outer call
names no command and no file; the inner one does. :func:`embedded_calls` finds every such
argument object: a JSON object (in the parameters, or a JSON text of them) holding a target
parameter (``command``, ``cmd``, ``script``, ``argv``, ``code``, ``file_path``, ``path`` …, or
another name for a command: :data:`~.param_targets.COMMAND_ALIASES`), at any depth below the
call's own parameters. The policy judges each as a call of the same tool
(:func:`~pytest_harness_audit.policy.views.with_embedded_views`): for a tool of no category, and
for a tool of the ``command`` category (``mcp__*__execute`` …) given no command of its own.

Text parameters (``content``, ``message``, ``text`` …) are not read: a note whose text is JSON
is no call; only the one ``input`` of a call with no other parameter is (a model argument given
as its JSON text, as a lone object is read through: :func:`~.param_targets.as_dict`).

Bounded: :data:`MAX_EMBEDDED` objects are judged one by one, the commands and paths of the
others together, one call for each tool they name (at most :data:`MAX_NAMED_GROUPS`: a call
whose further inner calls name more tools is not read whole, and the gate refuses it);
:data:`MAX_JSON_TEXT` characters of one JSON text, :data:`MAX_DEPTH` levels and
:data:`MAX_VALUES` values are looked at (far beyond what one request carries).
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Mapping
from typing import Any, Final

from pytest_harness_audit.policy.param_targets import (
    COMMAND_KEYS,
    CONTENT_KEYS,
    UNREAD_PARAMETERS,
    argv_command,
    as_dict,
    is_command_alias,
    is_mapping,
)
from pytest_harness_audit.policy.targets import KEY_KINDS

#: Most inner argument objects of one call judged one by one; the commands and paths of the
#: further ones are judged together, as one call (:func:`embedded_calls`).
MAX_EMBEDDED: Final = 32
#: Most tools the inner calls past :data:`MAX_EMBEDDED` may name (their calls are judged together,
#: one call for each tool named): past that, the call is not read whole.
MAX_NAMED_GROUPS: Final = 32
#: The name :func:`named_embedded_calls` gives, last, when the inner calls past
#: :data:`MAX_EMBEDDED` name more than :data:`MAX_NAMED_GROUPS` tools: the gate then refuses the
#: call as one whose parameters it did not read whole.
TOO_MANY_NAMES: Final = UNREAD_PARAMETERS
#: Longest JSON text decoded (characters); a longer one is not read as arguments.
MAX_JSON_TEXT: Final = 1 << 26
#: Most levels of objects, lists and JSON texts looked through.
MAX_DEPTH: Final = 64
#: Most values looked at in one call (a padded call is read whole far beyond what the wire
#: carries in one request).
MAX_VALUES: Final = 1 << 22
#: The parameters that make an object an inner call's arguments (the target parameters).
CALL_KEYS: Final = frozenset(KEY_KINDS)


#: Most times a JSON text is read as a JSON string holding another (``"{\\"command\\": …}"``).
MAX_JSON_STRINGS: Final = 4


def json_value(text: str) -> Any:
    """The object or list a JSON text holds, read through JSON strings that hold one (a text
    encoded again, up to :data:`MAX_JSON_STRINGS` times), or ``None`` (not JSON, another
    value, too long)."""
    value: Any = text
    for _ in range(MAX_JSON_STRINGS + 1):
        stripped = value.strip()
        if not stripped or stripped[0] not in '{["' or len(stripped) > MAX_JSON_TEXT:
            return None
        try:
            value = json.loads(stripped)
        except (ValueError, RecursionError):
            return None
        if isinstance(value, (dict, list)):
            return value
        if not isinstance(value, str):
            return None
    return None


def _is_call(item: Mapping[Any, Any]) -> bool:
    return any(type(key) is str and (key in CALL_KEYS or is_command_alias(key)) for key in item)


#: Text parameters read when a call has no other: a tool's one ``input``, which a model
#: argument's JSON form is given as.
_LONE_INPUTS: Final = frozenset({"input"})


def _children(item: Any) -> list[Any]:
    """The values below ``item`` worth looking at (text parameters left out)."""
    if is_mapping(item):
        return [value for key, value in item.items() if key not in CONTENT_KEYS]
    return list(item)


def _top(params: dict[str, Any]) -> list[Any]:
    """The values of a call's own parameters worth looking at: :func:`_children`, and the one
    ``input`` of a call that has no other parameter."""
    if len(params) == 1 and next(iter(params)) in _LONE_INPUTS:
        return list(params.values())
    return _children(params)


def _levelled(items: list[Any], depth: int) -> list[tuple[Any, int]]:
    """``items`` with their ``depth``, last first (a stack pops them in document order)."""
    return [(items[index], depth) for index in range(len(items) - 1, -1, -1)]


def embedded_calls(params: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The argument objects of inner calls below ``params`` (read through a lone wrapping
    object, as targets are), in document order; see the module docstring. Past the first
    :data:`MAX_EMBEDDED`, the commands of the others make one ``command`` (one per line) and
    their other target strings one ``paths`` list: a last object judged for all of them."""
    return [inner for _, inner in named_embedded_calls(params)]


#: The keys an object names the tool of the inner call it carries under (``{"name": "shell",
#: "arguments": …}``, a model API's ``{"function": {"name": …, "arguments": …}}``).
NAME_KEYS: Final = ("name", "tool", "tool_name", "toolName", "function_name", "functionName")


def _name_of(item: Mapping[Any, Any], inherited: str | None) -> str | None:
    for key in NAME_KEYS:
        value = item.get(key)
        if type(value) is str and value.strip():
            return value
    return inherited


def named_embedded_calls(params: Mapping[str, Any]) -> list[tuple[str | None, dict[str, Any]]]:
    """:func:`embedded_calls`, each with the name of the tool it is for (the ``name`` or
    ``tool`` beside it or in an object around it, :data:`NAME_KEYS`), ``None`` when none is
    given. Past the first :data:`MAX_EMBEDDED`, the others are judged together, one object for
    each tool they name (its name kept: a ``pwsh`` command is read as PowerShell wherever it
    stands), and one for those naming none; when they name more than :data:`MAX_NAMED_GROUPS`
    tools, a last ``(TOO_MANY_NAMES, {})``."""
    found: list[tuple[str | None, dict[str, Any]]] = []
    rest: dict[str | None, tuple[list[str], list[str]]] = {}
    too_many = False
    budget = MAX_VALUES
    args = as_dict(params)
    named = _name_of(args, None)  # the call's own parameters name the tool of their `arguments`
    stack: list[tuple[Any, int, str | None]] = [
        (item, depth, named) for item, depth in _levelled(_top(args), 1)
    ]
    while stack:
        item, depth, name = stack.pop()
        budget -= 1
        if budget < 0:
            break
        if type(item) is str:
            item = json_value(item)
            if item is None:
                continue
        if is_mapping(item):
            name = _name_of(item, name)
            if _is_call(item):
                inner = {str(key): value for key, value in item.items()}
                if len(found) < MAX_EMBEDDED:
                    found.append((name, inner))
                else:
                    group = rest.get(name)
                    if group is None:
                        if len(rest) >= MAX_NAMED_GROUPS:
                            too_many = True
                            break
                        group = rest[name] = ([], [])
                    _gather(inner, *group)
        elif not isinstance(item, (list, tuple)):
            continue
        if depth < MAX_DEPTH:
            stack.extend(
                (child, level, name) for child, level in _levelled(_children(item), depth + 1)
            )
    for name, (commands, paths) in rest.items():
        if commands or paths:
            joined: dict[str, Any] = {"paths": paths}
            if commands:
                joined["command"] = "\n".join(commands)
            found.append((name, joined))
    if too_many:
        found.append((TOO_MANY_NAMES, {}))
    return found


def _gather(inner: dict[str, Any], commands: list[str], paths: list[str]) -> None:
    """Add the command and the target strings of ``inner`` to those of the others."""
    for key, value in inner.items():
        if key in COMMAND_KEYS or is_command_alias(key):
            text = value if type(value) is str else argv_command(value)
            if text is not None:
                commands.append(text)
        elif key == "code" and type(value) is str:
            commands.append(f"python3 -c {shlex.quote(value)}")
        elif key in CALL_KEYS and type(value) is str:
            paths.append(value)
