"""An exception a function tool raises whose text is not in its ``args``.

The function-tool door redacts the known secrets in the text of an exception a tool raises (its
string ``args`` and a ``message``) before the framework reads it. The OpenAI Agents SDK hands the
model ``str(exc)`` through a ``failure_error_function`` (the SDK's way to show it); for a
``subprocess.CalledProcessError`` that is the command (a list, not a string argument), for an
``OSError`` its ``filename``, for an exception with its own ``__str__`` an attribute: those
are redacted too, or the exception replaced by one of the same name with the redacted text.
The benign twin: a ``RuntimeError`` quoting the key is redacted.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from agent_support import agents_sdk_run, first_output
from secret_support import api_key, service_harness

from pytest_harness_audit.session.harness import Harness


@pytest.fixture
def harness(tmp_path: Path) -> Iterator[Harness]:
    yield from service_harness(tmp_path)


def _model_reads(tool: Any) -> str:
    """What the model reads back after one call of ``deploy`` (the OpenAI Agents SDK, a
    scripted model)."""
    return agents_sdk_run([tool], ("deploy", {"target": "staging"}), answer=first_output)


class DeployError(Exception):
    """A tool's own error that names the token it used (its text is built by ``__str__``)."""

    def __init__(self, token: str) -> None:
        super().__init__("deploy failed")
        self.token = token

    def __str__(self) -> str:
        return f"deploy failed for token {self.token}"


def _called_process(key: str) -> None:
    subprocess.run(["false", f"--token={key}"], check=True)


def _missing_file(key: str) -> None:
    open(f"/nonexistent/{key}/settings.toml", encoding="utf-8")  # noqa: SIM115


def _own_str(key: str) -> None:
    raise DeployError(key)


def _plain(key: str) -> None:
    raise RuntimeError(f"deploy failed for token {key}")


def _run(harness: Harness, raiser: Callable[[str], None]) -> str:
    from agents import function_tool

    key = api_key(harness)

    def deploy(target: str) -> str:
        """Deploy the service to ``target``."""
        raiser(key)
        return "deployed"

    def tell_the_model(ctx: Any, error: Exception) -> str:
        return f"error: {error}"  # the SDK's documented way to show the model a tool's error

    return _model_reads(function_tool(harness.tool(deploy), failure_error_function=tell_the_model))


@pytest.mark.parametrize("raiser", [_called_process, _missing_file, _own_str])
def test_exception_text_reaches_the_model_redacted(
    harness: Harness, raiser: Callable[[str], None]
) -> None:
    read = _run(harness, raiser)
    assert "error" in read.lower()
    assert api_key(harness) not in read, read


def test_benign_twin_a_plain_exception_is_redacted(harness: Harness) -> None:
    read = _run(harness, _plain)
    assert "deploy failed for token [secret:" in read
    assert api_key(harness) not in read
