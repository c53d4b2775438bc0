"""The function-tool door: ``harness.tool(fn)`` gates a framework's native Python tools."""

from __future__ import annotations

import asyncio
import inspect
import typing
from collections.abc import Callable
from pathlib import Path

import pytest

from pytest_harness_audit.doors.tools import ToolCallBlocked
from pytest_harness_audit.errors import UsageError
from pytest_harness_audit.session.harness import Harness

Factory = Callable[..., Harness]


@pytest.fixture
def service(harness_factory: Factory) -> Harness:
    """A session on the python-service workspace (its ``.env`` holds the secrets) under safety."""
    return harness_factory("python-service", "safety")


def _reader(harness: Harness, **options: typing.Any) -> Callable[..., str]:
    root = harness.root

    @harness.tool(category="file_read", **options)
    def read_file(path: str, limit: int = 10_000) -> str:
        """Read a text file of the workspace."""
        return (root / path).read_text()[:limit]

    return read_file


def test_decorator_form_runs_the_allowed_call_and_records_it(service: Harness) -> None:
    read_file = _reader(service)
    text = read_file("README.md")
    assert text.startswith("# orders-service")
    (record,) = service.records
    assert record.tool == "read_file"
    assert record.status == "success"
    assert record.door == "tool"
    assert record.category == "file_read"
    assert record.target == "README.md"
    assert record.params == {"path": "README.md", "limit": 10_000}
    assert service.verdict.name == "PASS"


def test_call_form_with_a_name_and_keyword_arguments(service: Harness) -> None:
    calls: list[str] = []

    def shell(command: str) -> str:
        calls.append(command)
        return "ok"

    run = service.tool(shell, name="run_command", category="command")
    assert run.__name__ == "run_command"  # frameworks name the tool after __name__
    assert shell.__name__ == "shell"
    assert run(command="echo hi") == "ok"
    assert calls == ["echo hi"]
    (record,) = service.records
    assert (record.tool, record.category, record.target) == ("run_command", "command", "echo hi")


def test_a_denied_call_raises_and_the_function_never_runs(service: Harness) -> None:
    ran: list[str] = []

    @service.tool(category="command")
    def run_command(command: str) -> str:
        ran.append(command)
        return "done"

    with pytest.raises(ToolCallBlocked, match="Destructive command blocked") as caught:
        run_command("rm -rf app")
    assert ran == []
    assert (service.root / "app" / "pricing.py").exists()
    assert caught.value.tool == "run_command"
    assert caught.value.record["result"]["status"] == "blocked"
    (denied,) = service.denied("run_command")
    assert denied.rule_id == "deny-destructive-commands"
    assert service.verdict.name == "FAIL"


def test_on_block_return_hands_the_block_text_back(service: Harness) -> None:
    read_file = _reader(service, on_block="return")
    answer = read_file(".env")
    assert isinstance(answer, str)
    assert "Credential/secret file access denied" in answer
    assert "sk-test-" not in answer
    (denied,) = service.denied("read_file", target=".env")
    assert denied.status == "blocked"
    assert service.verdict.name == "FAIL"


def test_a_path_trick_is_read_as_the_file_it_names(service: Harness) -> None:
    read_file = _reader(service)
    with pytest.raises(ToolCallBlocked):
        read_file("app/../.env")


def test_an_output_holding_the_workspace_secret_is_redacted(service: Harness) -> None:
    root = service.root

    @service.tool(name="show_settings")  # no category: the read is not known as one
    def settings() -> str:
        return (root / ".env").read_text()

    shown = settings()
    assert "sk-test-4f9a1c2e7b3d8a6f0e5c9b2a1d7e3f8c" not in shown
    assert "[secret:" in shown
    (record,) = service.records
    assert record.status == "success"
    assert service.verdict.name == "FAIL"


def test_a_structured_output_is_redacted_as_its_json_view(service: Harness) -> None:
    root = service.root

    @service.tool
    def lookup(key: str) -> dict[str, typing.Any]:
        lines = (root / ".env").read_text().splitlines()
        return {"key": key, "lines": [line for line in lines if line.startswith(key)]}

    plain = lookup("NOPE")
    assert plain == {"key": "NOPE", "lines": []}
    leaked = lookup("API_KEY")
    assert leaked["key"] == "API_KEY"
    assert "[secret:" in leaked["lines"][0]
    assert "sk-test-" not in str(leaked)


def test_an_exception_quoting_the_workspace_secret_is_raised_redacted(service: Harness) -> None:
    root = service.root

    class SettingsError(Exception):
        pass

    @service.tool
    def load(name: str) -> str:
        raise SettingsError(f"bad {name}: {(root / '.env').read_text()}", 3)

    with pytest.raises(SettingsError) as raised:  # its own type, raised again
        load("prod")
    message, code = raised.value.args
    assert message.startswith("bad prod: ") and code == 3
    assert "sk-test-4f9a1c2e7b3d8a6f0e5c9b2a1d7e3f8c" not in message
    assert "[secret:" in message
    assert service.verdict.name == "FAIL"


def test_an_exception_is_recorded_as_an_error_and_raised_again(service: Harness) -> None:
    @service.tool
    def explode(reason: str) -> str:
        raise ValueError(f"cannot: {reason}")

    with pytest.raises(ValueError, match="cannot: now"):
        explode("now")
    (record,) = service.records
    assert record.status == "error"
    assert record.error_message == "ValueError: cannot: now"


def test_async_functions_stay_coroutine_functions(service: Harness) -> None:
    ran: list[str] = []

    @service.tool(category="command")
    async def run_command(command: str) -> str:
        await asyncio.sleep(0)
        ran.append(command)
        return f"ran {command}"

    assert inspect.iscoroutinefunction(run_command)
    assert asyncio.run(run_command("echo one")) == "ran echo one"
    with pytest.raises(ToolCallBlocked):
        asyncio.run(run_command(command="rm -rf app"))
    assert ran == ["echo one"]
    assert [r.status for r in service.records] == ["success", "blocked"]


def test_async_blocked_call_can_return_the_block_text(service: Harness) -> None:
    @service.tool(category="file_read", on_block="return")
    async def read_file(path: str) -> str:
        raise AssertionError("never runs")

    answer = asyncio.run(read_file(".env"))
    assert "denied" in answer


def test_async_exception_is_recorded_and_raised(service: Harness) -> None:
    @service.tool
    async def fail() -> str:
        raise RuntimeError("async boom")

    with pytest.raises(RuntimeError, match="async boom"):
        asyncio.run(fail())
    assert service.records[0].status == "error"


def test_positional_var_and_keyword_arguments_are_bound_by_name(service: Harness) -> None:
    @service.tool
    def grep(pattern: str, *paths: str, ignore_case: bool = False, **extra: str) -> int:
        return len(paths)

    assert grep("TODO", "a.py", "b.py", ignore_case=True, flavour="basic") == 2
    params = service.records[0].params
    assert params == {
        "pattern": "TODO",
        "paths": ["a.py", "b.py"],
        "ignore_case": True,
        "flavour": "basic",
    }


def test_arguments_that_do_not_fit_raise_type_error_unrecorded(service: Harness) -> None:
    read_file = _reader(service)
    with pytest.raises(TypeError):
        read_file()
    assert service.records == []


def test_values_without_json_form_are_recorded_by_type(service: Harness) -> None:
    class Context:
        pass

    @service.tool
    def with_context(ctx: Context, path: str) -> str:
        return path

    assert with_context(Context(), "README.md") == "README.md"
    params = service.records[0].params
    assert params == {"ctx": "<Context>", "path": "README.md"}


def test_metadata_and_signature_are_preserved(service: Harness) -> None:
    def read_file(path: str, limit: int = 10) -> str:
        """Read a file.

        Args:
            path: the file to read.
            limit: at most this many characters.
        """
        return path

    wrapped = service.tool(read_file, category="file_read")
    assert wrapped is not read_file
    assert wrapped.__name__ == "read_file"
    assert wrapped.__doc__ == read_file.__doc__
    assert wrapped.__annotations__ == read_file.__annotations__
    assert inspect.signature(wrapped) == inspect.signature(read_file)
    assert typing.get_type_hints(wrapped) == {"path": str, "limit": int, "return": str}


def test_a_category_makes_the_policy_read_the_call_as_that_kind(service: Harness) -> None:
    ran: list[str] = []

    @service.tool  # no category: `unknown`, judged by its command's denials only
    def shell(command: str) -> str:
        ran.append(command)
        return "pretended"

    @service.tool(category="command")
    def run_command(command: str) -> str:
        ran.append(command)
        return "pretended"

    with pytest.raises(ToolCallBlocked):
        shell("rm -rf app")
    with pytest.raises(ToolCallBlocked):
        run_command("rm -rf app")
    assert ran == []
    # (the two denials climb the immune ladder: its record follows them)
    assert [r.category for r in service.records][:2] == ["unknown", "command"]


def test_credential_files_are_denied_whatever_the_category(service: Harness) -> None:
    @service.tool
    def fetch_file(path: str) -> str:
        raise AssertionError("never runs")

    with pytest.raises(ToolCallBlocked, match="Credential"):
        fetch_file(".env")


def test_a_registered_tool_can_be_replayed_as_a_scripted_call(service: Harness) -> None:
    read_file = _reader(service)
    assert read_file is not None
    result = service.call("read_file", path="README.md", limit=8)
    assert result.ok
    assert result.output == "# orders"


def test_a_builtin_name_keeps_its_builtin_category(service: Harness, tmp_path: Path) -> None:
    @service.tool
    def Bash(command: str) -> str:
        return "pretend"

    with pytest.raises(ToolCallBlocked):
        Bash("rm -rf app")
    with pytest.raises(UsageError, match="built-in"):
        service.tool(Bash, name="Read", category="command")
    assert service.call("Read", file_path="README.md").ok  # the built-in Read is untouched


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"on_block": "ignore"}, "on_block"),
        ({"name": ""}, "name"),
        ({"category": ""}, "category"),
    ],
)
def test_bad_options_are_usage_errors(
    service: Harness, options: dict[str, typing.Any], message: str
) -> None:
    def probe(path: str) -> str:
        return path

    with pytest.raises(UsageError, match=message):
        service.tool(probe, **options)


def test_a_lambda_needs_a_name(service: Harness) -> None:
    with pytest.raises(UsageError, match="name="):
        service.tool(lambda path: path)
    gated = service.tool(lambda path: path, name="echo_path")
    assert gated("x") == "x"


def test_the_chain_of_function_tool_calls_verifies(service: Harness) -> None:
    read_file = _reader(service, on_block="return")
    read_file("README.md")
    read_file(".env")
    report = service.verify()
    assert report.valid
    assert [r.status for r in service.calls()] == ["success", "blocked"]


def test_a_host_tool_name_the_toolbox_lacks_runs_the_function(service: Harness) -> None:
    """``SendMessage`` is a host's tool name with a category but no built-in of the toolbox: a
    framework's function of that name is the tool, judged as a message."""
    sent: list[str] = []

    @service.tool
    def SendMessage(to: str, message: str) -> str:
        sent.append(message)
        return "sent"

    assert SendMessage("agent:bob", "the tests pass") == "sent"
    (record,) = service.records
    assert (record.tool, record.category, record.status) == ("SendMessage", "message", "success")
    assert sent == ["the tests pass"]
