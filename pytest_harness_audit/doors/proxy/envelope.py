"""JSON-RPC envelopes the SDK would take for something else, answered as MCP requires.

A request whose ``id`` is neither a string nor an integer (``null``, ``1.5``, ``true``, an
object) validates as a *notification* in the SDK's message union, which ignores unknown keys,
so the request would get no answer at all. MCP requires a string or integer id ("unlike base
JSON-RPC, the ID MUST NOT be null") and JSON-RPC 2.0 answers an Invalid Request with
``-32600`` and a ``null`` id, so that is the answer: nothing is forwarded or run.

A request id may not be reused while its first request is in flight: the answers and a
``notifications/cancelled`` for that id could not tell the two apart (a cancel would stop the
wrong call). ``InFlightIds`` tracks them for a wire the proxy reads itself (stdio).

``EnvelopeCheck`` applies the same rules to a streamable-HTTP POST body before the SDK's
handshake-era transport sees it (that transport acknowledges such a body with ``202`` and
drops it, answers a batch or a malformed message with ``-32602``, and routes a reused id's
answer to the newer POST, so the first one never gets its own).
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable
from typing import Any, TypeGuard

import mcp_types as types
from mcp.shared.exceptions import MCPError
from pydantic import BaseModel, ValidationError
from pydantic_core import PydanticSerializationError
from starlette.types import ASGIApp, Message, Receive, Scope, Send

_BAD_ID = "Invalid Request: id must be a string or an integer"
_SURROGATE = re.compile("[\ud800-\udfff]")
#: The requests the proxy gates and records (a tool call, a resource read, a prompt get).
CALL_METHODS = frozenset({"tools/call", "resources/read", "prompts/get"})


def valid_id(value: object) -> TypeGuard[int | str]:
    """Whether ``value`` is an id MCP allows (a string, or an integer that is not a bool)."""
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def envelope_error(document: Any) -> types.JSONRPCError | None:
    """The answer owed to a decoded message with a malformed envelope, else None.

    Only what the SDK's message union gets wrong is decided here: batches, non-objects and
    an ``id`` member of the wrong type (present at all means "a request", even when null).
    """
    if isinstance(document, list):
        return invalid(None, "Invalid Request: batches are not supported")
    if not isinstance(document, dict):
        return invalid(None, "Invalid Request: Input should be an object")
    if "id" in document and not valid_id(document["id"]):
        return invalid(None, _BAD_ID)
    return None


def invalid(request_id: int | str | None, message: str) -> types.JSONRPCError:
    """An Invalid Request (``-32600``) answer."""
    return types.JSONRPCError(
        jsonrpc="2.0",
        id=request_id,
        error=types.ErrorData(code=types.INVALID_REQUEST, message=message),
    )


def wire_line(message: types.JSONRPCMessage) -> bytes:
    """``message`` as one wire line; a string that is not well-formed Unicode (a lone
    surrogate the client sent, echoed back) is written as its JSON escape, not refused."""
    try:
        payload = message.model_dump_json(by_alias=True, exclude_unset=True)
    except PydanticSerializationError:
        data = message.model_dump(mode="python", by_alias=True, exclude_unset=True)
        payload = json.dumps(data, separators=(",", ":"), default=str)
    return payload.encode("utf-8") + b"\n"


def ill_formed_text(value: object, where: str) -> str | None:
    """Where the first string of ``value`` (keys included) that is not well-formed Unicode is
    (a lone surrogate, which no UTF-8 wire can carry), as ``<where>.<key>…``; None when all are.

    Such a value is never sent on to an upstream: the SDK's writer cannot encode it and would
    drop the upstream's connection for every later call.
    """
    stack: list[tuple[object, str]] = [(value, where)]
    while stack:
        item, path = stack.pop()
        if isinstance(item, str):
            if _SURROGATE.search(item):
                return path
        elif isinstance(item, dict):
            for key, child in item.items():
                if isinstance(key, str) and _SURROGATE.search(key):
                    return f"{path} (a key)"
                stack.append((child, f"{path}.{key}"))
        elif isinstance(item, list | tuple):
            stack.extend((child, f"{path}[{index}]") for index, child in enumerate(item))
    return None


def not_sent(where: str, server: str) -> str:
    """The error of a request not sent to upstream ``server`` for its ill-formed text."""
    return (
        f"Invalid params: {where} is not well-formed Unicode (a lone surrogate); "
        f"not sent to {server!r}"
    )


def refuse_ill_formed(request: BaseModel, server: str) -> None:
    """Raise the ``-32602`` error of ``request`` when a string of its params is not
    well-formed Unicode (it is not sent to upstream ``server``: :func:`ill_formed_text`)."""
    params = request.model_dump(mode="python", by_alias=True, exclude_none=True).get("params")
    where = ill_formed_text(params, "params")
    if where is not None:
        raise MCPError(code=types.INVALID_PARAMS, message=not_sent(where, server))


def reused(request_id: int | str) -> types.JSONRPCError:
    """The refusal of a request whose id a request in flight holds."""
    return invalid(
        request_id,
        f"Invalid Request: id {json.dumps(request_id)} is already used by a request "
        "that has not been answered",
    )


class InFlightIds:
    """The ids of the client's requests that have not been answered yet."""

    def __init__(self) -> None:
        self._open: set[int | str] = set()

    def begin(self, request_id: int | str) -> types.JSONRPCError | None:
        """Note a new request; the refusal to send instead when its id is still in flight."""
        if request_id in self._open:
            return reused(request_id)
        self._open.add(request_id)
        return None

    def end(self, request_id: int | str | None) -> None:
        """Note that the request ``request_id`` has been answered."""
        if request_id is not None:
            self._open.discard(request_id)


#: Answers a call the app cannot be handed (ill-formed text: :mod:`.unservable`), or None.
Unservable = Callable[[Any], Awaitable[types.JSONRPCError | None]]


class EnvelopeCheck:
    """ASGI middleware: answer a POST body with a malformed envelope with ``-32600``.

    Bodies that are not JSON, and well-formed messages, go on to the app unchanged (the body
    is read once here and handed on as it was). A call whose text the app's parser refuses
    (an escaped lone surrogate) is answered by ``unservable``, which records it.
    """

    def __init__(self, app: ASGIApp, unservable: Unservable | None = None) -> None:
        self._app = app
        self._unservable = unservable
        # (MCP session, request id) of the requests whose POST is still being answered
        self._in_flight: set[tuple[str, int | str]] = set()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Check a POST's body; pass everything else through."""
        if scope["type"] != "http" or scope.get("method") != "POST":
            await self._app(scope, receive, send)
            return
        body, last = await _read_body(receive)
        if last["type"] == "http.disconnect":
            return
        try:
            document = json.loads(body)
        except (ValueError, RecursionError):
            document = None  # not JSON: the app answers with its parse error
        else:
            answer = envelope_error(document) or _shape_error(document)
            if answer is None and self._unservable is not None and b"\\u" in body:
                answer = await self._unservable(document)  # ill-formed text: recorded there
            if answer is not None:
                await _answer(send, answer)
                return
            key = _request_key(scope, document)
            if key is not None:
                if key in self._in_flight:
                    await _answer(send, reused(key[1]))
                    return
                self._in_flight.add(key)
                try:
                    await self._app(scope, _replay(body, receive), send)
                finally:
                    self._in_flight.discard(key)
                return
        await self._app(scope, _replay(body, receive), send)


def _shape_error(document: dict[str, Any]) -> types.JSONRPCError | None:
    """``-32600`` for an object that is no JSON-RPC message (the SDK answers ``-32602``)."""
    try:
        types.jsonrpc_message_adapter.validate_python(document, by_name=False)
    except ValidationError as exc:
        first = exc.errors()[0]["msg"] if exc.errors() else "not a JSON-RPC 2.0 message"
        request_id = document.get("id")
        return invalid(request_id if valid_id(request_id) else None, f"Invalid Request: {first}")
    return None


def _request_key(scope: Scope, document: dict[str, Any]) -> tuple[str, int | str] | None:
    """``(MCP session, id)`` of a request posted in a session (whose answers are routed by id:
    the SDK's handshake-era transport would send a reused id's answer to the newer POST)."""
    request_id = document.get("id")
    if "method" not in document or not valid_id(request_id):
        return None
    for name, value in scope.get("headers", []):
        if name == b"mcp-session-id":
            return value.decode("latin-1"), request_id
    return None


async def _read_body(receive: Receive) -> tuple[bytes, Message]:
    chunks: list[bytes] = []
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return b"".join(chunks), message
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            return b"".join(chunks), message


def _replay(body: bytes, receive: Receive) -> Receive:
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay


async def _answer(send: Send, error: types.JSONRPCError) -> None:
    payload = wire_line(error).rstrip(b"\n")
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(payload)).encode()),
    ]
    await send({"type": "http.response.start", "status": 400, "headers": headers})
    await send({"type": "http.response.body", "body": payload})
