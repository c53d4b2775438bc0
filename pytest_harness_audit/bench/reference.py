"""The reference engine's figures and decisions, read from files, and the per-call differences.

    python -m pytest_harness_audit.bench --vs-reference DIR [--corpus CORPUS] [--only reference]

``DIR`` (by default ``../shared/bench/reference``) holds what was measured of the reference
TypeScript engine on the shared corpus: ``timings.json`` (its throughput on this machine kind)
and, one line per corpus call, its decisions under its ``safety`` preset and under
``policy-50.json``: ``decisions-safety.jsonl`` / ``decisions-50.jsonl``, each line
``{"i": <0-based line of calls.jsonl>, "decision": …, "rule": <id or null>}``.

Every call this project decides otherwise (decision or rule) is put in one class, tried in this
order, each on evidence from the call itself:

* ``preset rules`` (``safety`` only) — this project's engine, given the reference's own four
  ``safety`` rules (``reference_safety.json``, as the reference text words them), decides the call
  exactly as the reference did: the difference comes from the rules this project's ``safety``
  adds or words more widely (the reference's later preset: memory writes, credential files such
  as ``~/.ssh/config``, ...), not from reading the call otherwise;
* ``MCP categories`` — an ``mcp__…`` tool: the reference puts every MCP tool in ``unknown``;
* ``full-length matching`` — the reference matched a ``command`` cut to 80 characters and
  ``...``; given that cut text, this project decides otherwise than on the whole command (what
  decides lies past the cut);
* ``effects`` — a command this project reads as deleting, destroying or writing files (a
  ``delete:``, ``destroy:``, ``write:`` or ``note:opaque-delete`` target) and does not allow;
* ``shell reading`` — any other command: targets, network use or unreadable text found by the
  shell reading;
* ``segment-aware **/`` — a file target that a ``**/`` glob of the deciding rule matches under
  the reference's reading (``**/`` swallows its slash: ``**/.env`` matches ``prod.env``) and
  not under this project's (``**/`` is whole directories), or the other way round;
* ``unclassified`` — none of these; examples are printed.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_harness_audit.errors import UsageError
from pytest_harness_audit.policy.glob import translate_glob

DEFAULT_DIR = Path("../shared/bench/reference")
DECISION_FILES = {"safety": "decisions-safety.jsonl", "policy-50": "decisions-50.jsonl"}
REFERENCE_SAFETY = Path(__file__).with_name("reference_safety.json")
"""The reference's measured ``safety`` preset: its four rules, in this project's policy format."""
CLASSES = (
    "preset rules",
    "MCP categories",
    "full-length matching",
    "effects",
    "shell reading",
    "segment-aware **/",
    "unclassified",
)
_EFFECT_PREFIXES = ("delete:", "destroy:", "write:", "note:opaque-delete")
_COMMAND_LIMIT = 80
_EXAMPLES = 5


@dataclass(frozen=True)
class Timings:
    """The reference's throughput: decisions/s per policy, append/s and verify/s."""

    decisions_per_s: Mapping[str, float]
    append_per_s: float | None
    verify_per_s: float | None
    engine: str
    source: Path

    def decisions(self, policy: str) -> float | None:
        """Decisions/s under ``policy`` (``safety``, ``policy-50``), when measured."""
        return self.decisions_per_s.get(policy)


def _number(data: Mapping[str, Any], key: str, source: Path) -> float | None:
    value = data.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        raise UsageError(f"{source}: field {key!r} must be a positive number, got {value!r}")
    return float(value)


def load_timings(directory: Path) -> Timings | None:
    """Read ``timings.json`` in ``directory``; ``None`` when the file is absent."""
    source = directory / "timings.json"
    try:
        data = json.loads(source.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise UsageError(f"{source}: not a JSON file ({exc})") from None
    if not isinstance(data, dict):
        raise UsageError(f"{source}: must hold a JSON object")
    rates = data.get("decisions_per_s", {})
    if not isinstance(rates, dict):
        raise UsageError(f"{source}: field 'decisions_per_s' must be an object")
    decisions = {str(name): _number(rates, name, source) for name in rates}
    return Timings(
        decisions_per_s={name: rate for name, rate in decisions.items() if rate is not None},
        append_per_s=_number(data, "append_records_per_s", source),
        verify_per_s=_number(data, "verify_records_per_s", source),
        engine=str(data.get("engine", "reference engine")),
        source=source,
    )


def load_decisions(path: Path) -> dict[int, tuple[str, str | None]]:
    """``{i: (decision, rule)}`` of a reference decisions file; one clear error per bad line."""
    decisions: dict[int, tuple[str, str | None]] = {}
    try:
        handle = path.open(encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"{path}: cannot read ({exc.strerror})") from None
    with handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                item = json.loads(line)
            except ValueError:
                raise UsageError(f"{path}:{number}: not a JSON line") from None
            index, decision, rule = (
                item.get("i") if isinstance(item, dict) else None,
                item.get("decision") if isinstance(item, dict) else None,
                item.get("rule") if isinstance(item, dict) else None,
            )
            if isinstance(index, bool) or not isinstance(index, int) or index < 0:
                raise UsageError(f"{path}:{number}: field 'i' must be a line number, got {index!r}")
            if decision not in ("allow", "deny", "warn"):
                raise UsageError(f"{path}:{number}: field 'decision' is {decision!r}")
            if rule is not None and not isinstance(rule, str):
                raise UsageError(f"{path}:{number}: field 'rule' must be a string or null")
            decisions[index] = (decision, rule)
    return decisions


def reference_glob(pattern: str) -> re.Pattern[str]:
    """The reference's ``globToRegex``: ``**`` is ``.*`` and swallows a following ``/``."""
    return re.compile(translate_glob(pattern, whole_directories=False).regex)


def segment_glob(pattern: str) -> re.Pattern[str]:
    """This project's reading: ``**/`` is zero or more whole directories."""
    return re.compile(translate_glob(pattern).regex)


def _globs_of(policy: Any, rule_id: str | None) -> tuple[str, ...]:
    for rule in getattr(policy, "rules", ()):
        if rule.id == rule_id and not rule.match.target_patterns_are_regex:
            return tuple(rule.match.target_patterns or ())
    return ()


def _file_targets(params: Mapping[str, Any]) -> list[str]:
    keys = ("file_path", "path", "pattern", "url")
    return [value for key in keys if isinstance(value := params.get(key), str)]


def _segment_aware(policy: Any, rules: Iterable[str | None], targets: list[str]) -> bool:
    for rule_id in rules:
        for pattern in _globs_of(policy, rule_id):
            if "**/" not in pattern:
                continue
            old, new = reference_glob(pattern), segment_glob(pattern)
            if any(bool(old.fullmatch(t)) != bool(new.fullmatch(t)) for t in targets):
                return True
    return False


Evaluate = Callable[[str, Mapping[str, Any]], Any]


def classify(
    policy: Any,
    tool: str,
    params: Mapping[str, Any],
    ours: Any,
    reference: tuple[str, str | None],
    reference_rules: Any = None,
) -> str:
    """The class of one difference (see the module docstring).

    ``reference_rules`` is the reference's own preset in this project's engine, when the policy
    compared is a preset of this project's that differs from it (``safety``).
    """
    if reference_rules is not None:
        again = reference_rules.evaluate(tool, params)
        if (again.decision, again.rule_id) == reference:
            return "preset rules"
    if tool.startswith("mcp__"):
        return "MCP categories"
    command = params.get("command")
    if isinstance(command, str) and not _file_targets(params):
        if len(command) > _COMMAND_LIMIT:
            cut = {**params, "command": command[:_COMMAND_LIMIT] + "..."}
            again = policy.evaluate(tool, cut)
            if (again.decision, again.rule_id) != (ours.decision, ours.rule_id):
                return "full-length matching"
        targets = ours.targets or ()
        if ours.decision != "allow" and any(t.startswith(_EFFECT_PREFIXES) for t in targets):
            return "effects"
        return "shell reading"
    if _segment_aware(policy, (reference[1], ours.rule_id), _file_targets(params)):
        return "segment-aware **/"
    return "unclassified"


@dataclass
class Comparison:
    """The differences of one policy against the reference."""

    policy: str
    calls: int
    compared: int = 0
    counts: Counter[str] = field(default_factory=Counter)
    examples: dict[str, list[str]] = field(default_factory=dict)

    @property
    def differences(self) -> int:
        """Calls decided otherwise (decision or rule)."""
        return sum(self.counts.values())


def compare(
    name: str,
    policy: Any,
    calls: Sequence[tuple[str, dict[str, Any]]],
    reference: Mapping[int, tuple[str, str | None]],
    reference_rules: Any = None,
) -> Comparison:
    """Evaluate every call afresh and class each difference from the reference's decision."""
    result = Comparison(name, len(calls))
    for index, (tool, params) in enumerate(calls):
        expected = reference.get(index)
        if expected is None:
            continue
        result.compared += 1
        ours = policy.evaluate(tool, params)
        if (ours.decision, ours.rule_id) == expected:
            continue
        kind = classify(policy, tool, params, ours, expected, reference_rules)
        result.counts[kind] += 1
        shown = result.examples.setdefault(kind, [])
        if len(shown) < _EXAMPLES:
            text = json.dumps(params, ensure_ascii=False)
            text = text if len(text) <= 100 else text[:99] + "…"
            shown.append(
                f"#{index} {tool} {text}: reference {expected[0]}/{expected[1] or 'default'}, "
                f"here {ours.decision}/{ours.rule_id or 'default'}"
            )
    return result


def format_comparison(result: Comparison, *, examples_of: Iterable[str] = ("unclassified",)) -> str:
    """The difference table of one policy, with examples of the classes asked for."""
    lines = [
        f"decisions against the reference, {result.policy}: {result.compared:,} of "
        f"{result.calls:,} calls compared, {result.differences:,} differ"
    ]
    for kind in CLASSES:
        lines.append(f"  {kind:<22} {result.counts.get(kind, 0):>7,}")
    for kind in examples_of:
        for example in result.examples.get(kind, []):
            lines.append(f"    {kind}: {example}")
    return "\n".join(lines)
