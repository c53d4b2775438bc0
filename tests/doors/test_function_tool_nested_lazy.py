"""Iterators inside a function tool's argument or result: read before they are judged.

The door read an iterator given as an argument (or inside a list or dict argument) before the
gate judged the call, and a lazy result before inspection. One level further it did not: an
``Iterable[str]`` field of a request model (which pydantic validates into an iterator) was
judged as ``<ValidatorIterator>`` — a path in it was never a target, so the tool read ``.env`` on
a call the gate allowed — and a generator in a dict, a list or a model's field of the result was
inspected as ``<generator object …>`` while the framework serialised it as the list of its items,
the key among them, in clear, and the session passed. Both are now read first. The benign twins:
ordinary iterators in the same places reach the tool, and the framework, with their items in
order, and the session passes.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import pydantic
import pytest
from pydantic_core import to_jsonable_python
from secret_support import api_key, service_harness

from pytest_harness_audit.doors.tools import ToolCallBlocked
from pytest_harness_audit.session.harness import Harness


@pytest.fixture
def harness(tmp_path: Path) -> Iterator[Harness]:
    yield from service_harness(tmp_path / "session")


class Upload(pydantic.BaseModel):
    """A request naming the files to send."""

    paths: Iterable[str]
    to: str = "reviewer"


@dataclasses.dataclass
class Batch:
    """A batch of files, as a dataclass argument."""

    paths: Iterator[str]


def _uploader(harness: Harness, read: list[str]) -> Callable[..., str]:
    @harness.tool(name="upload")  # type: ignore[untyped-decorator]
    def upload(request: Any) -> str:
        for path in request.paths:
            read.append(path)
            (harness.root / path).read_text(encoding="utf-8")
        return f"sent {len(read)} files"

    return upload  # type: ignore[no-any-return]


def _request(kind: str, paths: list[str]) -> Any:
    if kind == "model":
        return Upload.model_validate({"paths": paths})
    return Batch(iter(paths))


@pytest.mark.parametrize("kind", ["model", "dataclass"])
def test_an_iterator_field_naming_the_credential_file_is_judged(
    harness: Harness, kind: str
) -> None:
    read: list[str] = []
    upload = _uploader(harness, read)
    with contextlib.suppress(ToolCallBlocked):
        upload(_request(kind, ["README.md", ".env"]))
    assert read == []  # refused before the tool read anything
    assert harness.verdict == "FAIL"


@pytest.mark.parametrize("kind", ["model", "dataclass"])
def test_benign_twin_an_iterator_field_of_ordinary_files_reaches_the_tool(
    harness: Harness, kind: str
) -> None:
    read: list[str] = []
    upload = _uploader(harness, read)
    assert upload(_request(kind, ["README.md", "app/service.py"])) == "sent 2 files"
    assert read == ["README.md", "app/service.py"]
    assert harness.verdict == "PASS"


def _result(shape: str, items: list[str]) -> Any:
    lazy = (item for item in items)
    return {
        "dict": {"lines": lazy},
        "list": ["header", lazy],
        "tuple": ("header", lazy),
        "dataclass": Batch(lazy),
        "nested": {"page": {"rows": [lazy]}},
    }[shape]


def _reader(harness: Harness, shape: str, items: list[str]) -> Callable[..., Any]:
    @harness.tool(name="read_blob")  # type: ignore[untyped-decorator]
    def read_blob(ref: str) -> Any:
        return _result(shape, items)

    return read_blob  # type: ignore[no-any-return]


SHAPES = ["dict", "list", "tuple", "dataclass", "nested"]


@pytest.mark.parametrize("shape", SHAPES)
def test_a_generator_inside_a_result_is_read_and_redacted(harness: Harness, shape: str) -> None:
    key = api_key(harness)
    result = _reader(harness, shape, ["API_KEY=", key])("HEAD")
    # what a framework serialises for the model (pydantic-ai's, the Agents SDK's JSON)
    assert key not in json.dumps(to_jsonable_python(result))
    assert harness.verdict == "FAIL"


@pytest.mark.parametrize("shape", SHAPES)
def test_benign_twin_a_generator_inside_a_result_reaches_the_framework_as_its_list(
    harness: Harness, shape: str
) -> None:
    result = _reader(harness, shape, ["alpha", "beta"])("HEAD")
    assert "alpha" in json.dumps(to_jsonable_python(result))
    assert json.dumps(to_jsonable_python(result)).index("alpha") < json.dumps(
        to_jsonable_python(result)
    ).index("beta")
    assert harness.verdict == "PASS"


def test_pydantic_ai_reads_no_key_from_a_generator_in_a_result(harness: Harness) -> None:
    pytest.importorskip("pydantic_ai")
    from pydantic_ai import Agent
    from pydantic_ai.messages import (
        ModelMessage,
        ModelResponse,
        TextPart,
        ToolCallPart,
        ToolReturnPart,
    )
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    key = api_key(harness)
    tool = _reader(harness, "dict", ["API_KEY=", key])
    shown: list[str] = []

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        returned = [p for m in messages for p in m.parts if isinstance(p, ToolReturnPart)]
        if not returned:
            return ModelResponse(parts=[ToolCallPart("read_blob", {"ref": "HEAD"})])
        shown.extend(p.model_response_str() for p in returned)
        return ModelResponse(parts=[TextPart("done")])

    assert Agent(FunctionModel(respond), tools=[tool]).run_sync("go").output == "done"
    assert shown and key not in shown[0]
    assert harness.verdict == "FAIL"
