"""A ``warn`` decision told to the model, as the hook door tells it.

A call the policy warns about runs; its record says ``policy:warn`` and the session is judged
WARN. The hook door hands the warning to the model as the host's ``additionalContext``; the
MCP result has one place a model reads: its content. So the answer to a warned ``tools/call``
is the tool's result with one more text block, ``[web4-policy] <reason>``, after the tool's
own. The record keeps what the tool returned: the note is the door's, not the call's output.
A dry-run deny is not told (the hook door tells it to the user only), nor are resource reads
and prompts, whose contents are the upstream's document rather than a call's answer.
"""

from __future__ import annotations

from typing import Any

import mcp_types as types

#: What starts the note of a warned call (the policy's tag, as in the hook door's context).
WARNING_TAG = "[web4-policy]"


def warning_text(decision: Any) -> str | None:
    """The note for a call ``decision`` let through with a warning; None for any other."""
    evaluation = getattr(decision, "evaluation", None)
    if getattr(decision, "blocked", False) or getattr(evaluation, "decision", None) != "warn":
        return None
    reason = str(getattr(evaluation, "reason", "") or "flagged by the policy")
    return f"{WARNING_TAG} {reason}"


def with_warning(result: types.CallToolResult, decision: Any) -> types.CallToolResult:
    """``result`` with the warning of ``decision`` after its content (unchanged without one)."""
    text = warning_text(decision)
    if text is None:
        return result
    note = types.TextContent(type="text", text=text)
    return result.model_copy(update={"content": [*result.content, note]})
