"""Policy data model and its validation (DESIGN §4 "Policy").

Validation turns any mistake into one :class:`~pytest_harness_audit.errors.PolicyError` naming the
source, the line where known, the rule id and the field.

Besides ``defaultPolicy``, ``enforce`` and ``rules``, a policy may say ``toolCategories`` (tool
name globs → categories), ``commandTools`` (a list of tool names or globs whose
``command``/``cmd`` parameter is a shell command: such tools are category ``command`` and their
command is read like ``Bash``'s, in addition to the built-in ``mcp__*__run``,
``mcp__*__execute_command``, ``mcp__*__shell``, ``mcp__*__exec``, ``mcp__*__bash`` …),
``immune``, ``firewall``, ``auditLevel``, ``preset``, ``name`` and ``description``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from pytest_harness_audit.errors import PolicyError
from pytest_harness_audit.policy.categories import KNOWN_CATEGORIES
from pytest_harness_audit.policy.patterns import PatternSyntaxError, check_regex

DECISIONS: Final = ("allow", "deny", "warn")
#: What a rule may decide: the defaults' decisions and ``ask`` (a human approves the call first).
RULE_DECISIONS: Final = (*DECISIONS, "ask")
#: Other spellings of a rule's decision, read as the decision they name.
DECISION_ALIASES: Final = {"require_approval": "ask"}
POLICY_KEYS: Final = frozenset(
    {
        "defaultPolicy",
        "enforce",
        "rules",
        "preset",
        "name",
        "description",
        "toolCategories",
        "commandTools",
        "immune",
        "firewall",
        "auditLevel",
        "showR6Status",
        "storagePath",
        "protect",
    }
)
#: The keys of the reference plugin's section ``{"plugins": {"web4-governance": {…}}}``.
PLUGIN_KEYS: Final = frozenset({"policy", "auditLevel", "showR6Status", "storagePath"})
#: The plugin section's settings that travel into the policy document it holds.
_PLUGIN_SETTINGS: Final = ("auditLevel", "showR6Status", "storagePath")
RULE_KEYS: Final = frozenset({"id", "name", "priority", "decision", "reason", "match"})
MATCH_KEYS: Final = frozenset(
    {"tools", "categories", "targetPatterns", "targetPatternsAreRegex", "rateLimit", "effects"}
)
#: What ``match.effects`` can name: what inspection saw a call do after it ran.
EFFECT_NAMES: Final = (
    "protected_file_changed",
    "secret_exposure",
    "files_deleted",
    "many_files_deleted",
    "directory_deleted",
    "memory_write",
    "startup_write",
    "history_destroyed",
    "credential_read",
    "credential_object_read",
    "uncommitted_discarded",
)
RATE_LIMIT_KEYS: Final = frozenset({"maxCount", "windowMs"})
AUDIT_LEVELS: Final = ("minimal", "standard", "verbose")

#: Looks up the line of a mapping from the parsed document (``None`` when unknown).
LineOf = Callable[[object], "int | None"]


def _no_line(_: object) -> int | None:
    return None


@dataclass(frozen=True)
class RateLimit:
    """``match.rateLimit``: the rule fires once ``max_count`` earlier matches fall in the window."""

    max_count: int
    window_ms: float


@dataclass(frozen=True)
class Match:
    """Match criteria; AND across criteria, OR within each list; ``None`` = not given."""

    tools: tuple[str, ...] | None = None
    categories: tuple[str, ...] | None = None
    target_patterns: tuple[str, ...] | None = None
    target_patterns_are_regex: bool = False
    rate_limit: RateLimit | None = None
    #: Effects after the call ran; a rule with ``effects`` judges calls after they ran.
    effects: tuple[str, ...] | None = None

    def to_dict(self) -> dict[str, Any]:
        """The criteria in the file format (camelCase keys)."""
        out: dict[str, Any] = {}
        if self.effects is not None:
            out["effects"] = list(self.effects)
        if self.tools is not None:
            out["tools"] = list(self.tools)
        if self.categories is not None:
            out["categories"] = list(self.categories)
        if self.target_patterns is not None:
            out["targetPatterns"] = list(self.target_patterns)
            if self.target_patterns_are_regex:
                out["targetPatternsAreRegex"] = True
        if self.rate_limit is not None:
            out["rateLimit"] = {
                "maxCount": self.rate_limit.max_count,
                "windowMs": self.rate_limit.window_ms,
            }
        return out


@dataclass(frozen=True)
class Rule:
    """One policy rule."""

    id: str
    name: str
    priority: int
    decision: str
    match: Match
    reason: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The rule in the file format."""
        out: dict[str, Any] = {
            "id": self.id,
            "name": self.name,
            "priority": self.priority,
            "decision": self.decision,
        }
        if self.reason is not None:
            out["reason"] = self.reason
        out["match"] = self.match.to_dict()
        return out


@dataclass(frozen=True)
class PolicySpec:
    """A validated policy document (before compilation)."""

    default_policy: str = "allow"
    enforce: bool = True
    rules: tuple[Rule, ...] = ()
    preset: str | None = None
    name: str | None = None
    description: str | None = None
    tool_categories: tuple[tuple[str, str], ...] = ()
    command_tools: tuple[str, ...] = ()
    immune: Mapping[str, Any] | None = None
    firewall: Mapping[str, Any] | None = None
    audit_level: str = "standard"
    extra_categories: frozenset[str] = field(default_factory=frozenset)
    protect: tuple[str, ...] = ()
    #: ``showR6Status``: print the chain status line (records, validity, head) in door output.
    show_r6_status: bool = False
    #: ``storagePath`` as written (``~`` not yet expanded); None when not given.
    storage_path: str | None = None


class _Context:
    def __init__(self, source: str | None, line_of: LineOf) -> None:
        self.source = source
        self.line_of = line_of

    def error(
        self,
        message: str,
        node: object = None,
        *,
        rule_id: str | None = None,
        field: str | None = None,
    ) -> PolicyError:
        line = self.line_of(node) if node is not None else None
        return PolicyError(message, source=self.source, line=line, rule_id=rule_id, field=field)


def _check_keys(
    ctx: _Context,
    data: Mapping[str, Any],
    allowed: frozenset[str],
    where: str,
    rule_id: str | None = None,
) -> None:
    for key in data:
        if key not in allowed:
            raise ctx.error(
                f"unknown key {key!r} in {where} (allowed: {', '.join(sorted(allowed))})",
                data,
                rule_id=rule_id,
                field=str(key),
            )


def _string_list(
    ctx: _Context, value: Any, node: object, rule_id: str | None, field: str
) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ctx.error(
            f"must be a list of strings, got {value!r}", node, rule_id=rule_id, field=field
        )
    return tuple(value)


def _parse_match(ctx: _Context, data: Any, rule_id: str, categories: frozenset[str]) -> Match:
    if not isinstance(data, Mapping):
        raise ctx.error(f"must be a mapping, got {data!r}", None, rule_id=rule_id, field="match")
    _check_keys(ctx, data, MATCH_KEYS, "match", rule_id)
    tools = categories_value = patterns = None
    if "tools" in data:
        tools = _string_list(ctx, data["tools"], data, rule_id, "match.tools")
    if "categories" in data:
        categories_value = _string_list(ctx, data["categories"], data, rule_id, "match.categories")
        for category in categories_value:
            if category not in categories:
                raise ctx.error(
                    f"unknown category {category!r} (known: {', '.join(sorted(categories))})",
                    data,
                    rule_id=rule_id,
                    field="match.categories",
                )
    if "targetPatterns" in data:
        patterns = _string_list(ctx, data["targetPatterns"], data, rule_id, "match.targetPatterns")
    is_regex = data.get("targetPatternsAreRegex", False)
    if not isinstance(is_regex, bool):
        raise ctx.error(
            f"must be true or false, got {is_regex!r}",
            data,
            rule_id=rule_id,
            field="match.targetPatternsAreRegex",
        )
    if is_regex and patterns is not None:
        for pattern in patterns:
            try:
                check_regex(pattern)
            except PatternSyntaxError as exc:
                raise ctx.error(
                    str(exc), data, rule_id=rule_id, field="match.targetPatterns"
                ) from None
    rate_limit = None
    if "rateLimit" in data:
        rate = data["rateLimit"]
        if not isinstance(rate, Mapping):
            raise ctx.error(
                f"must be a mapping, got {rate!r}", data, rule_id=rule_id, field="match.rateLimit"
            )
        _check_keys(ctx, rate, RATE_LIMIT_KEYS, "match.rateLimit", rule_id)
        max_count, window = rate.get("maxCount"), rate.get("windowMs")
        if type(max_count) is not int or max_count < 1:
            raise ctx.error(
                f"must be a positive integer, got {max_count!r}",
                rate,
                rule_id=rule_id,
                field="match.rateLimit.maxCount",
            )
        if isinstance(window, bool) or not isinstance(window, (int, float)) or window <= 0:
            raise ctx.error(
                f"must be a positive number, got {window!r}",
                rate,
                rule_id=rule_id,
                field="match.rateLimit.windowMs",
            )
        rate_limit = RateLimit(max_count, float(window))
    effects = _parse_effects(ctx, data, rule_id, patterns is not None or rate_limit is not None)
    return Match(tools, categories_value, patterns, is_regex, rate_limit, effects)


def _parse_effects(
    ctx: _Context, data: Mapping[str, Any], rule_id: str, has_call_criteria: bool
) -> tuple[str, ...] | None:
    if "effects" not in data:
        return None
    effects = _string_list(ctx, data["effects"], data, rule_id, "match.effects")
    for effect in effects:
        if effect not in EFFECT_NAMES:
            raise ctx.error(
                f"unknown effect {effect!r} (known: {', '.join(EFFECT_NAMES)})",
                data,
                rule_id=rule_id,
                field="match.effects",
            )
    if not effects:
        raise ctx.error(
            "must name at least one effect", data, rule_id=rule_id, field="match.effects"
        )
    if has_call_criteria:
        raise ctx.error(
            "effects combine only with tools and categories",
            data,
            rule_id=rule_id,
            field="match.effects",
        )
    return effects


def _parse_rule(ctx: _Context, data: Any, index: int, categories: frozenset[str]) -> Rule:
    if not isinstance(data, Mapping):
        raise ctx.error(
            f"rule #{index + 1} must be a mapping, got {data!r}", None, field=f"rules[{index}]"
        )
    rule_id = data.get("id")
    if not isinstance(rule_id, str) or not rule_id:
        raise ctx.error(
            f"rule #{index + 1} needs a non-empty string id, got {rule_id!r}", data, field="id"
        )
    _check_keys(ctx, data, RULE_KEYS, "rule", rule_id)
    for key in ("name", "priority", "decision", "match"):
        if key not in data:
            raise ctx.error("missing required field", data, rule_id=rule_id, field=key)
    name, priority, decision = data["name"], data["priority"], data["decision"]
    if not isinstance(name, str):
        raise ctx.error(f"must be a string, got {name!r}", data, rule_id=rule_id, field="name")
    if type(priority) is not int:
        raise ctx.error(
            f"must be an integer, got {priority!r}", data, rule_id=rule_id, field="priority"
        )
    decision = DECISION_ALIASES.get(decision, decision) if isinstance(decision, str) else decision
    if decision not in RULE_DECISIONS:
        raise ctx.error(
            f"must be one of allow, deny, warn, ask (alias require_approval); got {decision!r}",
            data,
            rule_id=rule_id,
            field="decision",
        )
    reason = data.get("reason")
    if reason is not None and not isinstance(reason, str):
        raise ctx.error(f"must be a string, got {reason!r}", data, rule_id=rule_id, field="reason")
    match = _parse_match(ctx, data["match"], rule_id, categories)
    return Rule(rule_id, name, priority, decision, match, reason)


def unwrap_reference_config(
    data: Any, *, source: str | None = None, line_of: LineOf = _no_line
) -> Any:
    """Return the policy inside ``{"plugins": {"web4-governance": {"policy": …}}}``, else data.

    The section is validated like a policy: a key other than ``policy``, ``auditLevel``,
    ``showR6Status`` and ``storagePath``, or a value of the wrong type, is a
    :class:`PolicyError` naming the field. Its settings travel into the returned policy (a key
    the policy itself gives wins).
    """
    if not (isinstance(data, Mapping) and "plugins" in data):
        return data
    plugin = data["plugins"]
    if not (isinstance(plugin, Mapping) and isinstance(plugin.get("web4-governance"), Mapping)):
        return data
    section = plugin["web4-governance"]
    ctx = _Context(source, line_of)
    _check_keys(ctx, section, PLUGIN_KEYS, "the web4-governance plugin section")
    check_plugin_settings(ctx, section)
    inner = section.get("policy")
    if inner is not None and not isinstance(inner, Mapping):
        return inner  # validation reports "a policy must be a mapping"
    policy = dict(inner or {})
    for key in _PLUGIN_SETTINGS:
        if key in section and key not in policy:
            policy[key] = section[key]
    return policy


def check_plugin_settings(ctx: _Context, data: Mapping[str, Any]) -> None:
    """Check ``auditLevel``, ``showR6Status`` and ``storagePath`` where ``data`` gives them."""
    audit_level = data.get("auditLevel", "standard")
    if audit_level not in AUDIT_LEVELS:
        raise ctx.error(
            f"must be one of {', '.join(AUDIT_LEVELS)}; got {audit_level!r}",
            data,
            field="auditLevel",
        )
    show = data.get("showR6Status", False)
    if not isinstance(show, bool):
        raise ctx.error(f"must be true or false, got {show!r}", data, field="showR6Status")
    storage = data.get("storagePath")
    if storage is not None and (not isinstance(storage, str) or not storage.strip()):
        raise ctx.error(
            f"must be a non-empty directory path, got {storage!r}", data, field="storagePath"
        )


def parse_policy(data: Any, *, source: str | None = None, line_of: LineOf = _no_line) -> PolicySpec:
    """Validate a policy document (bare or the reference plugin's config) into a spec."""
    ctx = _Context(source, line_of)
    data = unwrap_reference_config(data, source=source, line_of=line_of)
    if data is None:
        data = {}
    if not isinstance(data, Mapping):
        raise ctx.error(f"a policy must be a mapping, got {type(data).__name__}")
    _check_keys(ctx, data, POLICY_KEYS, "policy")
    default = data.get("defaultPolicy", "allow")
    if default not in DECISIONS:
        raise ctx.error(
            f"must be one of allow, deny, warn; got {default!r}", data, field="defaultPolicy"
        )
    enforce = data.get("enforce", True)
    if not isinstance(enforce, bool):
        raise ctx.error(f"must be true or false, got {enforce!r}", data, field="enforce")
    check_plugin_settings(ctx, data)
    audit_level = data.get("auditLevel", "standard")
    tool_categories_raw = data.get("toolCategories", {}) or {}
    if not isinstance(tool_categories_raw, Mapping) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in tool_categories_raw.items()
    ):
        raise ctx.error(
            f"must map tool-name globs to category names, got {tool_categories_raw!r}",
            data,
            field="toolCategories",
        )
    tool_categories = tuple(tool_categories_raw.items())
    command_tools_raw = data.get("commandTools", []) or []
    if not isinstance(command_tools_raw, list) or not all(
        isinstance(v, str) and v for v in command_tools_raw
    ):
        raise ctx.error(
            f"must be a list of tool names or globs, got {command_tools_raw!r}",
            data,
            field="commandTools",
        )
    extra = frozenset(v for _, v in tool_categories) - KNOWN_CATEGORIES
    categories = KNOWN_CATEGORIES | extra
    rules_raw = data.get("rules", []) or []
    if not isinstance(rules_raw, Sequence) or isinstance(rules_raw, str):
        raise ctx.error(f"must be a list of rules, got {rules_raw!r}", data, field="rules")
    rules = tuple(_parse_rule(ctx, r, i, categories) for i, r in enumerate(rules_raw))
    seen: set[str] = set()
    for rule_data, rule in zip(rules_raw, rules, strict=True):
        if rule.id in seen:
            raise ctx.error("duplicate rule id", rule_data, rule_id=rule.id, field="id")
        seen.add(rule.id)
    for key in ("preset", "name", "description"):
        if key in data and not isinstance(data[key], str):
            raise ctx.error(f"must be a string, got {data[key]!r}", data, field=key)
    for key in ("immune", "firewall"):
        if key in data and data[key] is not None and not isinstance(data[key], Mapping):
            raise ctx.error(f"must be a mapping, got {data[key]!r}", data, field=key)
    protect = data.get("protect", []) or []
    if not isinstance(protect, list) or not all(isinstance(v, str) and v for v in protect):
        raise ctx.error(f"must be a list of file globs, got {protect!r}", data, field="protect")
    return PolicySpec(
        default_policy=default,
        enforce=enforce,
        rules=rules,
        preset=data.get("preset"),
        name=data.get("name"),
        description=data.get("description"),
        tool_categories=tool_categories,
        command_tools=tuple(command_tools_raw),
        immune=data.get("immune"),
        firewall=data.get("firewall"),
        audit_level=audit_level,
        extra_categories=extra,
        protect=tuple(protect),
        show_r6_status=bool(data.get("showR6Status", False)),
        storage_path=data.get("storagePath"),
    )
