"""Arithmetic expansion ``$((…))`` of known values, as bash evaluates it.

``i=1; a1=.env; eval "cat \\$a$((i))"``: the name ``a1`` is built with an arithmetic expansion;
its value is worked out when every operand is a number or a variable holding one (an unset
variable is 0). Only ``+ - * / %``, unary signs and parentheses are evaluated, on integers of
a bounded size; anything else leaves the value unknown, as before.
"""

from __future__ import annotations

import ast
import re
from typing import Final

_TOKENS: Final = re.compile(r"[\s\d()+\-*/%A-Za-z_]*")
_NAME: Final = re.compile(r"[A-Za-z_]\w*")
_MAX_TEXT: Final = 256
_MAX_VALUE: Final = 1 << 63


def arithmetic(text: str, variables: dict[str, str]) -> str | None:
    """The value of the expression ``text`` (``None``: not known)."""
    if len(text) > _MAX_TEXT or not _TOKENS.fullmatch(text) or "**" in text:
        return None
    unknown = False

    def value(match: re.Match[str]) -> str:
        nonlocal unknown
        held = variables.get(match.group(), "0").strip() or "0"
        if not re.fullmatch(r"-?\d{1,18}", held):
            unknown = True
        return f"({held})"

    expression = _NAME.sub(value, text)
    if unknown or not expression.strip():
        return None
    try:
        tree = ast.parse(expression.strip(), mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    result = _evaluate(tree.body, 0)
    return None if result is None else str(result)


def _evaluate(node: ast.expr, depth: int) -> int | None:
    if depth > 32:
        return None
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value if abs(node.value) < _MAX_VALUE else None
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.UAdd, ast.USub)):
        operand = _evaluate(node.operand, depth + 1)
        return None if operand is None else (-operand if isinstance(node.op, ast.USub) else operand)
    if not isinstance(node, ast.BinOp):
        return None
    left, right = _evaluate(node.left, depth + 1), _evaluate(node.right, depth + 1)
    if left is None or right is None:
        return None
    if isinstance(node.op, ast.Add):
        result = left + right
    elif isinstance(node.op, ast.Sub):
        result = left - right
    elif isinstance(node.op, ast.Mult):
        result = left * right
    elif isinstance(node.op, (ast.Div, ast.FloorDiv, ast.Mod)) and right:
        quotient = abs(left) // abs(right) * (1 if (left < 0) == (right < 0) else -1)
        result = quotient if not isinstance(node.op, ast.Mod) else left - quotient * right
    else:
        return None
    return result if abs(result) < _MAX_VALUE else None


__all__ = ["arithmetic"]
