"""A function tool's result whose text is not its fields: the text the framework shows is read.

The OpenAI Agents SDK hands the model ``str(result)`` for a result that is no text and no
structured tool output. The door inspected a dataclass (or pydantic model) result by its fields
only: a result whose own ``__str__`` renders more than its fields (here the settings file,
read when it is rendered) reached the model unredacted and the session was PASS. Such a result
is now read as its fields and its text, and the text is made inside the call. Benign twins: a
result whose text shows only its fields, and a plain dataclass result, keep their value.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from agent_support import agents_sdk_run, first_output
from pydantic import BaseModel, Field
from secret_support import api_key, service_harness

from pytest_harness_audit.session.harness import Harness


@pytest.fixture
def harness(tmp_path: Path) -> Iterator[Harness]:
    yield from service_harness(tmp_path)


def _model_reads(tool: Any, name: str) -> str:
    """What the model reads back after one call of ``name`` (the OpenAI Agents SDK)."""
    pytest.importorskip("agents")
    from agents import function_tool

    return agents_sdk_run([function_tool(tool)], (name, {"service": "orders"}), answer=first_output)


@dataclasses.dataclass
class Status:
    """A service's status, rendered with the settings it runs with."""

    service: str
    healthy: bool
    root: Path

    def __str__(self) -> str:
        settings = (self.root / ".env").read_text(encoding="utf-8")
        return f"{self.service}: healthy={self.healthy}\n{settings}"


@dataclasses.dataclass
class Health:
    """A service's status, rendered as its fields."""

    service: str
    healthy: bool

    def __str__(self) -> str:
        return f"{self.service}: healthy={self.healthy}"


@dataclasses.dataclass
class Plain:
    """A service's name."""

    service: str


def test_a_result_rendering_the_settings_file_is_redacted(harness: Harness) -> None:
    def status(service: str) -> Status:
        """Report a service's status."""
        return Status(service, True, harness.root)

    read = _model_reads(harness.tool(status, category="file_read"), "status")
    assert api_key(harness) not in read
    assert harness.verdict.value != "PASS"


def test_a_result_whose_text_shows_its_fields_keeps_its_value(harness: Harness) -> None:
    def status(service: str) -> Health:
        """Report a service's status."""
        return Health(service, True)

    assert _model_reads(harness.tool(status, category="file_read"), "status") == (
        "orders: healthy=True"
    )
    assert harness.verdict.value == "PASS"


def test_a_plain_dataclass_result_is_recorded_by_its_fields(harness: Harness) -> None:
    @harness.tool(category="file_read")
    def status(service: str) -> Plain:
        """Report a service's status."""
        return Plain(service)

    assert status("orders") == Plain("orders")
    assert harness.calls()[0].raw.get("output") in (None, {"service": "orders"})
    assert harness.verdict.value == "PASS"


class Login(BaseModel):
    """A login whose token its serialised form leaves out (its repr shows it)."""

    user: str
    token: str = Field(exclude=True)


def test_a_model_result_s_excluded_field_is_redacted_in_its_text(harness: Harness) -> None:
    def login(service: str) -> Login:
        """Log in to a service."""
        return Login(user=service, token=api_key(harness))

    read = _model_reads(harness.tool(login, category="file_read"), "login")
    assert api_key(harness) not in read
    assert harness.verdict.value != "PASS"
