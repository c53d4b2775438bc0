"""Read the operation a message's text states (``parse_message_text``).

Only a whole text that is a JSON object with a ``gather``, ``all_gather`` or ``action`` key states
an operation (keys looked for in that order); any other text, JSON-looking prose included, is a
multicast of the whole text. A text that states an operation but fails validation is refused with
:class:`MessageTextError` — never sent as text — because the model meant the operation::

    plain text                                                      multicast
    {"gather": "Which day?", "deadline": 600, "requestedSchema": {...}}
    {"all_gather": "Which day?", "deadline": 600, "requestedSchema": {...}}
    {"action": "accept", "content": {...}}                           answer
    {"action": "decline"}                                            answer
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Literal

from pytest_harness_audit.social.errors import MessageTextError
from pytest_harness_audit.social.inputs import (
    Collecting,
    IssueList,
    ResponseSend,
    SendInput,
    TextSend,
    decode_collective_response,
    decode_deadline,
    decode_requested_schema,
    decode_well_formed,
    exact_object,
)
from pytest_harness_audit.social.message_json import lone_surrogate_index


class _NotJson(ValueError):
    """The text is not strict JSON (``NaN`` and ``Infinity`` are not JSON)."""


def _reject_constant(name: str) -> object:
    raise _NotJson(name)


def _whole_json_object(text: str) -> Mapping[str, object] | None:
    """The JSON object the whole text is (surrounding whitespace allowed), if it is one."""
    try:
        value = json.loads(text, parse_constant=_reject_constant)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def parse_message_text(to: str, text: str) -> SendInput:
    """Read one message text as the send it states.

    ``to`` is passed through unchanged (its grammar is the send's ``invalid-address`` check): the
    recipients of a multicast, gather or all_gather, or for an answer the conversation whose open
    request it answers. Raises :class:`MessageTextError` ``<operation> not sent: <path>: <issue>``
    for a stated operation that fails validation, or ``message`` for ill-formed plain text.
    """
    value = _whole_json_object(text)
    if value is not None:
        if "gather" in value:
            return _collecting(to, "gather", value)
        if "all_gather" in value:
            return _collecting(to, "all_gather", value)
        if "action" in value:
            return _answer(to, value)
    index = lone_surrogate_index(text)
    if index is not None:
        raise MessageTextError(
            "message", f"text: is not well-formed Unicode (a lone surrogate at index {index})"
        )
    return TextSend(to, text)


def _collecting(
    to: str, op: Literal["gather", "all_gather"], value: Mapping[str, object]
) -> TextSend:
    issues = IssueList()
    exact_object(value, "", issues, required=(op, "deadline", "requestedSchema"))
    question = decode_well_formed(value[op], op, issues)
    deadline = (
        decode_deadline(value["deadline"], "deadline", issues) if "deadline" in value else None
    )
    schema = (
        decode_requested_schema(value["requestedSchema"], "requestedSchema", issues)
        if "requestedSchema" in value
        else None
    )
    if issues or question is None or deadline is None or schema is None:
        raise MessageTextError(op, issues.detail())
    return TextSend(to, question, Collecting(op, deadline, schema))


def _answer(to: str, value: Mapping[str, object]) -> ResponseSend:
    issues = IssueList()
    response = decode_collective_response(value, "", issues)
    if issues or response is None:
        raise MessageTextError("answer", issues.detail())
    return ResponseSend(to, response)
