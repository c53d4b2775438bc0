"""Arguments a function tool reads lazily, read before the gate judges the call.

A framework validates the model's JSON into the types the tool's signature names: pydantic
turns a list given for an ``Iterable[str]`` parameter into an iterator it validates as it is
read. The gate saw ``<ValidatorIterator>`` there and judged the call without the paths it
held, while the tool read them. So an iterator argument (at the top, or inside a list, tuple or
dict argument) is read first, at most :data:`~.lazy_results.MAXIMUM_ITEMS` items, and the tool
gets a :class:`SeenIterator` over what was read: the same items, in the same order, which is
what the gate reads as the parameter's value. So is an iterator in a field of a pydantic model
or a dataclass argument (``paths: Iterable[str]`` in a request model): the field is set to the
:class:`SeenIterator` in place. An iterator with more items than that cannot be
judged whole: :class:`ArgumentTooLong` (the door refuses the call).

An approver may answer a call with modified parameters; the gate judges and records those, so
the tool runs with them (:func:`approved_call`): a parameter the approver changed takes its new
value, one it left keeps the tool's own argument, one it dropped its default.
"""

from __future__ import annotations

import dataclasses
import inspect
import itertools
from collections.abc import Iterator, Mapping
from typing import Any, TypeVar

from pytest_harness_audit.doors.lazy_results import MAXIMUM_ITEMS, file_like

T = TypeVar("T")

#: Nesting of containers inside an argument that is searched for iterators.
MAX_DEPTH = 16


class ArgumentTooLong(ValueError):
    """An iterator argument has more items than the door reads: the call cannot be judged."""


class SeenIterator(Iterator[T]):
    """An iterator over items the door read from the tool's own iterator argument."""

    def __init__(self, items: list[T]) -> None:
        self.items = items
        self._rest = iter(items)

    def __next__(self) -> T:
        return next(self._rest)


def _close(value: Any) -> None:
    close = getattr(value, "close", None)
    if callable(close):
        close()


def _concrete(value: Any, depth: int) -> Any:
    if isinstance(value, (str, bytes, bytearray, memoryview, SeenIterator)) or file_like(value):
        return value
    if isinstance(value, Iterator):
        items = list(itertools.islice(value, MAXIMUM_ITEMS + 1))
        if len(items) > MAXIMUM_ITEMS:
            _close(value)
            raise ArgumentTooLong(
                f"an iterator argument holds more than {MAXIMUM_ITEMS} items: "
                "the gate cannot read it whole"
            )
        return SeenIterator([_concrete(item, depth + 1) for item in items])
    if depth >= MAX_DEPTH:
        return value
    if type(value) in (list, tuple):
        items = [_concrete(item, depth + 1) for item in value]
        if all(a is b for a, b in zip(items, value, strict=True)):
            return value
        return items if isinstance(value, list) else tuple(items)
    if type(value) is dict:
        mapped = {key: _concrete(item, depth + 1) for key, item in value.items()}
        if all(mapped[key] is item for key, item in value.items()):
            return value
        return mapped
    _read_fields(value, depth)
    return value


def _fields(value: Any) -> dict[str, Any] | None:
    """The fields of a pydantic model or a dataclass instance (``None``: neither)."""
    model_fields = getattr(type(value), "model_fields", None)
    if isinstance(model_fields, Mapping) and not isinstance(value, type):
        return {name: getattr(value, name, None) for name in model_fields}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {field.name: getattr(value, field.name, None) for field in dataclasses.fields(value)}
    return None


def _read_fields(value: Any, depth: int) -> None:
    """Read the iterators in the fields of a model or dataclass argument (pydantic validates an
    ``Iterable[str]`` field into one), each field set to what was read, in place."""
    fields = _fields(value)
    if fields is None:
        return
    extra = getattr(value, "__pydantic_extra__", None)
    if isinstance(extra, dict):
        for key, item in list(extra.items()):
            extra[key] = _concrete(item, depth + 1)
    for name, item in fields.items():
        seen = _concrete(item, depth + 1)
        if seen is item:
            continue
        try:
            object.__setattr__(value, name, seen)
        except (AttributeError, TypeError) as exc:
            raise ArgumentTooLong(
                f"an iterator in the argument's field {name!r} cannot be read before the call"
            ) from exc


def concrete_call(
    args: tuple[Any, ...], kwargs: Mapping[str, Any]
) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """The call's arguments with each iterator read (see the module docstring)."""
    return (
        tuple(_concrete(item, 0) for item in args),
        {key: _concrete(item, 0) for key, item in kwargs.items()},
    )


def approved_call(
    signature: inspect.Signature,
    call: tuple[tuple[Any, ...], Mapping[str, Any]],
    seen: Mapping[str, Any],
    approved: Mapping[str, Any],
) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """The arguments the tool runs with when the gate judged ``approved`` for a call it saw as
    ``seen`` (see the module docstring); ``TypeError`` when they do not fit the signature."""
    args, kwargs = call
    if approved == seen:
        return args, dict(kwargs)
    bound = signature.bind(*args, **kwargs)
    bound.apply_defaults()
    values = dict(bound.arguments)
    kinds = {name: parameter.kind for name, parameter in signature.parameters.items()}
    catch_all = next((n for n, k in kinds.items() if k is inspect.Parameter.VAR_KEYWORD), None)
    extras: dict[str, Any] = dict(values.pop(catch_all, {})) if catch_all else {}
    for name in seen:
        if name in approved:
            continue
        if name in kinds:
            default = signature.parameters[name].default
            if default is inspect.Parameter.empty:
                raise TypeError(f"the approved call leaves out {name!r}, which has no default")
            values[name] = default
        else:
            extras.pop(name, None)
    for name, value in approved.items():
        if name in seen and seen[name] == value:
            continue
        if name == catch_all and isinstance(value, Mapping):
            extras.update(value)
        elif name in kinds and kinds[name] is inspect.Parameter.VAR_POSITIONAL:
            values[name] = tuple(value) if isinstance(value, (list, tuple)) else (value,)
        elif name in kinds:
            values[name] = value
        elif catch_all is not None:
            extras[name] = value
        else:
            raise TypeError(f"the approved call names {name!r}, which the tool does not take")
    if catch_all is not None:
        values[catch_all] = extras
    ordered = {name: values[name] for name in signature.parameters if name in values}
    again = inspect.BoundArguments(signature, ordered)
    signature.bind(*again.args, **again.kwargs)  # TypeError when they do not fit
    return tuple(again.args), dict(again.kwargs)


__all__ = ["MAX_DEPTH", "ArgumentTooLong", "SeenIterator", "approved_call", "concrete_call"]
