from __future__ import annotations

from pathlib import Path

import pytest

from pytest_harness_audit.tools import ToolBox


def write(root: Path, name: str, content: str | bytes) -> Path:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    return path


# -- Read ------------------------------------------------------------------------------------


def test_read_numbers_lines_like_cat_n(toolbox: ToolBox, root: Path) -> None:
    write(root, "notes.txt", "alpha\nbeta\n")
    outcome = toolbox.run("Read", {"file_path": "notes.txt"})
    assert outcome.status == "success"
    assert outcome.output == "     1\talpha\n     2\tbeta"
    assert outcome.error_message is None


def test_read_offset_and_limit_select_lines(toolbox: ToolBox, root: Path) -> None:
    write(root, "n.txt", "".join(f"line {i}\n" for i in range(1, 11)))
    outcome = toolbox.run("Read", {"file_path": "n.txt", "offset": 4, "limit": 2})
    assert outcome.output == "     4\tline 4\n     5\tline 5"


def test_read_defaults_to_first_2000_lines(toolbox: ToolBox, root: Path) -> None:
    write(root, "big.txt", "x\n" * 2500)
    output = toolbox.run("Read", {"file_path": "big.txt"}).output
    assert output.count("\n") == 1999
    assert output.splitlines()[-1] == "  2000\tx"


def test_read_keeps_a_last_line_without_newline(toolbox: ToolBox, root: Path) -> None:
    write(root, "t.txt", "a\r\nb")
    assert toolbox.run("Read", {"file_path": "t.txt"}).output == "     1\ta\n     2\tb"


def test_read_empty_file_is_empty_output(toolbox: ToolBox, root: Path) -> None:
    write(root, "empty.txt", "")
    outcome = toolbox.run("Read", {"file_path": "empty.txt"})
    assert (outcome.status, outcome.output) == ("success", "")


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"file_path": "missing.txt"}, "Read: file not found: missing.txt"),
        ({"file_path": "sub"}, "Read: is a directory, not a file: sub"),
        (
            {"file_path": "one.txt", "offset": 5},
            "Read: offset 5 is past the end of one.txt (1 lines)",
        ),
        (
            {"file_path": "one.txt", "offset": 0},
            "Read: parameter 'offset' must be an integer >= 1 (got 0)",
        ),
        (
            {"file_path": "one.txt", "limit": True},
            "Read: parameter 'limit' must be an integer (got True)",
        ),
        ({}, "Read: parameter 'file_path' is required"),
        ({"file_path": 3}, "Read: parameter 'file_path' must be a string (got 3)"),
        (
            {"path": "one.txt"},
            "Read: unknown parameter 'path' (accepted: file_path, limit, offset)",
        ),
    ],
)
def test_read_errors_are_outcomes_with_clear_messages(
    toolbox: ToolBox, root: Path, params: dict[str, object], message: str
) -> None:
    write(root, "one.txt", "only\n")
    (root / "sub").mkdir()
    outcome = toolbox.run("Read", params)
    assert outcome.status == "error"
    assert outcome.error_message == message


def test_read_refuses_a_fifo_instead_of_blocking(toolbox: ToolBox, root: Path) -> None:
    import os

    os.mkfifo(root / "pipe")
    outcome = toolbox.run("Read", {"file_path": "pipe"})
    assert outcome.error_message == "Read: not a regular file: pipe"


# -- Write -----------------------------------------------------------------------------------


def test_write_creates_parent_directories(toolbox: ToolBox, root: Path) -> None:
    outcome = toolbox.run("Write", {"file_path": "a/b/c.txt", "content": "héllo\n"})
    assert outcome.status == "success"
    assert outcome.output == "created a/b/c.txt (7 bytes)"
    assert (root / "a/b/c.txt").read_text(encoding="utf-8") == "héllo\n"


def test_write_replaces_an_existing_file(toolbox: ToolBox, root: Path) -> None:
    write(root, "f.txt", "old content\n")
    outcome = toolbox.run("Write", {"file_path": "f.txt", "content": ""})
    assert outcome.output == "updated f.txt (0 bytes)"
    assert (root / "f.txt").read_bytes() == b""


def test_write_to_a_directory_is_an_error(toolbox: ToolBox, root: Path) -> None:
    (root / "d").mkdir()
    outcome = toolbox.run("Write", {"file_path": "d", "content": "x"})
    assert outcome.error_message == "Write: is a directory, not a file: d"


def test_write_under_a_file_reports_the_path_as_given(toolbox: ToolBox, root: Path) -> None:
    write(root, "plain", "x")
    outcome = toolbox.run("Write", {"file_path": "plain/child.txt", "content": "x"})
    assert outcome.status == "error"
    assert outcome.error_message is not None
    assert outcome.error_message.startswith("Write: ")
    assert outcome.error_message.endswith(": plain/child.txt")
    assert str(root) not in outcome.error_message


def test_write_requires_string_content(toolbox: ToolBox) -> None:
    outcome = toolbox.run("Write", {"file_path": "x.txt", "content": ["a"]})
    assert outcome.error_message == "Write: parameter 'content' must be a string (got ['a'])"


# -- Edit ------------------------------------------------------------------------------------


def test_edit_replaces_a_unique_string(toolbox: ToolBox, root: Path) -> None:
    write(root, "m.py", "x = 1\ny = 2\n")
    outcome = toolbox.run(
        "Edit", {"file_path": "m.py", "old_string": "y = 2", "new_string": "y = 3"}
    )
    assert outcome.output == "edited m.py: 1 replacement"
    assert (root / "m.py").read_text() == "x = 1\ny = 3\n"


def test_edit_refuses_an_ambiguous_string(toolbox: ToolBox, root: Path) -> None:
    write(root, "m.py", "a = 0\na = 0\n")
    outcome = toolbox.run(
        "Edit", {"file_path": "m.py", "old_string": "a = 0", "new_string": "a = 1"}
    )
    assert outcome.status == "error"
    assert outcome.error_message == (
        "Edit: old_string occurs 2 times in m.py; "
        "add surrounding context to make it unique, or set replace_all"
    )
    assert (root / "m.py").read_text() == "a = 0\na = 0\n"


def test_edit_replace_all_changes_every_occurrence(toolbox: ToolBox, root: Path) -> None:
    write(root, "m.py", "a = 0\na = 0\n")
    outcome = toolbox.run(
        "Edit",
        {"file_path": "m.py", "old_string": "0", "new_string": "1", "replace_all": True},
    )
    assert outcome.output == "edited m.py: 2 replacements"
    assert (root / "m.py").read_text() == "a = 1\na = 1\n"


def test_edit_missing_string_is_an_error(toolbox: ToolBox, root: Path) -> None:
    write(root, "m.py", "a = 0\n")
    outcome = toolbox.run("Edit", {"file_path": "m.py", "old_string": "b", "new_string": "c"})
    assert outcome.error_message == "Edit: old_string not found in m.py"


def test_edit_identical_strings_is_an_error(toolbox: ToolBox, root: Path) -> None:
    write(root, "m.py", "a = 0\n")
    outcome = toolbox.run("Edit", {"file_path": "m.py", "old_string": "a", "new_string": "a"})
    assert outcome.error_message == (
        "Edit: old_string and new_string are the same; nothing to change"
    )


def test_edit_of_a_missing_file_is_an_error(toolbox: ToolBox) -> None:
    outcome = toolbox.run("Edit", {"file_path": "no.py", "old_string": "a", "new_string": "b"})
    assert outcome.error_message == "Edit: file not found: no.py"


def test_edit_keeps_bytes_that_are_not_utf8(toolbox: ToolBox, root: Path) -> None:
    write(root, "latin1.txt", b"caf\xe9 = 1\r\nkeep\r\n")
    toolbox.run("Edit", {"file_path": "latin1.txt", "old_string": "1", "new_string": "2"})
    assert (root / "latin1.txt").read_bytes() == b"caf\xe9 = 2\r\nkeep\r\n"
