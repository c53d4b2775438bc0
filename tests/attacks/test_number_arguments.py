"""A function tool's argument a framework validated into a ``Decimal``.

A model's JSON number for a parameter typed ``Decimal`` (an amount) reaches the tool as a
``Decimal``, which has no JSON form: the door recorded and scanned it as ``<Decimal>``, so the
key's secret part as one decimal number left with the call, the session PASS; a list holding
one such number was hidden whole, a key beside it included. Such a number is now read as its
text: both calls are refused (FAIL). The benign twin: an ordinary amount passes, recorded.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path

import pytest
from secret_support import api_key, service_harness

from pytest_harness_audit.doors.tools import ToolCallBlocked
from pytest_harness_audit.session.harness import Harness


@pytest.fixture
def harness(tmp_path: Path) -> Iterator[Harness]:
    yield from service_harness(tmp_path)


def _pay(harness: Harness, amount: object) -> list[object]:
    """Call a gated ``pay`` tool with ``amount``; what it received."""
    received: list[object] = []

    @harness.tool(name="pay", category="mcp")  # type: ignore[untyped-decorator]
    def pay(amount: object) -> str:
        received.append(amount)
        return "paid"

    with contextlib.suppress(ToolCallBlocked):
        pay(amount)
    return received


def test_the_key_as_a_decimal_amount_is_refused(harness: Harness) -> None:
    amount = Decimal(int(api_key(harness)[len("sk-test-") :], 16))
    assert _pay(harness, amount) == []
    assert harness.verdict == "FAIL"


def test_the_key_beside_a_decimal_in_a_list_is_refused(harness: Harness) -> None:
    assert _pay(harness, [Decimal("1.50"), api_key(harness)]) == []
    assert harness.verdict == "FAIL"


def test_benign_twin_an_ordinary_amount_is_paid(harness: Harness) -> None:
    assert _pay(harness, Decimal("19.99")) == [Decimal("19.99")]
    assert harness.verdict == "PASS"
    (call,) = harness.calls()
    assert "19.99" in str(call.raw["request"]["params"])
