"""The first difference between an expected trajectory and the recorded calls, in one line.

In the manner of pytest-httpserver's ``difference()``: ``strict`` names the first call that
differs and its first differing field (``call 2 (Bash): field 'command': expected 'git status',
got 'git log'``); the other modes name an expected (or, for ``subset``, a recorded) call left
without a partner, and the closest unmatched call on the other side with why it does not fit.
Calls are numbered from 1, as the failure listing numbers them.
"""

from __future__ import annotations

from pytest_harness_audit.readers.trajectory import ArgsSpec, Step, assignment, step_difference


def _closest(step: Step, others: list[tuple[int, Step]], args: ArgsSpec, *, expected: bool) -> str:
    """The closest unmatched call of the same tool on the other side, and why it differs."""
    same_tool = [(index, other) for index, other in others if other.tool == step.tool]
    if not same_tool:
        side = "recorded" if expected else "expected"
        return f"no unmatched {side} call of {step.tool}"

    def reason(other: Step) -> str:
        found = (
            step_difference(step, other, args) if expected else step_difference(other, step, args)
        )
        return found or "matches"

    def distance(item: tuple[int, Step]) -> int:
        left, right = (step, item[1]) if expected else (item[1], step)
        keys = set(left.params or {}) | set(right.params or {})
        return sum(
            1
            for key in keys
            if step_difference(
                Step(left.tool, {key: (left.params or {}).get(key)}),
                Step(right.tool, {key: (right.params or {}).get(key)}),
                args,
            )
        )

    index, other = min(same_tool, key=distance)
    side = "recorded" if expected else "expected"
    return f"closest unmatched {side} call {index + 1} ({other.tool}): {reason(other)}"


def difference(expected: list[Step], actual: list[Step], mode: str, args: ArgsSpec) -> str:
    """One line naming the first call (and field) where ``actual`` fails ``expected``."""
    if mode == "strict":
        for index, (want, got) in enumerate(zip(expected, actual, strict=False)):
            found = step_difference(want, got, args)
            if found:
                return f"call {index + 1} ({got.tool}): {found}"
        if len(actual) > len(expected):
            extra = actual[len(expected)]
            return f"call {len(expected) + 1} ({extra.tool}): recorded, not expected"
        if len(expected) > len(actual):
            missing = expected[len(actual)]
            return f"call {len(actual) + 1}: expected {missing.describe()}, not recorded"
        return "no difference"
    owner = assignment(expected, actual, args)
    matched_expected = set(owner.values())
    free_actual = [(j, step) for j, step in enumerate(actual) if j not in owner]
    free_expected = [(i, step) for i, step in enumerate(expected) if i not in matched_expected]
    if mode in ("unordered", "superset") and free_expected:
        i, want = free_expected[0]
        closest = _closest(want, free_actual, args, expected=True)
        return f"expected call {i + 1} {want.describe()} was not recorded; {closest}"
    if mode in ("unordered", "subset") and free_actual:
        j, got = free_actual[0]
        closest = _closest(got, free_expected, args, expected=False)
        return f"recorded call {j + 1} {got.describe()} was not expected; {closest}"
    return "no difference"
