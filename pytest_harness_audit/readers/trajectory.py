"""Trajectory matching in the vocabulary agentevals users know, and a little beyond.

``mode`` compares the lists of calls: ``strict`` (the same calls in the same order),
``unordered`` (the same calls in any order), ``subset`` (every recorded call is among the
expected ones), ``superset`` (every expected call was recorded).

``args`` compares the parameters of two calls of the same tool, as agentevals'
``tool_args_match_mode`` does, always read from the recorded call's side: ``exact`` (the same
keys, every value matching), ``ignore`` (tool names only), ``subset`` (every recorded key is
expected and matches: the recorded parameters are a subset of the expected ones), ``superset``
(every expected key was recorded and matches: the recorded parameters are a superset of the
expected ones). ``args`` may also be a mapping of tool name to mode, to a callable
``(recorded_params, expected_params) -> bool``, or to a list of keys (dotted paths) that alone
are compared, as agentevals' ``tool_args_match_overrides``; the ``"*"`` entry covers the tools it
does not name, and ``exact`` (agentevals' default) covers them when there is no ``"*"``.

Inside expected parameters a value may be a matcher: ``unittest.mock.ANY``, a type (an
``isinstance`` check), a compiled regular expression (a full match of a string), or a callable
of the recorded value returning true or false. Nested mappings are compared with the tool's
mode, lists element by element. The message of a mismatch (:mod:`.trajectory_diff`) names the
first differing call and field.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias

from pytest_harness_audit.errors import UsageError

MODES = ("strict", "unordered", "subset", "superset")
ARG_MODES = ("exact", "ignore", "subset", "superset")
#: The key of an ``args`` mapping that covers every tool the mapping does not name.
DEFAULT_KEY = "*"

ParamsMatcher: TypeAlias = Callable[[Mapping[str, Any], Mapping[str, Any]], Any]
ArgsSpec: TypeAlias = str | Mapping[str, str | ParamsMatcher | Sequence[str]]
_SCALARS = (str, int, float, bool, type(None))


@dataclass(frozen=True)
class Step:
    """One expected or recorded call: the tool and its parameters (``None``: not known)."""

    tool: str
    params: Mapping[str, Any] | None

    def describe(self) -> str:
        """``Tool(key=value, …)``."""
        if not self.params:
            return f"{self.tool}()"
        inner = ", ".join(f"{k}={show(v)}" for k, v in self.params.items())
        return f"{self.tool}({inner})"


def show(value: Any) -> str:
    """A value or matcher as a message shows it: ``repr``, or the matcher's name."""
    if isinstance(value, re.Pattern):
        return f"re.compile({value.pattern!r})"
    if isinstance(value, type):
        return f"<any {value.__name__}>"
    if callable(value) and not _is_any(value):
        name = getattr(value, "__qualname__", None) or type(value).__name__
        return f"<{name}>"
    return repr(value)


def _is_any(value: Any) -> bool:
    return type(value).__name__ == "_ANY" and repr(value) == "<ANY>"


def _check_value(value: Any, where: str) -> None:
    """Refuse what is neither a value nor a matcher, naming where it is."""
    if isinstance(value, _SCALARS) or _is_any(value) or isinstance(value, re.Pattern):
        return
    if isinstance(value, Mapping):
        for key, inner in value.items():
            if not isinstance(key, str):
                raise UsageError(f"{where}: keys must be strings, got {key!r}")
            _check_value(inner, f"{where}[{key!r}]")
        return
    if isinstance(value, (list, tuple)):
        for index, inner in enumerate(value):
            _check_value(inner, f"{where}[{index}]")
        return
    if callable(value):
        return
    raise UsageError(
        f"{where}: expected a value (str, number, bool, None, mapping, list) or a matcher "
        f"(callable, type, re.compile(…), unittest.mock.ANY), got {value!r}"
    )


def expected_steps(expected: Sequence[Any]) -> list[Step]:
    """Normalise ``"Tool"``, ``("Tool", {…})`` or ``{"tool": …, "params"|"args": {…}}``."""
    if isinstance(expected, (str, bytes)) or not isinstance(expected, Sequence):
        raise UsageError(f"expected: a list of calls, got {expected!r}")
    steps = []
    for index, item in enumerate(expected):
        if isinstance(item, str):
            steps.append(Step(item, None))
            continue
        if (
            isinstance(item, tuple)
            and len(item) == 2
            and isinstance(item[0], str)
            and isinstance(item[1], Mapping)
        ):
            step = Step(item[0], item[1])
        elif isinstance(item, Mapping) and isinstance(item.get("tool"), str):
            params = item.get("params", item.get("args"))
            if params is not None and not isinstance(params, Mapping):
                raise UsageError(f"expected[{index}]: params must be a mapping, got {params!r}")
            step = Step(item["tool"], params)
        else:
            raise UsageError(
                f"expected[{index}]: use a tool name, (tool, params) or "
                f"{{'tool': …, 'params': …}}, got {item!r}"
            )
        if step.params is not None:
            _check_value(step.params, f"expected[{index}] ({step.tool}) params")
        steps.append(step)
    return steps


def check_args(args: Any) -> None:
    """Refuse an ``args`` that is neither a mode nor a mapping of tool to mode or callable."""
    if isinstance(args, str):
        if args not in ARG_MODES:
            raise UsageError(f"args must be one of {', '.join(ARG_MODES)}; got {args!r}")
        return
    if not isinstance(args, Mapping):
        raise UsageError(
            f"args must be one of {', '.join(ARG_MODES)} or a mapping of tool to mode; got {args!r}"
        )
    for tool, mode in args.items():
        if not isinstance(tool, str):
            raise UsageError(f"args: keys must be tool names (or '*'), got {tool!r}")
        if isinstance(mode, str) and mode in ARG_MODES:
            continue
        if not isinstance(mode, str) and callable(mode):
            continue
        if (
            isinstance(mode, (list, tuple))
            and mode
            and all(isinstance(key, str) and key for key in mode)
        ):
            continue
        raise UsageError(
            f"args[{tool!r}] must be one of {', '.join(ARG_MODES)}, a callable "
            f"(recorded_params, expected_params) -> bool or a list of keys; got {mode!r}"
        )


def mode_for(args: ArgsSpec, tool: str) -> str | ParamsMatcher | Sequence[str]:
    """The argument mode (or callable) that applies to ``tool``."""
    if isinstance(args, str):
        return args
    if tool in args:
        return args[tool]
    return args.get(DEFAULT_KEY, "exact")


def value_difference(expected: Any, actual: Any, mode: str, path: str) -> str | None:
    """Why ``actual`` does not match ``expected`` (``None``: it matches), naming the field."""
    if _is_any(expected):
        return None
    if isinstance(expected, Mapping):
        if not isinstance(actual, Mapping):
            return f"field {path!r}: expected a mapping, got {actual!r}"
        return mapping_difference(expected, actual, mode, path)
    if isinstance(expected, (list, tuple)):
        if not isinstance(actual, (list, tuple)):
            return f"field {path!r}: expected a list, got {actual!r}"
        if len(expected) != len(actual):
            return f"field {path!r}: expected {len(expected)} items, got {len(actual)}: {actual!r}"
        for index, (want, got) in enumerate(zip(expected, actual, strict=True)):
            found = value_difference(want, got, mode, f"{path}[{index}]")
            if found:
                return found
        return None
    if isinstance(expected, re.Pattern):
        if isinstance(actual, str) and expected.fullmatch(actual):
            return None
        return f"field {path!r}: expected a match of {show(expected)}, got {actual!r}"
    if isinstance(expected, type):
        if isinstance(actual, expected):
            return None
        return f"field {path!r}: expected {show(expected)}, got {actual!r}"
    if callable(expected):
        try:
            accepted = bool(expected(actual))
        except Exception as exc:
            return (
                f"field {path!r}: matcher {show(expected)} raised "
                f"{type(exc).__name__}: {exc} on {actual!r}"
            )
        return None if accepted else f"field {path!r}: {actual!r} does not satisfy {show(expected)}"
    if expected == actual:
        return None
    return f"field {path!r}: expected {expected!r}, got {actual!r}"


def mapping_difference(
    expected: Mapping[str, Any], actual: Mapping[str, Any], mode: str, prefix: str = ""
) -> str | None:
    """The first field where ``actual`` fails ``expected`` under the argument ``mode``."""

    def field(key: str) -> str:
        return f"{prefix}.{key}" if prefix else key

    for key, want in expected.items():
        if key not in actual:
            if mode in ("exact", "superset"):
                return f"field {field(key)!r}: expected {show(want)}, not recorded"
            continue
        found = value_difference(want, actual[key], mode, field(key))
        if found:
            return found
    if mode in ("exact", "subset"):
        for key, got in actual.items():
            if key not in expected:
                return f"field {field(key)!r}: recorded {got!r}, not expected"
    return None


_MISSING = object()


def _at(params: Mapping[str, Any], path: str) -> Any:
    current: Any = params
    for part in path.split("."):
        if not isinstance(current, Mapping) or part not in current:
            return _MISSING
        current = current[part]
    return current


def keys_difference(
    expected: Mapping[str, Any], actual: Mapping[str, Any], keys: Sequence[str]
) -> str | None:
    """Compare only ``keys`` (dotted paths into nested mappings), as agentevals' list override
    does: a key both calls lack agrees; one present on one side only differs."""
    for key in keys:
        want, got = _at(expected, key), _at(actual, key)
        if want is _MISSING and got is _MISSING:
            continue
        if want is _MISSING:
            return f"field {key!r}: recorded {got!r}, not expected"
        if got is _MISSING:
            return f"field {key!r}: expected {show(want)}, not recorded"
        found = value_difference(want, got, "exact", key)
        if found:
            return found
    return None


def step_difference(expected: Step, actual: Step, args: ArgsSpec) -> str | None:
    """Why a recorded call fails an expected one under ``args`` (``None``: it satisfies it)."""
    if expected.tool != actual.tool:
        return f"expected tool {expected.tool}, got {actual.tool}"
    mode = mode_for(args, expected.tool)
    if mode == "ignore" or expected.params is None:
        return None
    if actual.params is None:
        return "parameters not recorded"
    if isinstance(mode, str):
        return mapping_difference(expected.params, actual.params, mode)
    if callable(mode):
        try:
            accepted = bool(mode(actual.params, expected.params))
        except Exception as exc:
            return f"args[{expected.tool!r}] raised {type(exc).__name__}: {exc}"
        return None if accepted else f"parameters rejected by args[{expected.tool!r}]"
    return keys_difference(expected.params, actual.params, mode)


def step_matches(expected: Step, actual: Step, args: ArgsSpec) -> bool:
    """Whether a recorded call satisfies an expected one under ``args``."""
    return step_difference(expected, actual, args) is None


def assignment(expected: list[Step], actual: list[Step], args: ArgsSpec) -> dict[int, int]:
    """A maximum matching of expected to recorded calls: recorded index → expected index."""
    fits = [[step_matches(e, a, args) for a in actual] for e in expected]
    owner: dict[int, int] = {}

    def augment(i: int, seen: set[int]) -> bool:
        for j in range(len(actual)):
            if j not in seen and fits[i][j]:
                seen.add(j)
                if j not in owner or augment(owner[j], seen):
                    owner[j] = i
                    return True
        return False

    for i in range(len(expected)):
        augment(i, set())
    return owner


def check_mode(mode: Any) -> None:
    """Refuse an unknown trajectory mode."""
    if mode not in MODES:
        raise UsageError(f"mode must be one of {', '.join(MODES)}; got {mode!r}")


def trajectory_matches(expected: list[Step], actual: list[Step], mode: str, args: ArgsSpec) -> bool:
    """Whether the recorded calls satisfy the expected trajectory."""
    check_mode(mode)
    check_args(args)
    if mode == "strict":
        return len(expected) == len(actual) and all(
            step_matches(e, a, args) for e, a in zip(expected, actual, strict=True)
        )
    matched = len(assignment(expected, actual, args))
    if mode == "unordered":
        return len(expected) == len(actual) == matched
    if mode == "superset":
        return matched == len(expected)
    return matched == len(actual)
