from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from pytest_harness_audit.errors import UsageError
from pytest_harness_audit.tools import (
    BUILTIN_TOOLS,
    NetworkStub,
    TaskRecord,
    TodoItem,
    ToolBox,
    ToolFailure,
    ToolOutcome,
)


def test_names_lists_builtins_and_registered_tools(toolbox: ToolBox) -> None:
    assert toolbox.names() == sorted(BUILTIN_TOOLS)
    toolbox.register("Deploy", lambda params: "ok")
    assert "Deploy" in toolbox.names()


def test_unknown_tool_is_an_error_outcome(toolbox: ToolBox) -> None:
    outcome = toolbox.run("Teleport", {})
    assert outcome.status == "error"
    assert outcome.error_message is not None
    assert outcome.error_message.startswith("unknown tool 'Teleport' (available: Bash, Edit, ")


def test_parameters_must_be_a_mapping(toolbox: ToolBox) -> None:
    outcome = toolbox.run("Read", ["file_path"])  # type: ignore[arg-type]
    assert outcome.error_message == "Read: parameters must be a mapping, got list"


def test_root_must_be_a_directory(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="workspace root is not a directory"):
        ToolBox(tmp_path / "missing")


# -- custom tools ----------------------------------------------------------------------------


def test_custom_tool_output_and_category(toolbox: ToolBox) -> None:
    seen: list[Mapping[str, Any]] = []

    def deploy(params: Mapping[str, Any]) -> dict[str, str]:
        seen.append(params)
        return {"deployed": params["env"]}

    toolbox.register("Deploy", deploy, category="deployment")
    outcome = toolbox.run("Deploy", {"env": "staging"})
    assert outcome == ToolOutcome(status="success", output={"deployed": "staging"})
    assert seen == [{"env": "staging"}]
    assert toolbox.category_of("Deploy") == "deployment"
    assert toolbox.category_of("Read") is None
    assert toolbox.category_of("Nope") is None


def test_custom_tool_exception_becomes_an_error_outcome(toolbox: ToolBox) -> None:
    def broken(params: Mapping[str, Any]) -> None:
        raise RuntimeError("database is down")

    toolbox.register("Query", broken)
    outcome = toolbox.run("Query", {})
    assert outcome.status == "error"
    assert outcome.error_message == "Query raised RuntimeError: database is down"


def test_custom_tool_may_fail_with_its_own_message_or_outcome(toolbox: ToolBox) -> None:
    def refuse(params: Mapping[str, Any]) -> None:
        raise ToolFailure("quota exceeded", output="partial")

    toolbox.register("Refuse", refuse)
    toolbox.register("Explicit", lambda p: ToolOutcome.failure("said no"))
    assert toolbox.run("Refuse", {}) == ToolOutcome("error", "partial", "quota exceeded")
    assert toolbox.run("Explicit", {}) == ToolOutcome("error", None, "said no")


def test_custom_tool_gets_a_copy_of_the_parameters(toolbox: ToolBox) -> None:
    toolbox.register("Mutate", lambda params: params.pop("x"))  # type: ignore[attr-defined]
    params = {"x": 1}
    toolbox.run("Mutate", params)
    assert params == {"x": 1}


@pytest.mark.parametrize(
    ("name", "fn", "category", "message"),
    [
        ("", lambda p: None, None, "the tool name must be a non-empty string"),
        ("X", "not callable", None, "the tool must be callable"),
        ("X", lambda p: None, "", "category must be a non-empty string"),
    ],
)
def test_register_validates_its_arguments(
    toolbox: ToolBox, name: str, fn: Any, category: str | None, message: str
) -> None:
    with pytest.raises(UsageError, match=message):
        toolbox.register(name, fn, category=category)


# -- TodoWrite and Task ----------------------------------------------------------------------


def test_todowrite_stores_the_list_and_summarises(toolbox: ToolBox) -> None:
    todos = [
        {"content": "Read the code", "status": "completed", "activeForm": "Reading the code"},
        {"content": "Fix the bug", "status": "in_progress"},
        {"content": "Run tests", "status": "pending", "priority": "high", "id": "3"},
    ]
    outcome = toolbox.run("TodoWrite", {"todos": todos})
    assert outcome.output == "todos updated: 3 items (1 completed, 1 in_progress, 1 pending)"
    assert toolbox.todos == (
        TodoItem("Read the code", "completed", active_form="Reading the code"),
        TodoItem("Fix the bug", "in_progress"),
        TodoItem("Run tests", "pending", priority="high", id="3"),
    )
    toolbox.run("TodoWrite", {"todos": []})
    assert toolbox.todos == ()


@pytest.mark.parametrize(
    ("todos", "message"),
    [
        ("do it", "TodoWrite: parameter 'todos' must be a list (got 'do it')"),
        (
            [{"content": "x", "status": "done"}],
            "TodoWrite: todos[0].status must be one of pending, in_progress, completed "
            "(got 'done')",
        ),
        (
            [{"status": "pending"}],
            "TodoWrite: todos[0].content must be a non-empty string (got None)",
        ),
        (
            [{"content": "x", "status": "pending", "owner": "me"}],
            "TodoWrite: todos[0]: unknown key 'owner' "
            "(accepted: activeForm, content, id, priority, status)",
        ),
    ],
)
def test_todowrite_rejects_bad_lists_and_keeps_the_old_one(
    toolbox: ToolBox, todos: Any, message: str
) -> None:
    toolbox.run("TodoWrite", {"todos": [{"content": "keep", "status": "pending"}]})
    outcome = toolbox.run("TodoWrite", {"todos": todos})
    assert outcome.error_message == message
    assert toolbox.todos == (TodoItem("keep", "pending"),)


def test_task_is_recorded_not_run(toolbox: ToolBox, root: Path) -> None:
    outcome = toolbox.run(
        "Task",
        {"description": "Audit deps", "prompt": "rm -rf / please", "subagent_type": "reviewer"},
    )
    assert outcome.output == "task recorded, not run in the harness: Audit deps (reviewer)"
    toolbox.run("Task", {"description": "Second", "prompt": "p"})
    assert toolbox.tasks == (
        TaskRecord("Audit deps", "rm -rf / please", "reviewer"),
        TaskRecord("Second", "p", "general-purpose"),
    )
    assert list(root.iterdir()) == []


def test_task_requires_a_prompt(toolbox: ToolBox) -> None:
    outcome = toolbox.run("Task", {"description": "x"})
    assert outcome.error_message == "Task: parameter 'prompt' is required"


# -- WebFetch and WebSearch ------------------------------------------------------------------


def test_webfetch_answers_only_registered_urls(toolbox: ToolBox, network: NetworkStub) -> None:
    network.add("https://docs.example.invalid/api", "<h1>API</h1>")
    outcome = toolbox.run("WebFetch", {"url": "https://docs.example.invalid/api", "prompt": "?"})
    assert outcome == ToolOutcome.success("<h1>API</h1>")
    outcome = toolbox.run("WebFetch", {"url": "https://evil.example.invalid/?k=secret"})
    assert outcome.status == "error"
    assert outcome.error_message == (
        "network disabled in harness: no response registered for "
        "https://evil.example.invalid/?k=secret"
    )
    assert network.requests == [
        "https://docs.example.invalid/api",
        "https://evil.example.invalid/?k=secret",
    ]


def test_websearch_answers_registered_queries(toolbox: ToolBox, network: NetworkStub) -> None:
    network.add("pytest fixtures", "1. docs.pytest.org")
    assert toolbox.run("WebSearch", {"query": "pytest fixtures"}).output == "1. docs.pytest.org"
    outcome = toolbox.run("WebSearch", {"query": "other", "allowed_domains": ["a.com"]})
    assert outcome.error_message == (
        "network disabled in harness: no response registered for other"
    )
    assert "pytest fixtures" in network
    assert "other" not in network


def test_toolbox_makes_its_own_network_stub(root: Path) -> None:
    toolbox = ToolBox(root)
    toolbox.network.add("q", "a")
    assert toolbox.run("WebSearch", {"query": "q"}).output == "a"


def test_network_add_validates(network: NetworkStub) -> None:
    with pytest.raises(UsageError, match="must be a non-empty string"):
        network.add("", "body")
    with pytest.raises(UsageError, match="must be a string, got bytes"):
        network.add("https://x.invalid", b"body")  # type: ignore[arg-type]


def test_webfetch_requires_a_url(toolbox: ToolBox) -> None:
    assert toolbox.run("WebFetch", {"prompt": "x"}).error_message == (
        "WebFetch: parameter 'url' is required"
    )
