"""Trajectory matching in the vocabulary agentevals users know.

``mode``: ``strict`` (the same calls in the same order), ``unordered`` (the same calls in any
order), ``subset`` (every recorded call is among the expected ones), ``superset`` (every expected
call was recorded). ``args``: ``exact`` (parameters equal), ``ignore`` (tool names only),
``subset`` (the expected parameters are a subset of the recorded ones).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pytest_harness_audit.errors import UsageError

MODES = ("strict", "unordered", "subset", "superset")
ARG_MODES = ("exact", "ignore", "subset")


@dataclass(frozen=True)
class Step:
    """One expected or recorded call: the tool and its parameters (``None``: not known)."""

    tool: str
    params: Mapping[str, Any] | None

    def describe(self) -> str:
        """``Tool(key=value, …)``."""
        if not self.params:
            return f"{self.tool}()"
        inner = ", ".join(f"{k}={v!r}" for k, v in self.params.items())
        return f"{self.tool}({inner})"


def expected_steps(expected: Sequence[Any]) -> list[Step]:
    """Normalise ``"Tool"``, ``("Tool", {…})`` or ``{"tool": …, "params"|"args": {…}}``."""
    steps = []
    for index, item in enumerate(expected):
        if isinstance(item, str):
            steps.append(Step(item, None))
        elif (
            isinstance(item, tuple)
            and len(item) == 2
            and isinstance(item[0], str)
            and isinstance(item[1], Mapping)
        ):
            steps.append(Step(item[0], item[1]))
        elif isinstance(item, Mapping) and isinstance(item.get("tool"), str):
            params = item.get("params", item.get("args"))
            if params is not None and not isinstance(params, Mapping):
                raise UsageError(f"expected[{index}]: params must be a mapping, got {params!r}")
            steps.append(Step(item["tool"], params))
        else:
            raise UsageError(
                f"expected[{index}]: use a tool name, (tool, params) or "
                f"{{'tool': …, 'params': …}}, got {item!r}"
            )
    return steps


def step_matches(expected: Step, actual: Step, args: str) -> bool:
    """Whether a recorded call satisfies an expected one under ``args``."""
    if expected.tool != actual.tool:
        return False
    if args == "ignore" or expected.params is None:
        return True
    if actual.params is None:
        return False
    if args == "exact":
        return dict(actual.params) == dict(expected.params)
    return all(
        key in actual.params and actual.params[key] == value
        for key, value in expected.params.items()
    )


def _assign(left: list[Step], right: list[Step], args: str, *, expected_left: bool) -> int:
    """Size of a maximum matching between ``left`` and ``right`` (bipartite, augmenting)."""
    owner: dict[int, int] = {}

    def fits(i: int, j: int) -> bool:
        return (
            step_matches(left[i], right[j], args)
            if expected_left
            else step_matches(right[j], left[i], args)
        )

    def augment(i: int, seen: set[int]) -> bool:
        for j in range(len(right)):
            if j not in seen and fits(i, j):
                seen.add(j)
                if j not in owner or augment(owner[j], seen):
                    owner[j] = i
                    return True
        return False

    return sum(1 for i in range(len(left)) if augment(i, set()))


def trajectory_matches(expected: list[Step], actual: list[Step], mode: str, args: str) -> bool:
    """Whether the recorded calls satisfy the expected trajectory."""
    if mode not in MODES:
        raise UsageError(f"mode must be one of {', '.join(MODES)}; got {mode!r}")
    if args not in ARG_MODES:
        raise UsageError(f"args must be one of {', '.join(ARG_MODES)}; got {args!r}")
    if mode == "strict":
        return len(expected) == len(actual) and all(
            step_matches(e, a, args) for e, a in zip(expected, actual, strict=True)
        )
    if mode == "unordered":
        return len(expected) == len(actual) and _assign(
            expected, actual, args, expected_left=True
        ) == len(expected)
    if mode == "superset":
        return _assign(expected, actual, args, expected_left=True) == len(expected)
    return _assign(actual, expected, args, expected_left=False) == len(actual)
