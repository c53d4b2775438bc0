"""Hypothesis strategies for the hostile-input suites: damaged files, near-miss grammar, JSON."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from hypothesis import strategies as st

PROJECT = Path(__file__).resolve().parents[2]
POLICY_TEXTS = tuple(
    path.read_text(encoding="utf-8")
    for path in sorted((PROJECT / "rules").glob("*.yaml"))
    + sorted((PROJECT / "fixtures" / "scenarios" / "policies").glob("*.yaml"))
)
SCENARIO_TEXTS = tuple(
    path.read_text(encoding="utf-8")
    for path in sorted((PROJECT / "fixtures" / "scenarios").glob("*.yaml"))
)

#: Characters that matter to YAML and JSON, plus a few that matter to nobody.
SYNTAX = "{}[]:,-\"'#&*!|>%@`\\ \t\n?~=0123456789abcdefxyz\u00e9\u2028\ufeff\x00"

any_text = st.text(alphabet=st.characters(blacklist_categories=()), max_size=30)
"""Text with every kind of code point, lone surrogates included (JSON escapes them)."""

json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=20),
    any_text,
)
json_values = st.recursive(
    json_scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=4), st.dictionaries(st.text(max_size=10), children, max_size=4)
    ),
    max_leaves=16,
)
"""Any JSON value."""


@st.composite
def damaged(draw: Any, texts: tuple[str, ...]) -> str:
    """A real file's text with a few random edits: cut, insert, duplicate or swap lines."""
    text: str = draw(st.sampled_from(texts))
    for _ in range(draw(st.integers(1, 4))):
        edit = draw(st.sampled_from(["cut", "insert", "dup-line", "swap-lines", "truncate"]))
        if not text:
            break
        at = draw(st.integers(0, len(text) - 1))
        if edit == "cut":
            text = text[:at] + text[at + draw(st.integers(1, 12)) :]
        elif edit == "insert":
            text = text[:at] + draw(st.text(alphabet=SYNTAX, min_size=1, max_size=6)) + text[at:]
        elif edit == "truncate":
            text = text[:at]
        else:
            lines = text.split("\n")
            i = draw(st.integers(0, len(lines) - 1))
            j = draw(st.integers(0, len(lines) - 1))
            if edit == "dup-line":
                lines.insert(j, lines[i])
            else:
                lines[i], lines[j] = lines[j], lines[i]
            text = "\n".join(lines)
    return text


@st.composite
def reshaped(draw: Any, texts: tuple[str, ...]) -> str:
    """A real file's document with one value anywhere replaced by a random JSON value."""
    document = yaml.safe_load(draw(st.sampled_from(texts)))
    paths: list[tuple[Any, Any]] = []

    def walk(node: Any) -> None:
        items = node.items() if isinstance(node, dict) else enumerate(node)
        for key, value in items:
            paths.append((node, key))
            if isinstance(value, (dict, list)):
                walk(value)

    walk(document)
    if paths:
        node, key = draw(st.sampled_from(paths))
        node[key] = draw(json_values)
    if draw(st.booleans()):
        return json.dumps(document)
    return yaml.safe_dump(document, allow_unicode=True)


policy_texts = st.one_of(
    damaged(POLICY_TEXTS),
    reshaped(POLICY_TEXTS),
    st.text(alphabet=SYNTAX, max_size=80),
    json_values.map(json.dumps),
)
"""Policy file texts: damaged presets, presets with a value of the wrong kind, noise."""

scenario_texts = st.one_of(
    damaged(SCENARIO_TEXTS),
    reshaped(SCENARIO_TEXTS),
    st.text(alphabet=SYNTAX, max_size=80),
    json_values.map(json.dumps),
)
"""Scenario file texts, likewise."""

_NAME_CHARS = "abcxyz019-_A ,:."
names = st.one_of(
    st.text(alphabet=_NAME_CHARS, max_size=40),
    st.sampled_from(["bob", "carol", "dave", "me-1", "a", "ab", "x" * 32, "x" * 33, "a--b", "-ab"]),
)
addresses = st.one_of(
    st.builds(
        lambda prefix, members: prefix + ",".join(members),
        st.sampled_from(
            ["agent:", "group:", "Agent:", "GROUP:", "", "agent", "group:,", " agent:"]
        ),
        st.lists(names, max_size=36),
    ),
    st.text(max_size=60),
    json_values,
)
"""Address inputs: near-misses of the ``agent:``/``group:`` grammar, any text, any JSON value."""

_OPERATION_KEYS = ["gather", "all_gather", "action", "deadline", "requestedSchema", "content"]
_SCHEMA = st.fixed_dictionaries(
    {"type": st.sampled_from(["object", "string", 1])},
    optional={
        "properties": st.dictionaries(
            st.text(max_size=6),
            st.fixed_dictionaries(
                {"type": st.sampled_from(["string", "number", "integer", "boolean", "array", "x"])},
                optional={"enum": json_values, "minimum": json_values, "title": json_values},
            ),
            max_size=3,
        ),
        "required": json_values,
    },
)
operation_objects = st.dictionaries(
    st.sampled_from(_OPERATION_KEYS) | st.text(max_size=8),
    st.one_of(
        json_values,
        _SCHEMA,
        st.sampled_from(["accept", "decline", "cancel", 600, 0, -1, 1e300]),
    ),
    max_size=5,
)
message_texts = st.one_of(
    st.text(alphabet=st.characters(blacklist_categories=()), max_size=200),
    operation_objects.map(json.dumps),
    operation_objects.map(lambda value: " " + json.dumps(value, indent=1) + "\n"),
    json_values.map(json.dumps),
)
"""Message texts: any text (lone surrogates included), operation-shaped JSON, any JSON."""

_TOOL_INPUTS = st.dictionaries(
    st.sampled_from(["file_path", "path", "command", "pattern", "url", "content", "paths"])
    | st.text(max_size=6),
    json_values,
    max_size=4,
)
hook_payloads = st.one_of(
    st.fixed_dictionaries(
        {},
        optional={
            "hook_event_name": st.sampled_from(["PreToolUse", "PostToolUse", "Stop"]) | json_values,
            "session_id": st.text(min_size=1, max_size=90) | json_values,
            "tool_name": st.sampled_from(["Bash", "Read", "Write", "mcp__fs__read_file"])
            | st.text(max_size=20)
            | json_values,
            "tool_input": _TOOL_INPUTS | json_values,
            "cwd": st.sampled_from(["/ws", "/", ".", ""]) | st.text(max_size=20) | json_values,
            "tool_use_id": st.text(max_size=40) | json_values,
            "tool_response": json_values,
        },
    ).map(json.dumps),
    st.text(max_size=60),
    json_values.map(json.dumps),
)
"""Hook payload texts: payload-shaped JSON with values of any kind, any text, any JSON."""
