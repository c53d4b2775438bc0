"""Resource reads and prompt gets through the door seam, as gated as a tool call.

A ``resources/read`` or ``prompts/get`` hands the agent whatever the upstream returns — a
workspace file, a secret — so each goes through the gate like a ``tools/call``: decided before
it is relayed (a blocked one never reaches the upstream and the client gets an MCP error naming
the rule), recorded in the chain, its returned contents inspected and redacted, and counted in
the verdict. The names the gate judges follow the proxy's ``mcp__<server>__<method>`` naming
of relayed requests:

* ``mcp__<server>__resources/read`` with ``{"uri": …}`` and, as its target, ``"path"`` (the
  local path of a ``file:`` URI: :func:`~pytest_harness_audit.policy.path_forms.file_uri_path`)
  or ``"url"`` (any other URI, percent-decoded until stable with its ``..`` resolved:
  :func:`decoded_uri`, as the upstream of a ``repo://`` scheme opens it). Its built-in
  category is ``file_read``: a resource is content the upstream reads for the agent, so the
  credential rules of the presets apply to its path or URI (``file:///…/.env`` and
  ``repo://%2Eenv`` are denied).
* ``mcp__<server>__prompts/get`` with ``{"name": …, "arguments": {…}}`` (the upstream's own
  prompt name); category ``mcp`` as for an upstream tool, so its arguments are checked for
  secrets before they leave.

Listings (``resources/list``, ``resources/templates/list``, ``prompts/list``) are not calls:
they pass through unrecorded unless they (or an upstream's error to them) hold a known secret
(:mod:`.incoming`).
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, TypeVar
from urllib.parse import unquote

import mcp_types as types
from mcp.shared.exceptions import MCPError
from pydantic import BaseModel, ValidationError

from pytest_harness_audit.doors.proxy.approval import client_approver, client_name
from pytest_harness_audit.doors.proxy.client_requests import CallOrigin
from pytest_harness_audit.doors.proxy.gate_failures import run_or_refuse
from pytest_harness_audit.doors.proxy.gate_protocol import GateLike
from pytest_harness_audit.gate.approvals import door_approver
from pytest_harness_audit.gate.seam import Outcome, describe_exception
from pytest_harness_audit.policy.path_forms import file_uri_path

ResultT = TypeVar("ResultT", bound=BaseModel)

READ_RESOURCE = "resources/read"
GET_PROMPT = "prompts/get"
#: What a client reads when a read is blocked and the gate gave no message.
BLOCKED_FALLBACK = "[blocked] [web4-policy] blocked by policy"
_MAX_DECODINGS = 16


class RequestBlocked(MCPError):
    """A read or prompt get the gate refused: the client's answer, not to be retried on
    another upstream."""


def read_tool_name(server: str) -> str:
    """The name the gate judges a ``resources/read`` of ``server`` under."""
    return f"mcp__{server}__{READ_RESOURCE}"


def prompt_tool_name(server: str) -> str:
    """The name the gate judges a ``prompts/get`` of ``server`` under."""
    return f"mcp__{server}__{GET_PROMPT}"


def read_params(uri: str) -> dict[str, Any]:
    """The parameters a resource read is judged and recorded with (see the module doc)."""
    path = file_uri_path(uri)
    if path is not None:
        return {"uri": uri, "path": path}
    return {"uri": uri, "url": decoded_uri(uri)}


def decoded_uri(uri: str) -> str:
    """``uri`` as an upstream serving its own scheme may read it: the part before the query
    and fragment percent-decoded until stable (``%252e`` is ``.`` for a server that decodes
    twice), cut at a decoded NUL, and its ``.`` and ``..`` segments resolved — so that
    ``repo://%2Eenv`` or ``repo://docs/../.env`` is judged as the ``.env`` it names."""
    cut = min((i for i in (uri.find("?"), uri.find("#")) if i >= 0), default=len(uri))
    head, tail = uri[:cut], uri[cut:]
    for _ in range(_MAX_DECODINGS):
        decoded = unquote(head)
        if decoded == head:
            break
        head = decoded
    head = head.partition("\x00")[0]
    scheme, sep, rest = head.partition("://")
    if not sep:
        return head + tail
    return f"{scheme}{sep}{_resolved(rest)}{tail}"


def _resolved(path: str) -> str:
    """``path`` with its ``.`` and ``..`` segments resolved (never above its first part)."""
    parts = path.split("/")
    if "." not in parts and ".." not in parts:
        return path
    kept: list[str] = []
    for part in parts:
        if part == "..":
            if kept:
                kept.pop()
        elif part != ".":
            kept.append(part)
    return "/".join(kept)


def prompt_params(name: str, arguments: Mapping[str, Any] | None) -> dict[str, Any]:
    """The parameters a prompt get is judged and recorded with."""
    return {"name": name, "arguments": dict(arguments or {})}


class GatedReads:
    """Run resource reads and prompt gets through the gate's door seam."""

    def __init__(self, gate: GateLike[Any]) -> None:
        self._gate = gate

    @property
    def gate(self) -> GateLike[Any]:
        """The gate the reads go through (relayed requests are checked against it too)."""
        return self._gate

    async def run(
        self,
        tool: str,
        params: Mapping[str, Any],
        ask: Callable[[], Awaitable[ResultT]],
        result_type: type[ResultT],
        origin: CallOrigin | None = None,
    ) -> ResultT:
        """Decide ``tool(params)``; relay with ``ask`` only if allowed; inspect; record once.

        A blocked request raises ``MCPError`` with the block message and the rule; an upstream
        error is recorded ``error`` and raised again (its message redacted like a result); a
        result holding a known secret reaches the client redacted when the policy judges the
        exposure a failure.
        """
        replies: list[ResultT] = []
        failures: list[types.ErrorData] = []

        async def act(_decision: object) -> Outcome:
            started = time.perf_counter()

            def elapsed() -> float:
                return (time.perf_counter() - started) * 1000.0

            try:
                result = await ask()
            except MCPError as exc:
                failures.append(exc.error)
                # the whole error is inspected: its data may carry what its message does not
                output = error_output(exc.error)
                return Outcome.error(exc.error.message, output, duration_ms=elapsed())
            except Exception as exc:
                message = describe_exception(exc)
                failures.append(types.ErrorData(code=types.INTERNAL_ERROR, message=message))
                return Outcome.error(message, duration_ms=elapsed())
            replies.append(result)
            return Outcome.success(_dump(result), duration_ms=elapsed())

        asker = None if origin is None else client_approver(origin)
        with door_approver(asker, "client" if origin is None else client_name(origin)):
            gated = await run_or_refuse(self._gate, tool, params, act)
        if isinstance(gated, str):  # the gate failed: refused and recorded
            raise RequestBlocked(code=types.INVALID_REQUEST, message=gated)
        if gated.blocked:
            raise RequestBlocked(code=types.INVALID_REQUEST, message=_block_message(gated))
        if failures:
            raise _failure(failures[0], gated)
        if gated.findings.redacted:
            return _redacted(gated.output, result_type)
        return replies[0]


def _block_message(gated: Any) -> str:
    """The block text, with the policy rule that decided it when the text does not name it
    (a quarantine's text names its own cause)."""
    message = str(gated.error_message or BLOCKED_FALLBACK)
    if getattr(gated.decision, "quarantine", None) is not None:
        return message
    evaluation = getattr(gated.decision, "evaluation", None)
    rule = getattr(evaluation, "rule_id", None)
    if isinstance(rule, str) and rule and rule not in message:
        message = f"{message} (rule {rule})"
    return message


def _failure(error: types.ErrorData, gated: Any) -> MCPError:
    """The upstream's error as the client may see it: redacted when inspection found a secret
    in it (:func:`redacted_error`)."""
    if gated.findings.redacted:
        return redacted_error(error, gated)
    return MCPError.from_error_data(error)


#: The message of an upstream error whose message held a secret and had no redacted form.
WITHHELD_ERROR = "[withheld: the error held a secret]"


def error_output(error: types.ErrorData) -> dict[str, Any]:
    """An upstream error as a record's output: the whole error, ``data`` included (inspected
    and redacted by the gate like a result)."""
    return {"error": _dump(error)}


def redacted_error(error: types.ErrorData, gated: Any) -> MCPError:
    """An upstream ``error`` the gate's inspection redacted, as the client may see it: the same
    code, the redacted message, and the redacted ``data`` (dropped when the inspected output
    holds no redacted form of it)."""
    output = getattr(gated, "output", None)
    shown = output.get("error") if isinstance(output, Mapping) else None
    message = gated.error_message
    if not message and isinstance(shown, Mapping) and isinstance(shown.get("message"), str):
        message = shown["message"]  # the message held nothing: only its data was redacted
    message = str(message or WITHHELD_ERROR)
    if error.data is not None and isinstance(shown, Mapping) and "data" in shown:
        return MCPError(code=error.code, message=message, data=shown["data"])
    return MCPError(code=error.code, message=message)


def _dump(result: BaseModel) -> dict[str, Any]:
    dumped: dict[str, Any] = result.model_dump(by_alias=True, mode="json", exclude_none=True)
    return dumped


def _redacted(output: Any, result_type: type[ResultT]) -> ResultT:
    """The result rebuilt from the inspected (redacted) output the client may see; when it no
    longer fits the result's shape, nothing of it is handed over."""
    if isinstance(output, Mapping):
        try:
            return result_type.model_validate(dict(output))
        except ValidationError:
            pass
    withheld = "[withheld: the result held a secret and could not be redacted in place]"
    if result_type is types.GetPromptResult:
        message = types.PromptMessage(role="user", content=types.TextContent(text=withheld))
        return result_type.model_validate({"messages": [_dump(message)]})
    raise MCPError(code=types.INTERNAL_ERROR, message=withheld)
