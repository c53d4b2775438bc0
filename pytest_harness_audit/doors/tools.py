"""The function-tool door: an agent framework's native Python tools, gated (DESIGN §2, door 4).

Agent frameworks (pydantic-ai, the OpenAI Agents SDK, inspect_ai, LangGraph …) call plain Python
functions as tools and build the model's JSON schema from their signatures and docstrings.
:func:`gated_tool` wraps such a function so that every call goes through the one door seam,
:meth:`Gate.run <pytest_harness_audit.gate.Gate.run>`: the gate decides, the function runs only
if the call is allowed, the inspectors look at what it did, and one record is appended.

* The tool name is ``name``, else the name inspect_ai gives the model for one of its tools
  (``bash`` for the function ``execute`` that ``inspect_ai.tool.bash()`` returns), else the
  function's ``__name__``; the call's parameters are its
  arguments bound by the signature (positional ones under their names, defaults applied, a
  ``**kwargs`` catch-all flattened unless a key would hide another argument), so policy targets
  (``path``, ``file_path``, ``command`` …) are read as for any other door. The record's
  ``defaulted`` lists the parameters the caller left to their defaults. Each value is viewed
  as the tool reads it (:mod:`.tool_views`); one with no JSON form is recorded as ``<TypeName>``.
* An iterator argument is read first (:mod:`.tool_args`): the gate judges its items, the tool
  gets an iterator over them. A tool frameworks await (an ``async def``, an object whose
  ``__call__`` is one) is wrapped as a coroutine function, and an awaitable a sync tool returns
  is run inside the call (:func:`.lazy_results.settled`).
* Calls through one gate go one at a time (:mod:`.tool_calls`): a framework running several at
  once cannot get one charged with what another did.
* The wrapper keeps ``__name__``, ``__doc__``, annotations and ``inspect.signature``, and is a
  coroutine function when the tool is one, so frameworks see the tool they were given. Given a
  ``name``, the wrapper takes it as its ``__name__`` too: the model calls the tool by the name the
  policy judges and the chain records.
* Allowed: the function's return value; when inspection found a secret in it, the redacted JSON
  view of it instead (``[secret:…]``). A lazy result — a generator, an iterator, a file-like
  object — is read first (bounded, :mod:`.lazy_results`): the framework gets the list or text
  that was inspected. An exception the function raises is recorded as an
  ``error`` and raised again, its text redacted as the record's is:
  frameworks hand it to the model (the OpenAI Agents SDK's tool error, pydantic-ai's
  ``ModelRetry``).
* Blocked: the function never runs. ``on_block="raise"`` raises :class:`ToolCallBlocked`, which
  is also the loaded framework's own tool-failure class (:mod:`.host_refusals`): pydantic-ai and
  inspect_ai tell the model and go on, as after any failed call; ``on_block="return"`` returns
  the block text, which a framework hands to the model as the tool's result. The gate failing
  on a call (an approver raising, a chain it cannot write) is a block too, recorded or noted so
  that the session fails.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Literal, TypeVar, cast

from pytest_harness_audit.doors.host_refusals import as_host_failure
from pytest_harness_audit.doors.lazy_results import materialised_async, settled
from pytest_harness_audit.doors.tool_args import ArgumentTooLong, approved_call, concrete_call
from pytest_harness_audit.doors.tool_calls import gate_failure, turns_of
from pytest_harness_audit.doors.tool_errors import shown_exception
from pytest_harness_audit.doors.tool_views import output_view, param_view
from pytest_harness_audit.errors import HarnessAuditError, UsageError
from pytest_harness_audit.gate.seam import GatedCall, Outcome
from pytest_harness_audit.tools.toolbox import BUILTIN_TOOLS

if TYPE_CHECKING:
    from pytest_harness_audit.gate.gate import Gate
    from pytest_harness_audit.tools.toolbox import ToolBox

#: What a blocked call does: raise :class:`ToolCallBlocked`, or return the block text.
OnBlock = Literal["raise", "return"]

#: The value ``door`` takes in the records of function-tool calls.
DOOR = "tool"

F = TypeVar("F", bound=Callable[..., Any])

_ON_BLOCK = ("raise", "return")


class ToolCallBlocked(HarnessAuditError):
    """The gate refused a function tool's call: the function did not run.

    ``str(exc)`` is the block text the model should read; ``call`` is the gated call (its
    decision and chain record), ``None`` when the gate itself failed on the call.
    """

    def __init__(self, message: str, call: GatedCall | None = None, tool: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.call = call
        self._tool = tool

    @property
    def tool(self) -> str:
        """The blocked tool's name."""
        return str(self.call.decision.tool) if self.call is not None else self._tool

    @property
    def record(self) -> Mapping[str, Any]:
        """The blocked call's chain record (empty when the gate failed on the call)."""
        return self.call.record if self.call is not None else {}


def block_shown_to_model(context: Any, error: Exception) -> str:
    """An OpenAI Agents SDK ``failure_error_function`` that shows the model why a call was
    blocked: ``function_tool(harness.tool(fn), failure_error_function=block_shown_to_model)``.

    A :class:`ToolCallBlocked` gives its block text; any other
    exception the SDK's own fixed text (an exception's text may hold what the model must not
    read).
    """
    if isinstance(error, ToolCallBlocked):
        return error.message
    from agents.tool import default_tool_error_function

    return str(default_tool_error_function(context, error))


def bound_params(
    signature: inspect.Signature, args: tuple[Any, ...], kwargs: Mapping[str, Any]
) -> dict[str, Any]:
    """The call's arguments by name, as the gate and the chain see them.

    Positional arguments are bound to their names and defaults applied; ``*args`` is kept under
    its own name as a list and ``**kwargs`` is flattened into the mapping (a key that would hide
    another argument stays under the ``**kwargs`` name). Raises ``TypeError`` when the arguments
    do not fit the signature (the call is then no call: nothing is recorded).
    """
    return _bound(signature, args, kwargs)[0]


def _bound(
    signature: inspect.Signature, args: tuple[Any, ...], kwargs: Mapping[str, Any]
) -> tuple[dict[str, Any], list[str]]:
    """:func:`bound_params`, and the names whose values are the signature's defaults (the
    caller did not pass them)."""
    bound = signature.bind(*args, **kwargs)
    passed = set(bound.arguments)
    bound.apply_defaults()
    defaulted = [
        name
        for name, parameter in signature.parameters.items()
        if name not in passed and parameter.default is not inspect.Parameter.empty
    ]
    params: dict[str, Any] = {}
    kept: tuple[str, dict[str, Any]] | None = None
    for name, value in bound.arguments.items():
        kind = signature.parameters[name].kind
        if kind is inspect.Parameter.VAR_KEYWORD:
            kept = (name, dict(value))
        elif kind is inspect.Parameter.VAR_POSITIONAL:
            params[name] = [param_view(item) for item in value]
        else:
            params[name] = param_view(value)
    if kept is not None:
        own, items = kept
        hidden: dict[str, Any] = {}
        for key, item in items.items():
            if str(key) in params or str(key) == own:
                hidden[str(key)] = param_view(item)
            else:
                params[str(key)] = param_view(item)
        if hidden:
            params[own] = hidden
    return params, defaulted


def _judged(decision: object, params: Mapping[str, Any]) -> Mapping[str, Any]:
    """The parameters the call runs with: those an approver answered ``modify`` with (the gate
    judged and records them), else the call's own (not the record's redacted copy)."""
    approval = (getattr(decision, "record_extra", None) or {}).get("approval")
    judged = getattr(decision, "params", None)
    modified = isinstance(approval, Mapping) and approval.get("outcome") == "modify"
    return judged if modified and isinstance(judged, Mapping) else params


def _redact_exception(gate: Gate, exc: BaseException) -> BaseException:
    """``exc``, which the function raised and the framework will read, with the known secrets
    in its text redacted (:mod:`.tool_errors`): itself, or a replacement of the same name."""
    scrub = getattr(getattr(getattr(gate, "chain", None), "builder", None), "scrub", None)
    text = getattr(scrub, "text", None)
    if not callable(text):
        return exc
    return shown_exception(exc, text)


def _tool_name(fn: Callable[..., Any], name: str | None) -> str:
    if name is not None:
        if not isinstance(name, str) or not name.strip():
            raise UsageError(f"harness.tool: name must be a non-empty string, got {name!r}")
        return name
    hosted = _registered_name(fn)
    if hosted is not None:
        return hosted
    found = getattr(fn, "__name__", None)
    if not isinstance(found, str) or not found or found == "<lambda>":
        raise UsageError(f"harness.tool({fn!r}): the function has no usable __name__; pass name=")
    return found


def _registered_name(fn: Callable[..., Any]) -> str | None:
    """The name an inspect_ai tool is given to the model (its registry name without the
    package: ``bash`` for ``inspect_ai/bash``, whose function is ``execute``), else ``None``."""
    info = getattr(fn, "__registry_info__", None)  # set by inspect_ai's @tool
    name = getattr(info, "name", None)
    if getattr(info, "type", None) != "tool" or not isinstance(name, str):
        return None
    name = name.rpartition("/")[2]
    return name if name.strip() else None


def _is_async(fn: Callable[..., Any]) -> bool:
    """Whether frameworks await ``fn``'s calls: a coroutine or async generator function, a
    partial of one, or an object whose ``__call__`` is one (pydantic-ai's and inspect_ai's test)."""
    while isinstance(fn, functools.partial):
        fn = fn.func
    call = getattr(fn, "__call__", None)  # noqa: B004  # the object's own __call__ is read
    return any(inspect.iscoroutinefunction(f) or inspect.isasyncgenfunction(f) for f in (fn, call))


def _typed_by(fn: Callable[..., Any]) -> Callable[..., Any]:
    """What the tool's annotations (and the module they are read in) come from: the function,
    or a callable object's ``__call__``."""
    if inspect.isroutine(fn) or isinstance(fn, (functools.partial, type)):
        return fn
    call = getattr(fn, "__call__", None)  # noqa: B004
    return call if inspect.ismethod(call) else fn


def _replay(fn: Callable[..., Any]) -> Callable[[Mapping[str, Any]], Any]:
    """The tool as the toolbox runs it (``harness.call(name, **params)``): keyword arguments."""
    if _is_async(fn):

        def run_async(params: Mapping[str, Any]) -> Any:
            return settled(fn(**params))

        return run_async

    def run(params: Mapping[str, Any]) -> Any:
        return settled(fn(**params))

    return run


def _register(
    toolbox: ToolBox | None, tool: str, fn: Callable[..., Any], category: str | None
) -> None:
    """Give the tool its category (the harness classifies registered tools by it)."""
    if category is not None and (not isinstance(category, str) or not category):
        raise UsageError(
            f"harness.tool({tool!r}): category must be a non-empty string, got {category!r}"
        )
    if toolbox is None:
        if category is not None:
            raise UsageError(f"harness.tool({tool!r}): a category needs the harness's toolbox")
        return
    if tool in BUILTIN_TOOLS:
        if category is not None:
            raise UsageError(
                f"harness.tool({tool!r}): {tool!r} is a built-in tool name; its category is "
                "fixed (name the function tool differently to give it another)"
            )
        return  # a built-in name keeps its built-in category (and the toolbox its built-in)
    toolbox.register(tool, _replay(fn), category=category)


def _finished(
    wrapper: Callable[..., Any],
    fn: Callable[..., Any],
    signature: inspect.Signature,
    name: str | None,
) -> Any:
    """The wrapper with the tool's signature and annotations, renamed when the tool was given a
    ``name`` (frameworks name the tool the model calls after ``__name__``)."""
    wrapper.__signature__ = signature  # type: ignore[attr-defined]
    typed = _typed_by(fn)
    if typed is not fn:  # a callable object: its __call__'s types, read in its module
        wrapper.__annotations__ = dict(getattr(typed, "__annotations__", {}))
        wrapper.__wrapped__ = typed  # type: ignore[attr-defined]
    if name is not None:
        wrapper.__name__ = name
        wrapper.__qualname__ = name
    return wrapper


def gated_tool(
    gate: Gate,
    fn: F,
    *,
    name: str | None = None,
    category: str | None = None,
    on_block: OnBlock = "raise",
    toolbox: ToolBox | None = None,
) -> F:
    """Wrap ``fn`` so that every call goes gate → act → inspect → record.

    ``category`` classifies the tool for the policy (``file_read``, ``command`` …); it is
    registered with ``toolbox`` (the harness's), which also lets ``harness.call(name, …)`` replay
    the tool by keyword. See the module docstring for what a call returns or raises.
    """
    if not callable(fn):
        raise UsageError(f"harness.tool: the tool must be callable, got {fn!r}")
    if on_block not in _ON_BLOCK:
        raise UsageError(f"harness.tool: on_block must be 'raise' or 'return', got {on_block!r}")
    tool = _tool_name(fn, name)
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError) as exc:
        raise UsageError(
            f"harness.tool({tool!r}): cannot read the function's signature: {exc}"
        ) from None
    _register(toolbox, tool, fn, category)
    extra = {"door": DOOR}

    def refused(message: str, gated: GatedCall | None) -> Any:
        if on_block == "return":
            return message
        raise as_host_failure(ToolCallBlocked)(message, gated, tool)

    def blocked(gated: GatedCall) -> Any:
        return refused(gated.error_message or "[blocked]", gated)

    def received(gated: GatedCall, value: Any) -> Any:
        return gated.output if gated.findings.redacted else value

    turns = turns_of(gate)

    def extra_for(defaulted: list[str]) -> dict[str, Any]:
        return {**extra, "defaulted": defaulted} if defaulted else extra

    def failed(params: Mapping[str, Any], exc: Exception, defaulted: list[str]) -> Any:
        return refused(gate_failure(gate, tool, params, exc, extra_for(defaulted)), None)

    def too_long(args: tuple[Any, ...], kwargs: Mapping[str, Any], exc: Exception) -> Any:
        params, defaulted = _bound(signature, args, kwargs)
        return failed(params, exc, defaulted)

    if _is_async(fn):

        @functools.wraps(fn)
        async def call_async(*args: Any, **kwargs: Any) -> Any:
            with turns.running():
                try:
                    args, kwargs = concrete_call(args, kwargs)
                except ArgumentTooLong as exc:
                    return too_long(args, kwargs, exc)
                params, defaulted = _bound(signature, args, kwargs)
                returned: list[Any] = []
                raised: list[BaseException] = []

                async def act(decision: object) -> Outcome:
                    try:
                        run_args, run_kwargs = approved_call(
                            signature, (args, kwargs), params, _judged(decision, params)
                        )
                        value = fn(*run_args, **run_kwargs)
                        while inspect.isawaitable(value):
                            value = await value
                        value = await materialised_async(value)
                    except BaseException as exc:
                        raised.append(exc)
                        if isinstance(exc, asyncio.CancelledError):
                            turns.note_cancelled()  # its threads may go on: see .tool_late
                        raise
                    returned.append(value)
                    return Outcome.success(output_view(value))

                async with turns.async_turn():
                    try:
                        gated = await gate.run_async(tool, params, act, extra=extra_for(defaulted))
                    except Exception as exc:
                        if raised and exc is raised[0]:
                            shown = _redact_exception(gate, exc)
                            if shown is exc:
                                raise
                            raise shown from None
                        return failed(params, exc, defaulted)
                if gated.status == "blocked":
                    return blocked(gated)
                return received(gated, returned[0] if returned else gated.output)

        return cast(F, _finished(call_async, fn, signature, tool if name is not None else None))

    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        with turns.running():
            try:
                args, kwargs = concrete_call(args, kwargs)
            except ArgumentTooLong as exc:
                return too_long(args, kwargs, exc)
            params, defaulted = _bound(signature, args, kwargs)
            returned: list[Any] = []
            raised: list[BaseException] = []

            def act(decision: object) -> Outcome:
                try:
                    run_args, run_kwargs = approved_call(
                        signature, (args, kwargs), params, _judged(decision, params)
                    )
                    value = settled(fn(*run_args, **run_kwargs))
                except BaseException as exc:
                    raised.append(exc)
                    raise
                returned.append(value)
                return Outcome.success(output_view(value))

            with turns.sync_turn():
                try:
                    gated = gate.run(tool, params, act, extra=extra_for(defaulted))
                except Exception as exc:
                    if raised and exc is raised[0]:
                        shown = _redact_exception(gate, exc)
                        if shown is exc:
                            raise
                        raise shown from None
                    return failed(params, exc, defaulted)
            if gated.status == "blocked":
                return blocked(gated)
            return received(gated, returned[0] if returned else gated.output)

    return cast(F, _finished(call, fn, signature, tool if name is not None else None))


def tool_decorator(
    gate: Gate,
    fn: F | None = None,
    *,
    name: str | None = None,
    category: str | None = None,
    on_block: OnBlock = "raise",
    toolbox: ToolBox | None = None,
) -> F | Callable[[F], F]:
    """:func:`gated_tool` usable as ``@tool``, ``@tool(name=…, category=…)`` or ``tool(fn)``."""
    if fn is None:

        def decorate(function: F) -> F:
            return gated_tool(
                gate, function, name=name, category=category, on_block=on_block, toolbox=toolbox
            )

        return decorate
    return gated_tool(gate, fn, name=name, category=category, on_block=on_block, toolbox=toolbox)


__all__ = [
    "DOOR",
    "OnBlock",
    "ToolCallBlocked",
    "block_shown_to_model",
    "bound_params",
    "gated_tool",
    "tool_decorator",
]
