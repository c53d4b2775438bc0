"""A function tool's lazy result (generator, iterator, file-like object) is read, bounded, before
inspection: the framework gets the list or text that was inspected — redacted when it held a
workspace secret — never the unread object."""

from __future__ import annotations

import asyncio
import io
import itertools
import json
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import pytest

from pytest_harness_audit.doors import lazy_results
from pytest_harness_audit.doors.lazy_results import materialised, materialised_async
from pytest_harness_audit.session.harness import Harness

Factory = Callable[..., Harness]


@pytest.fixture
def service(harness_factory: Factory) -> Harness:
    return harness_factory("python-service", "safety")


def _key(harness: Harness) -> str:
    env = (harness.root / ".env").read_text(encoding="utf-8")
    return next(line.split("=", 1)[1] for line in env.splitlines() if line.startswith("API_KEY="))


SHAPES: dict[str, Callable[[list[Any]], Any]] = {
    "generator": lambda items: (item for item in items),
    "iterator": iter,
    "map": lambda items: map(lambda item: item, items),
    "chain": lambda items: itertools.chain(["first"], items),
    "string-io": lambda items: io.StringIO("\n".join(map(str, items))),
    "bytes-io": lambda items: io.BytesIO("\n".join(map(str, items)).encode()),
    "nested-lists": lambda items: iter([[["deep", [item]]] for item in items]),
    "dict-items": lambda items: ({"line": item, "ключ": [item]} for item in items),
}


def _text(result: Any) -> str:
    if isinstance(result, bytes):
        return result.decode()
    return result if isinstance(result, str) else json.dumps(result, ensure_ascii=False)


@pytest.mark.parametrize("shape", list(SHAPES))
def test_a_lazy_result_holding_the_key_is_redacted(service: Harness, shape: str) -> None:
    key = _key(service)
    root = service.root

    @service.tool(category="file_read", on_block="return")
    def search_repo(query: str) -> Any:
        """Lines of the repository's top-level files containing ``query``."""
        lines = [
            line
            for path in sorted(root.iterdir())
            if path.is_file()
            for line in path.read_text(errors="replace").splitlines()
            if query in line
        ]
        return SHAPES[shape](lines)

    shown = _text(search_repo("API_KEY"))
    assert key not in shown
    assert "[secret:" in shown
    assert service.verdict == "FAIL"


def test_an_async_generator_result_is_read_and_redacted(service: Harness) -> None:
    key = _key(service)

    @service.tool(on_block="return")
    async def stream_env() -> AsyncIterator[str]:
        """Stream a file."""

        async def lines() -> AsyncIterator[str]:
            yield "header"
            yield f"API_KEY={key}"

        return lines()

    shown = asyncio.run(stream_env())
    assert isinstance(shown, list) and len(shown) == 2
    assert key not in json.dumps(shown)
    assert service.verdict == "FAIL"


def test_a_huge_generator_is_bounded_and_says_so(
    service: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(lazy_results, "MAXIMUM_ITEMS", 50)
    key = _key(service)
    closed: list[bool] = []

    @service.tool(on_block="return")
    def endless() -> Iterator[str]:
        """Numbers for ever (the key among them)."""

        def numbers() -> Iterator[str]:
            try:
                yield f"API_KEY={key}"
                for n in itertools.count():
                    yield str(n)
            finally:
                closed.append(True)

        return numbers()

    shown = endless()
    assert len(shown) == 51 and "truncated by the audit harness" in shown[-1]
    assert closed == [True]
    assert key not in json.dumps(shown)
    assert service.verdict == "FAIL"


# -- benign look-alikes ---------------------------------------------------------------------


def test_an_ordinary_generator_reaches_the_framework_as_its_list(service: Harness) -> None:
    @service.tool(on_block="return")
    def todo_lines() -> Iterator[str]:
        """TODO lines."""
        return (f"TODO {n}" for n in range(3))

    assert todo_lines() == ["TODO 0", "TODO 1", "TODO 2"]
    assert service.verdict == "PASS"
    (call,) = service.calls()
    assert call.status == "success"


def test_ordinary_values_are_handed_over_unchanged(service: Harness) -> None:
    value = {"rows": [1, 2, 3]}
    readme = range(3)

    @service.tool(on_block="return")
    def rows() -> dict[str, Any]:
        """Rows."""
        return value

    @service.tool(on_block="return")
    def numbers() -> range:
        """A range (iterable, not an iterator)."""
        return readme

    assert rows() is value
    assert numbers() is readme
    assert service.verdict == "PASS"


# -- the reading itself (no session) ---------------------------------------------------------


def test_a_large_file_is_read_up_to_the_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lazy_results, "MAXIMUM_CHARACTERS", 100)
    text = materialised(io.StringIO("a" * 1000))
    assert text.startswith("a" * 100) and text.endswith("longer than 100 characters]")
    data = materialised(io.BytesIO(b"b" * 1000))
    assert isinstance(data, bytes) and data.startswith(b"b" * 100)
    assert materialised(io.StringIO("short")) == "short"


def test_strings_and_bytes_are_not_lazy() -> None:
    for value in ("text", b"bytes", bytearray(b"x"), [1], {"a": 1}, None, 3):
        assert materialised(value) is value


def test_materialised_async_reads_plain_iterators_too() -> None:
    assert asyncio.run(materialised_async(iter([1, 2]))) == [1, 2]
    assert asyncio.run(materialised_async("text")) == "text"


@pytest.mark.slow  # importing pydantic-ai takes seconds
def test_pydantic_ai_reads_a_gated_generator_as_it_reads_a_plain_one(service: Harness) -> None:
    """pydantic-ai serialises a generator result as a JSON list: the gated tool hands it that
    list (read and inspected), so the model reads the same text, redacted."""
    pytest.importorskip("pydantic_ai")
    from pydantic_ai.messages import ToolReturnPart

    key = _key(service)

    def lines() -> Iterator[str]:
        """Lines."""
        return (line for line in ["ok", f"API_KEY={key}"])

    plain = ToolReturnPart(tool_name="lines", content=lines(), tool_call_id="1")
    gated = ToolReturnPart(
        tool_name="lines", content=service.tool(lines, on_block="return")(), tool_call_id="2"
    )
    plain_text, gated_text = plain.model_response_str(), gated.model_response_str()
    assert json.loads(plain_text)[0] == json.loads(gated_text)[0] == "ok"
    assert key in plain_text
    assert key not in gated_text
