"""An exception a function tool raised is redacted wherever its rendered text comes from."""

from __future__ import annotations

import subprocess

from pytest_harness_audit.doors.tool_errors import shown_exception

KEY = "sk-test-4f9a1c2e7b3d8a6f0e5c9b2a1d7e3f8c"


def _redact(text: str) -> str:
    return text.replace(KEY, "[secret:x]")


class DeployError(Exception):
    """Its text is built from an attribute no framework knows."""

    def __init__(self, token: str) -> None:
        super().__init__("deploy failed")
        self.token = token

    def __str__(self) -> str:
        return f"deploy failed for token {self.token}"


def _clean(exc: BaseException) -> None:
    for text in (str(exc), repr(exc), repr(exc.args)):
        assert KEY not in text, text


def test_a_command_list_and_its_output_are_redacted_in_place() -> None:
    exc = subprocess.CalledProcessError(1, ["deploy", f"--token={KEY}"], KEY.encode(), f"{KEY}!")
    assert shown_exception(exc, _redact) is exc
    _clean(exc)
    assert exc.cmd == ["deploy", "--token=[secret:x]"] and exc.output == b"[secret:x]"
    assert exc.stderr == "[secret:x]!"


def test_a_filename_is_redacted_in_place() -> None:
    exc = FileNotFoundError(2, "No such file or directory", f"/etc/{KEY}/s.toml")
    assert shown_exception(exc, _redact) is exc
    _clean(exc)
    assert "[secret:x]" in str(exc)


def test_an_exception_with_its_own_text_is_replaced_by_one_of_the_same_name() -> None:
    shown = shown_exception(DeployError(KEY), _redact)
    _clean(shown)
    assert type(shown).__name__ == "DeployError"
    assert str(shown) == "deploy failed for token [secret:x]"


def test_an_exception_without_a_secret_is_left_alone() -> None:
    exc = ValueError("bad target", ["staging"])
    assert shown_exception(exc, _redact) is exc
    assert exc.args == ("bad target", ["staging"])
