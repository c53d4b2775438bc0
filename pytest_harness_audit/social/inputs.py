"""The exact send input, `{to, text, collective?}` or `{to, collectiveResponse}`, decoded.

Decoding checks the outline only (keys, types, the deadline range, the form's outer shape); the
address grammar, the MCP form-mode grammar of ``requestedSchema`` and the content limit are
checked by the send itself, so each failure keeps its own typed reason. Every problem is reported
as ``<path>: <issue>``, and extra keys are refused everywhere.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal, TypeAlias

from pytest_harness_audit.social.errors import SendInputError
from pytest_harness_audit.social.message_json import lone_surrogate_index

#: The longest deadline a collecting operation may state: 30 days, in seconds.
MAXIMUM_DEADLINE_SECONDS = 2_592_000

AnswerValue: TypeAlias = "str | int | float | bool | tuple[str, ...]"
Operation: TypeAlias = Literal["multicast", "gather", "all_gather", "response"]


@dataclass(frozen=True)
class Collecting:
    """A gather or all_gather: the text is a question; answers follow ``requested_schema``."""

    op: Literal["gather", "all_gather"]
    deadline: int
    requested_schema: Mapping[str, object]

    def to_json(self) -> dict[str, object]:
        """``{op, deadline, requestedSchema}``."""
        return {"op": self.op, "deadline": self.deadline, "requestedSchema": self.requested_schema}


@dataclass(frozen=True)
class TextSend:
    """``{to, text, collective?}``: a multicast when ``collective`` is None or multicast."""

    to: str
    text: str
    collective: Collecting | None = None

    @property
    def operation(self) -> Operation:
        """``multicast``, ``gather`` or ``all_gather``."""
        return "multicast" if self.collective is None else self.collective.op

    def to_json(self) -> dict[str, object]:
        """The wire form; an explicit ``{op: "multicast"}`` reads back as an omitted one."""
        data: dict[str, object] = {"to": self.to, "text": self.text}
        if self.collective is not None:
            data["collective"] = self.collective.to_json()
        return data


@dataclass(frozen=True)
class Accept:
    """An ``accept`` answer with content, one field per requested property."""

    content: Mapping[str, AnswerValue]

    @property
    def action(self) -> Literal["accept"]:
        """``accept``."""
        return "accept"

    def to_json(self) -> dict[str, object]:
        """``{action: "accept", content}``."""
        content = {
            key: list(value) if isinstance(value, tuple) else value
            for key, value in self.content.items()
        }
        return {"action": "accept", "content": content}


@dataclass(frozen=True)
class Decline:
    """A ``decline`` answer."""

    @property
    def action(self) -> Literal["decline"]:
        """``decline``."""
        return "decline"

    def to_json(self) -> dict[str, object]:
        """``{action: "decline"}``."""
        return {"action": "decline"}


CollectiveResponse: TypeAlias = "Accept | Decline"


@dataclass(frozen=True)
class ResponseSend:
    """``{to, collectiveResponse}``: an answer to the one request open in ``to``'s conversation."""

    to: str
    response: Accept | Decline

    @property
    def operation(self) -> Operation:
        """``response``."""
        return "response"

    def to_json(self) -> dict[str, object]:
        """``{to, collectiveResponse}``."""
        return {"to": self.to, "collectiveResponse": self.response.to_json()}


SendInput: TypeAlias = "TextSend | ResponseSend"


class IssueList:
    """Collects ``<path>: <issue>`` lines while a value is decoded."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def add(self, path: str, message: str) -> None:
        """Record one issue at ``path`` (the empty path means the value itself)."""
        self.lines.append(f"{path}: {message}" if path else message)

    def __bool__(self) -> bool:
        return bool(self.lines)

    def detail(self) -> str:
        """Every issue, joined by ``; ``."""
        return "; ".join(self.lines)


def join_path(base: str, key: str | int) -> str:
    """``base.key`` (or ``key`` at the root)."""
    return f"{base}.{key}" if base else str(key)


def actual_text(value: object) -> str:
    """How an issue shows the value it got (JSON where possible)."""
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError):
        return repr(value)


def literal_union(*values: str) -> str:
    """``"a" | "b"``."""
    return " | ".join(json.dumps(value) for value in values)


def is_number(value: object) -> bool:
    """Whether ``value`` is a JSON number (``bool`` is not)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def exact_object(
    value: object,
    path: str,
    issues: IssueList,
    *,
    required: tuple[str, ...],
    optional: tuple[str, ...] = (),
) -> Mapping[str, object] | None:
    """Check ``value`` is an object with every required key and no other than the optional ones.

    Returns the object (possibly with issues recorded) or None when it is not an object.
    """
    if not isinstance(value, Mapping):
        issues.add(path, f"Expected object, actual {actual_text(value)}")
        return None
    allowed = required + optional
    for key in required:
        if key not in value:
            issues.add(join_path(path, key), "is missing")
    for key in value:
        if key not in allowed:
            issues.add(
                join_path(path, str(key)), f"is unexpected, expected: {literal_union(*allowed)}"
            )
    return value


def decode_string(value: object, path: str, issues: IssueList) -> str | None:
    """A JSON string, or None with an issue."""
    if isinstance(value, str):
        return value
    issues.add(path, f"Expected string, actual {actual_text(value)}")
    return None


def decode_well_formed(value: object, path: str, issues: IssueList) -> str | None:
    """A JSON string that is well-formed Unicode (no lone surrogate)."""
    text = decode_string(value, path, issues)
    if text is None:
        return None
    index = lone_surrogate_index(text)
    if index is not None:
        issues.add(path, f"is not well-formed Unicode (a lone surrogate at index {index})")
        return None
    return text


def decode_deadline(value: object, path: str, issues: IssueList) -> int | None:
    """Whole seconds from 1 to :data:`MAXIMUM_DEADLINE_SECONDS`."""
    if not is_number(value):
        issues.add(path, f"Expected number, actual {actual_text(value)}")
        return None
    assert isinstance(value, (int, float))
    if not math.isfinite(value) or value != math.floor(value):
        issues.add(path, f"Expected an integer, actual {actual_text(value)}")
        return None
    if not 1 <= value <= MAXIMUM_DEADLINE_SECONDS:
        issues.add(
            path,
            f"Expected a number between 1 and {MAXIMUM_DEADLINE_SECONDS}, actual "
            f"{actual_text(value)}",
        )
        return None
    return int(value)


def decode_requested_schema(
    value: object, path: str, issues: IssueList
) -> Mapping[str, object] | None:
    """The outline of a form-mode schema: ``{$schema?, type: "object", properties, required?}``.

    Each property must be an object; its form-mode grammar is checked later by the send.
    """
    before = len(issues.lines)
    schema = exact_object(
        value, path, issues, required=("type", "properties"), optional=("$schema", "required")
    )
    if schema is None:
        return None
    if "$schema" in schema:
        decode_string(schema["$schema"], join_path(path, "$schema"), issues)
    if "type" in schema and schema["type"] != "object":
        issues.add(
            join_path(path, "type"), f'Expected "object", actual {actual_text(schema["type"])}'
        )
    if "properties" in schema:
        properties = schema["properties"]
        properties_path = join_path(path, "properties")
        if not isinstance(properties, Mapping):
            issues.add(properties_path, f"Expected object, actual {actual_text(properties)}")
        else:
            for name, definition in properties.items():
                if not isinstance(definition, Mapping):
                    issues.add(
                        join_path(properties_path, str(name)),
                        f"Expected object, actual {actual_text(definition)}",
                    )
    if "required" in schema:
        _decode_string_list(schema["required"], join_path(path, "required"), issues)
    return schema if len(issues.lines) == before else None


def _decode_string_list(value: object, path: str, issues: IssueList) -> tuple[str, ...] | None:
    if not isinstance(value, list):
        issues.add(path, f"Expected array, actual {actual_text(value)}")
        return None
    ok = True
    for index, item in enumerate(value):
        if decode_string(item, join_path(path, index), issues) is None:
            ok = False
    return tuple(value) if ok else None


def decode_answer_content(
    value: object, path: str, issues: IssueList
) -> Mapping[str, AnswerValue] | None:
    """An answer: field name → string | finite number | boolean | array of strings."""
    if not isinstance(value, Mapping):
        issues.add(path, f"Expected object, actual {actual_text(value)}")
        return None
    content: dict[str, AnswerValue] = {}
    ok = True
    for key, item in value.items():
        field_path = join_path(path, str(key))
        if isinstance(item, (str, bool)) or (is_number(item) and math.isfinite(item)):
            content[str(key)] = item
        elif isinstance(item, list) and all(isinstance(entry, str) for entry in item):
            content[str(key)] = tuple(item)
        else:
            ok = False
            issues.add(
                field_path,
                "Expected string | finite number | boolean | array of strings, actual "
                f"{actual_text(item)}",
            )
    return content if ok else None


def decode_collective_response(
    value: object, path: str, issues: IssueList
) -> Accept | Decline | None:
    """``{action: "accept", content}`` or ``{action: "decline"}``; other actions are refused."""
    if not isinstance(value, Mapping):
        issues.add(path, f"Expected object, actual {actual_text(value)}")
        return None
    action_path = join_path(path, "action")
    if "action" not in value:
        issues.add(action_path, "is missing")
        return None
    action = value["action"]
    if action not in ("accept", "decline"):
        issues.add(
            action_path,
            f"Expected {literal_union('accept', 'decline')}, actual {actual_text(action)}",
        )
        return None
    before = len(issues.lines)
    if action == "decline":
        exact_object(value, path, issues, required=("action",))
        return Decline() if len(issues.lines) == before else None
    answer = exact_object(value, path, issues, required=("action", "content"))
    content = None
    if answer is not None and "content" in answer:
        content = decode_answer_content(answer["content"], join_path(path, "content"), issues)
    return Accept(content) if content is not None and len(issues.lines) == before else None


def decode_collective(
    value: object, path: str, issues: IssueList
) -> tuple[bool, Collecting | None]:
    """``{op?: "multicast"}`` or ``{op: "gather" | "all_gather", deadline, requestedSchema}``.

    Returns ``(ok, collecting)``; a multicast decodes as ``(True, None)``.
    """
    if not isinstance(value, Mapping):
        issues.add(path, f"Expected object, actual {actual_text(value)}")
        return False, None
    op = value.get("op", "multicast")
    before = len(issues.lines)
    if op == "multicast":
        exact_object(value, path, issues, optional=("op",), required=())
        return len(issues.lines) == before, None
    if op not in ("gather", "all_gather"):
        issues.add(
            join_path(path, "op"),
            f"Expected {literal_union('multicast', 'gather', 'all_gather')}, actual "
            f"{actual_text(op)}",
        )
        return False, None
    shape = exact_object(value, path, issues, required=("op", "deadline", "requestedSchema"))
    deadline = schema = None
    if shape is not None and "deadline" in shape:
        deadline = decode_deadline(shape["deadline"], join_path(path, "deadline"), issues)
    if shape is not None and "requestedSchema" in shape:
        schema = decode_requested_schema(
            shape["requestedSchema"], join_path(path, "requestedSchema"), issues
        )
    if deadline is None or schema is None or len(issues.lines) != before:
        return False, None
    return True, Collecting(op, deadline, schema)


def decode_send_input(value: object, path: str = "") -> SendInput:
    """Decode one send's input exactly, or raise :class:`SendInputError` naming each issue.

    The address is only required to be a string here; its grammar is the send's
    ``invalid-address`` check. Text that is not well-formed Unicode is left to the send's
    ``content-invalid`` check for the same reason.
    """
    issues = IssueList()
    result = _decode_send_input(value, path, issues)
    if result is None or issues:
        raise SendInputError(tuple(issues.lines))
    return result


def stated_operation(value: object) -> str:
    """The operation an input states, even one that does not decode: ``response`` for a
    ``collectiveResponse``, a collective's ``gather`` / ``all_gather``, else ``multicast``."""
    if not isinstance(value, Mapping):
        return "multicast"
    if "collectiveResponse" in value:
        return "response"
    collective = value.get("collective")
    if isinstance(collective, Mapping) and collective.get("op") in ("gather", "all_gather"):
        return str(collective["op"])
    return "multicast"


def _decode_send_input(value: object, path: str, issues: IssueList) -> SendInput | None:
    if not isinstance(value, Mapping):
        issues.add(path, f"Expected object, actual {actual_text(value)}")
        return None
    if "collectiveResponse" in value:
        shape = exact_object(value, path, issues, required=("to", "collectiveResponse"))
        to = (
            decode_string(shape.get("to"), join_path(path, "to"), issues)
            if shape and "to" in shape
            else None
        )
        response = decode_collective_response(
            value["collectiveResponse"], join_path(path, "collectiveResponse"), issues
        )
        if to is None or response is None:
            return None
        return ResponseSend(to, response)
    shape = exact_object(value, path, issues, required=("to", "text"), optional=("collective",))
    if shape is None:
        return None
    to = decode_string(shape["to"], join_path(path, "to"), issues) if "to" in shape else None
    text = (
        decode_string(shape["text"], join_path(path, "text"), issues) if "text" in shape else None
    )
    ok, collecting = True, None
    if "collective" in shape:
        ok, collecting = decode_collective(
            shape["collective"], join_path(path, "collective"), issues
        )
    if to is None or text is None or not ok:
        return None
    return TextSend(to, text, collecting)
