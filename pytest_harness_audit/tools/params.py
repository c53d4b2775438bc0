"""Validation of tool parameters: one clear message per bad, missing or unknown parameter."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from pytest_harness_audit.tools.outcome import ToolFailure


class ToolParams:
    """Typed access to the parameters of one call of ``tool``.

    Construction refuses parameters outside ``accepted`` (a misspelt parameter would otherwise be
    silently ignored); each getter raises :class:`ToolFailure` naming the tool, the parameter and
    the bad value.
    """

    def __init__(self, tool: str, params: Mapping[str, Any], accepted: Iterable[str]) -> None:
        self.tool = tool
        self._params = params
        allowed = frozenset(accepted)
        unknown = sorted(str(key) for key in params if key not in allowed)
        if unknown:
            names = ", ".join(repr(name) for name in unknown)
            raise ToolFailure(
                f"{tool}: unknown parameter {names} (accepted: {', '.join(sorted(allowed))})"
            )

    def _fail(self, name: str, expected: str, value: Any) -> ToolFailure:
        return ToolFailure(f"{self.tool}: parameter {name!r} must be {expected} (got {value!r})")

    def required_str(self, name: str, *, allow_empty: bool = False) -> str:
        """The string parameter ``name``; it must be present (and non-empty unless allowed)."""
        if name not in self._params:
            raise ToolFailure(f"{self.tool}: parameter {name!r} is required")
        value = self._params[name]
        if not isinstance(value, str):
            raise self._fail(name, "a string", value)
        if not value and not allow_empty:
            raise self._fail(name, "a non-empty string", value)
        return value

    def optional_str(self, name: str) -> str | None:
        """The string parameter ``name``, or ``None`` when absent or null."""
        value = self._params.get(name)
        if value is None:
            return None
        if not isinstance(value, str):
            raise self._fail(name, "a string", value)
        return value

    def optional_int(
        self, name: str, *, minimum: int, maximum: int | None = None, default: int | None = None
    ) -> int | None:
        """The integer parameter ``name`` within ``[minimum, maximum]``, else ``default``."""
        value = self._params.get(name)
        if value is None:
            return default
        # bool is an int subclass; `offset: true` is a mistake, not 1.
        if not isinstance(value, int) or isinstance(value, bool):
            raise self._fail(name, "an integer", value)
        if value < minimum or (maximum is not None and value > maximum):
            bounds = f">= {minimum}" if maximum is None else f"between {minimum} and {maximum}"
            raise self._fail(name, f"an integer {bounds}", value)
        return value

    def optional_bool(self, name: str, *, default: bool = False) -> bool:
        """The boolean parameter ``name``, else ``default``."""
        value = self._params.get(name)
        if value is None:
            return default
        if not isinstance(value, bool):
            raise self._fail(name, "true or false", value)
        return value

    def optional_str_list(self, name: str) -> list[str]:
        """The list-of-strings parameter ``name`` (empty when absent)."""
        value = self._params.get(name)
        if value is None:
            return []
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            raise self._fail(name, "a list of strings", value)
        return list(value)

    def optional_choice(self, name: str, choices: tuple[str, ...], default: str) -> str:
        """The parameter ``name``, one of ``choices``, else ``default``."""
        value = self._params.get(name)
        if value is None:
            return default
        if value not in choices:
            raise self._fail(name, "one of " + ", ".join(choices), value)
        return str(value)

    def raw(self, name: str) -> Any:
        """The parameter ``name`` as given (``None`` when absent)."""
        return self._params.get(name)
