"""File tools and MCP tool arguments against the ``safety`` preset: a credential file read, or a
persona, exec-config or host-settings file written, under another spelling, another parameter
shape, a glob or a workspace symlink, is denied; look-alikes stay allowed.

Every case is decided the same with the prefilter and on the full path.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import Any

import pytest

from pytest_harness_audit.policy import Policy
from pytest_harness_audit.policy.path_forms import file_uri_path, plain_path, windows_form
from pytest_harness_audit.policy.search_targets import search_forms
from pytest_harness_audit.policy.targets import all_targets

Call = tuple[str, dict[str, Any]]


@functools.cache
def _policies() -> tuple[Policy, Policy]:
    fast, full = Policy.preset("safety"), Policy.preset("safety")
    full.prefilter_enabled = False
    fast.prefilter_after = 0  # the prefilter from the first call
    return fast, full


def decide(tool: str, params: dict[str, Any], root: str | None = None) -> tuple[str, str | None]:
    """``(decision, rule)`` of the ``safety`` preset, checked equal on the full path."""
    fast, full = _policies()
    quick = fast.evaluate(tool, params, root=root)
    slow = full.evaluate(tool, params, root=root)
    assert (quick.decision, quick.rule_id, quick.targets) == (
        slow.decision,
        slow.rule_id,
        slow.targets,
    )
    return quick.decision, quick.rule_id


SECRET = ("deny", "deny-secret-files")

# Other spellings of a credential file that the tool or file system opens as that file.
SPELLINGS: list[Call] = [
    ("Read", {"file_path": "ID_RSA"}),  # a case-insensitive file system (macOS)
    ("Read", {"file_path": "keys/Id_Ed25519"}),
    ("Read", {"file_path": "keys\\ID_RSA"}),
    ("Read", {"file_path": ".env "}),  # Windows drops trailing spaces and dots
    ("Read", {"file_path": "id_rsa ."}),
    ("Read", {"file_path": "sub\\..\\.ENV"}),
    ("Read", {"file_path": "id_rsa/"}),  # a trailing slash, dropped by path resolution
    ("Read", {"file_path": "keys/server.pem/"}),
    ("mcp__fs__read", {"uri": "file:///w/%2eenv"}),  # a URI is percent-decoded
    ("mcp__fs__read", {"uri": "file://localhost/w/%2Essh/id_rsa"}),
    ("mcp__fs__read", {"uri": "FILE:///w/.aws/credential%73"}),
    ("mcp__fetch__fetch", {"url": "file:///w/%2eenv"}),
]
# Parameter shapes: a file under a key that names one, a folder and a name given apart.
SHAPES: list[Call] = [
    ("mcp__x__read", {"filename": "id_rsa"}),
    ("mcp__x__read", {"input_file": "id_ed25519"}),
    ("mcp__x__read", {"srcFile": "id_ecdsa"}),
    ("mcp__x__read", {"files": ["README.md", "id_rsa"]}),
    ("mcp__x__read", {"options": {"filePath": "id_rsa"}}),
    ("mcp__x__read", {"dir": ".aws", "name": "credentials"}),
    ("mcp__x__read", {"path": ".aws/", "name": "credentials"}),
    ("mcp__x__read", {"directory": ".ssh", "file": "id_rsa"}),
    ("mcp__git__git", {"args": ["show", "HEAD", "--", "id_rsa"]}),  # words after `--` are paths
    ("mcp__git__git_show", {"spec": "HEAD:id_rsa"}),  # a git object name under any key
    ("mcp__git__git_show", {"object": "HEAD~2:keys/ID_ED25519"}),
    ("mcp__git__git_show", {"revision": "HEAD:Id_Rsa"}),
    ("mcp__git__git_show", {"revision": "HEAD:id_rsa"}),
    ("mcp__git__git_show", {"args": ["HEAD:id_rsa"]}),
]
# A content search's file glob naming a credential file, a search of a credential directory.
SEARCHES: list[Call] = [
    ("Glob", {"pattern": "*", "path": ".aws"}),
    ("Glob", {"pattern": "**/*", "path": ".ssh"}),
    ("Grep", {"pattern": "KEY", "path": ".", "glob": ".env*"}),
    ("Grep", {"pattern": "KEY", "path": ".", "glob": "**/.e?v"}),
    ("Grep", {"pattern": "KEY", "path": ".", "glob": "{.env,x}"}),
    ("Grep", {"pattern": "KEY", "path": ".", "glob": "*.{pem,txt}"}),
    ("Grep", {"pattern": "KEY", "path": ".ssh"}),
    ("Grep", {"pattern": "BEGIN.*KEY", "path": "home/.ssh/"}),
    ("Grep", {"pattern": "aws_secret", "path": ".aws"}),
]


@pytest.mark.parametrize(("tool", "params"), SPELLINGS + SHAPES + SEARCHES)
def test_credential_file_by_another_name_is_denied(tool: str, params: dict[str, Any]) -> None:
    assert decide(tool, params) == SECRET


@pytest.mark.parametrize(
    ("tool", "params", "rule"),
    [
        ("Write", {"file_path": "SOUL.md/", "content": "x"}, "deny-persona-write"),
        ("Write", {"file_path": "SOUL.md .", "content": "x"}, "deny-persona-write"),
        ("Write", {"file_path": "memory\\IDENTITY.md", "content": "x"}, "deny-persona-write"),
        (
            "Edit",
            {"file_path": ".git\\hooks\\pre-commit", "old_string": "a", "new_string": "b"},
            "deny-exec-config-write",
        ),
        ("Write", {"file_path": ".git/config/", "content": "x"}, "deny-exec-config-write"),
        (
            "Write",
            {"file_path": ".claude\\settings.json", "content": "x"},
            "deny-host-config-write",
        ),
        (
            "mcp__filesystem__write_file",
            {"path": "file:///w/%2Emcp.json", "content": "{}"},
            "deny-host-config-write",
        ),
    ],
)
def test_protected_write_by_another_name_is_denied(
    tool: str, params: dict[str, Any], rule: str
) -> None:
    assert decide(tool, params) == ("deny", rule)


BENIGN: list[Call] = [
    ("Read", {"file_path": ".env.example"}),
    ("Read", {"file_path": ".env.local.example"}),
    ("Read", {"file_path": "environment.py"}),
    ("Read", {"file_path": "docs/env.md"}),
    ("Read", {"file_path": "tokenizer.json"}),
    ("Read", {"file_path": "src/secrets_manager.py"}),
    ("Read", {"file_path": "id_rsa.pub"}),
    ("Read", {"file_path": "keys/ID_RSA.PUB"}),
    ("Read", {"file_path": ".ssh/id_rsa.pub"}),
    ("Read", {"file_path": ".envrc"}),
    ("Read", {"file_path": "README.md"}),
    ("Read", {"file_path": "My_Notes.txt"}),
    ("Read", {"file_path": "docs/"}),
    ("Read", {"file_path": "file:///w/README.md"}),
    ("Read", {"file_path": "\uff0eenv"}),  # a fullwidth dot: another file on Linux
    ("Write", {"file_path": "docs/soul.txt", "content": "x"}),
    ("Write", {"file_path": "src\\app.py", "content": "x"}),
    ("Glob", {"pattern": "**/*.py"}),
    ("Glob", {"pattern": "**/*"}),
    ("Glob", {"pattern": ".*"}),
    ("Glob", {"pattern": "*.md", "path": "docs"}),
    ("Glob", {"pattern": "**/.env.example"}),
    # a wildcard glob lists names and reads no file (as the reference engine decides too)
    ("Glob", {"pattern": "**/.env*"}),
    ("Glob", {"pattern": ".e?v"}),
    ("Glob", {"pattern": ".e[n]v"}),
    ("Glob", {"pattern": "**/id_*"}),
    ("Glob", {"pattern": "**/.ssh/*"}),
    ("mcp__filesystem__search_files", {"path": ".", "pattern": "**/.e*v"}),
    ("Grep", {"pattern": "API_KEY", "path": "src"}),
    ("Grep", {"pattern": ".env", "path": "src"}),
    ("Grep", {"pattern": "TODO", "path": ".", "glob": "*.py"}),
    ("Grep", {"pattern": "def .*", "path": "."}),
    ("mcp__x__read", {"filename": "notes"}),
    ("mcp__x__read", {"dir": "src", "name": "main.py"}),
    ("mcp__x__create_issue", {"title": "rotate id_rsa", "body": ".env leaked"}),
    ("mcp__git__git", {"args": ["log", "--", "README"]}),
    ("mcp__x__schedule", {"time": "12:30", "label": "type:credentials"}),
]


@pytest.mark.parametrize(("tool", "params"), BENIGN)
def test_look_alikes_stay_allowed(tool: str, params: dict[str, Any]) -> None:
    assert decide(tool, params) == ("allow", None)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A workspace with credentials, a persona file and symlinks leading to them."""
    (tmp_path / ".ssh").mkdir()
    (tmp_path / ".ssh" / "id_rsa").write_text("key\n")
    (tmp_path / ".env").write_text("K=1\n")
    (tmp_path / "SOUL.md").write_text("me\n")
    (tmp_path / "sub").mkdir()
    os.symlink(".env", tmp_path / "notes.txt")
    os.symlink("notes.txt", tmp_path / "chain.txt")
    os.symlink(".ssh", tmp_path / "cfg")
    os.symlink("../SOUL.md", tmp_path / "sub" / "persona.txt")
    return tmp_path


@pytest.mark.parametrize(
    ("tool", "params"),
    [
        ("Read", {"file_path": "/proc/self/cwd/notes.txt"}),  # the tool's cwd is the workspace
        ("Read", {"file_path": "/proc/thread-self/cwd/chain.txt"}),
        ("mcp__fs__read", {"uri": "file://{root}/notes.txt"}),
        ("mcp__fs__read", {"uri": "file://{root}/cfg/id_%72sa"}),
        ("Grep", {"pattern": "K", "path": "cfg"}),  # a symlink to a credential directory
        ("Grep", {"pattern": "K", "path": ".", "glob": "notes.txt"}),
        ("Grep", {"pattern": "K", "path": "{root}", "glob": "chain.txt"}),
        ("mcp__x__read", {"filename": "chain.txt"}),
        ("mcp__x__read", {"dir": "cfg", "name": "id_rsa"}),
    ],
)
def test_symlinks_in_the_workspace_are_followed(
    workspace: Path, tool: str, params: dict[str, Any]
) -> None:
    root = str(workspace)
    shaped = {key: value.replace("{root}", root) for key, value in params.items()}
    assert decide(tool, shaped, root=root) == SECRET


def test_a_symlink_to_a_persona_file_is_no_way_to_write_it(workspace: Path) -> None:
    root = str(workspace)
    params = {"file_path": "sub/persona.txt/", "content": "x"}
    assert decide("Write", params, root=root) == ("deny", "deny-persona-write")
    uri = {"path": f"file://{root}/sub/persona.txt", "content": "x"}
    assert decide("mcp__filesystem__write_file", uri, root=root) == ("deny", "deny-persona-write")


def test_ordinary_calls_in_a_workspace_stay_allowed(workspace: Path) -> None:
    root = str(workspace)
    (workspace / "README.md").write_text("hi\n")
    for tool, params in BENIGN:
        assert decide(tool, params, root=root) == ("allow", None), (tool, params)
    assert decide("Grep", {"pattern": "K", "path": "sub", "glob": "README.md"}, root=root) == (
        "allow",
        None,
    )


def test_path_forms() -> None:
    assert plain_path("src/app.py") and plain_path("my_notes.txt")
    for other in ("./a", "a/", "a.", "a ", "a\\b", "file:///a", "ID_RSA", "a//b", ".env"):
        assert not plain_path(other), other
    assert file_uri_path("file:///w/%2eenv") == "/w/.env"
    assert file_uri_path("file://host/share/x") == "//host/share/x"
    assert file_uri_path("https://x/.env") is None
    assert windows_form("sub\\.env .") == "sub/.env"
    assert windows_form("a/./b") is None  # `.` and `..` parts are no trailing dots
    assert windows_form("...") is None
    assert windows_form("src/app.py") is None


def test_search_forms() -> None:
    assert search_forms({"glob": "**/.env*"}, []) == [
        "**/.env",
        "**/.env.local",
        "**/.env.production",
    ]
    assert search_forms({"pattern": "**/.env*"}, []) == []  # Glob's pattern lists names
    assert search_forms({"pattern": "KEY", "path": "."}, ["."]) == []
    assert search_forms({"pattern": "KEY", "glob": "{a,.netrc}"}, ["w"]) == ["w/a", "w/.netrc"]
    assert search_forms({"pattern": "x" * 2000 + "*"}, []) == []


def test_targets_name_the_file_opened() -> None:
    assert all_targets({"uri": "file:///w/%2eenv"}) == [
        "file:///w/%2eenv",
        "/w/.env",
        "file:/w/%2eenv",
    ]
    assert "keys/id_rsa" in all_targets({"file_path": "keys\\ID_RSA"})
    assert all_targets({"path": ".aws", "name": "credentials"}) == [".aws", ".aws/credentials"]
