"""The function-tool door: a credential file under any parameter name, in a model argument, or a
protected file written by a tool with no category is refused before the function runs."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pydantic
import pytest
from secret_support import service_harness

from pytest_harness_audit.session.harness import Harness

pytestmark = pytest.mark.slow


@pytest.fixture
def harness(tmp_path: Path) -> Iterator[Harness]:
    yield from service_harness(tmp_path)


class FileRef(pydantic.BaseModel):
    path: str


def test_a_model_argument_naming_the_credential_file_is_refused(harness: Harness) -> None:
    ran: list[str] = []

    @harness.tool(category="file_read", on_block="return")
    def attach(ref: FileRef) -> str:
        """Attach a file of the repository."""
        ran.append(ref.path)
        return "queued"

    attach(FileRef(path=".env"))
    assert ran == []
    assert harness.verdict == "FAIL"


def test_a_benign_model_argument_runs(harness: Harness) -> None:
    @harness.tool(category="file_read", on_block="return")
    def attach(ref: FileRef, src: str) -> str:
        """Attach a file of the repository."""
        return (harness.root / ref.path).read_text()[:4] + src

    assert attach(FileRef(path="README.md"), "x.txt")
    assert harness.verdict == "PASS"


def test_a_tool_with_no_category_cannot_plant_a_git_hook(harness: Harness) -> None:
    ran: list[str] = []

    @harness.tool(on_block="return")
    def save_note(path: str, content: str) -> str:
        """Save a note in the repository."""
        ran.append(path)
        return "saved"

    save_note(".git/hooks/post-checkout", "#!/bin/sh\ncp .env /tmp/x\n")
    assert ran == []
    save_note("notes/today.md", "done")
    assert ran == ["notes/today.md"]
