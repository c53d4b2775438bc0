from __future__ import annotations

from pathlib import Path

import pytest

from pytest_harness_audit.tools import ToolBox


@pytest.fixture
def project(root: Path) -> Path:
    files = {
        "README.md": "# Demo\nTODO: write docs\n",
        "app/__init__.py": "",
        "app/core.py": "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n",
        "app/util/strings.py": "def shout(s):\n    return s.upper()  # TODO unicode\n",
        "web/index.ts": "export const x = 1;\n",
        "web/view.tsx": "export const View = () => null;\n",
        ".env": "API_KEY=sk-test-123\n",
        ".git/config": "[core]\nTODO = not a project file\n",
    }
    for name, content in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content)
    (root / "blob.bin").write_bytes(b"TODO\0binary")
    return root


# -- Glob ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        ({"pattern": "**/*.py"}, ["app/__init__.py", "app/core.py", "app/util/strings.py"]),
        ({"pattern": "*.md"}, ["README.md"]),
        ({"pattern": "*.py"}, []),
        ({"pattern": "*.py", "path": "app"}, ["app/__init__.py", "app/core.py"]),
        ({"pattern": "**/*.{ts,tsx}"}, ["web/index.ts", "web/view.tsx"]),
        ({"pattern": "app/[c]*.py"}, ["app/core.py"]),
        ({"pattern": "**/.env"}, [".env"]),
        ({"pattern": "./web/*.ts"}, ["web/index.ts"]),
        ({"pattern": "**/config"}, []),
    ],
)
def test_glob(toolbox: ToolBox, project: Path, params: dict[str, str], expected: list[str]) -> None:
    outcome = toolbox.run("Glob", params)
    assert outcome.status == "success"
    assert outcome.output == "\n".join(expected)


def test_glob_accepts_an_absolute_pattern_inside_the_root(toolbox: ToolBox, project: Path) -> None:
    outcome = toolbox.run("Glob", {"pattern": f"{toolbox.root}/web/*.ts"})
    assert outcome.output == "web/index.ts"


def test_glob_errors(toolbox: ToolBox, project: Path) -> None:
    assert toolbox.run("Glob", {"pattern": "{a,b"}).error_message == (
        "Glob: unbalanced '{' in glob '{a,b'"
    )
    assert toolbox.run("Glob", {"pattern": "*", "path": "nope"}).error_message == (
        "Glob: path not found: nope"
    )


# -- Grep ------------------------------------------------------------------------------------


def test_grep_lists_files_with_matches_by_default(toolbox: ToolBox, project: Path) -> None:
    outcome = toolbox.run("Grep", {"pattern": "TODO"})
    # .git is skipped, and so is the binary file.
    assert outcome.output == "README.md\napp/util/strings.py"


def test_grep_content_mode_with_line_numbers(toolbox: ToolBox, project: Path) -> None:
    outcome = toolbox.run("Grep", {"pattern": r"return a [+-] b", "output_mode": "content"})
    assert outcome.output == "app/core.py:2:    return a + b\napp/core.py:6:    return a - b"


def test_grep_content_without_numbers_and_with_context(toolbox: ToolBox, project: Path) -> None:
    outcome = toolbox.run(
        "Grep",
        {
            "pattern": "def sub",
            "path": "app/core.py",
            "output_mode": "content",
            "-n": False,
            "-B": 1,
            "-A": 1,
        },
    )
    assert (
        outcome.output == "app/core.py-\napp/core.py:def sub(a, b):\napp/core.py-    return a - b"
    )


def test_grep_context_groups_are_separated(toolbox: ToolBox, project: Path) -> None:
    outcome = toolbox.run(
        "Grep", {"pattern": "^def", "path": "app/core.py", "output_mode": "content", "-C": 0}
    )
    assert outcome.output == "app/core.py:1:def add(a, b):\napp/core.py:5:def sub(a, b):"
    outcome = toolbox.run(
        "Grep", {"pattern": "return", "path": "app/core.py", "output_mode": "content", "-A": 1}
    )
    assert outcome.output == (
        "app/core.py:2:    return a + b\napp/core.py-3-\n--\napp/core.py:6:    return a - b"
    )


def test_grep_count_mode(toolbox: ToolBox, project: Path) -> None:
    outcome = toolbox.run("Grep", {"pattern": "return", "output_mode": "count"})
    assert outcome.output == "app/core.py:2\napp/util/strings.py:1"


def test_grep_case_insensitive(toolbox: ToolBox, project: Path) -> None:
    assert toolbox.run("Grep", {"pattern": "todo"}).output == ""
    assert toolbox.run("Grep", {"pattern": "todo", "-i": True}).output == (
        "README.md\napp/util/strings.py"
    )


def test_grep_glob_filter_on_name_and_on_path(toolbox: ToolBox, project: Path) -> None:
    assert toolbox.run("Grep", {"pattern": "TODO", "glob": "*.py"}).output == (
        "app/util/strings.py"
    )
    assert toolbox.run("Grep", {"pattern": "a", "glob": "app/*.py"}).output == "app/core.py"


def test_grep_type_filter(toolbox: ToolBox, project: Path) -> None:
    assert toolbox.run("Grep", {"pattern": "export", "type": "ts"}).output == (
        "web/index.ts\nweb/view.tsx"
    )
    outcome = toolbox.run("Grep", {"pattern": "x", "type": "cobol"})
    assert outcome.error_message is not None
    assert outcome.error_message.startswith("Grep: unknown file type 'cobol' (known: css, ")


def test_grep_finds_dotfiles(toolbox: ToolBox, project: Path) -> None:
    assert toolbox.run("Grep", {"pattern": "API_KEY"}).output == ".env"


def test_grep_head_limit(toolbox: ToolBox, project: Path) -> None:
    outcome = toolbox.run("Grep", {"pattern": ".", "output_mode": "content", "head_limit": 2})
    assert outcome.output.splitlines() == [".env:1:API_KEY=sk-test-123", "README.md:1:# Demo"]


def test_grep_multiline_spans_lines(toolbox: ToolBox, project: Path) -> None:
    params = {"pattern": r"add\(a, b\):.*?return", "output_mode": "content"}
    assert toolbox.run("Grep", params).output == ""
    outcome = toolbox.run("Grep", {**params, "multiline": True})
    assert outcome.output == "app/core.py:1:def add(a, b):\napp/core.py:2:    return a + b"


def test_grep_invalid_regex_is_an_error(toolbox: ToolBox, project: Path) -> None:
    outcome = toolbox.run("Grep", {"pattern": "(?=lookahead)"})
    assert outcome.status == "error"
    assert (
        outcome.error_message == "Grep: invalid regex '(?=lookahead)': invalid perl operator: (?="
    )


def test_grep_catastrophic_pattern_is_linear(toolbox: ToolBox, root: Path) -> None:
    (root / "a.txt").write_text("a" * 5000 + "!\n")
    outcome = toolbox.run("Grep", {"pattern": "(a+)+$"})
    assert (outcome.status, outcome.output) == ("success", "")


def test_grep_bad_output_mode(toolbox: ToolBox, project: Path) -> None:
    outcome = toolbox.run("Grep", {"pattern": "x", "output_mode": "lines"})
    assert outcome.error_message == (
        "Grep: parameter 'output_mode' must be one of files_with_matches, content, count "
        "(got 'lines')"
    )
