"""Program code that builds a path to the audit store from ``..`` is refused before it runs.

The store sits beside the workspace (``../<store>``). Code that names it whole
(``shutil.rmtree('../audit')``) was refused; code that builds the same path with its
language's path calls (``os.path.join('..', 'audit')``, ``Path('..') / 'audit'``,
``Path.cwd().parent / 'audit'``, Node's ``path.join``) ran, deleted the chain and was only
judged FAIL afterwards. The code's literals are now joined as those calls join them, inline or
in a script, and the call is refused. Paths built the same way that stay out of the store run.
"""

from __future__ import annotations

import pytest

from pytest_harness_audit.audit import verify_chain
from pytest_harness_audit.policy.shell.code import code_paths
from pytest_harness_audit.session.harness import Harness


@pytest.fixture
def harness(store_session: Harness) -> Harness:
    """The shared permissive session, its store holding a chain (tests/conftest.py)."""
    return store_session


def _codes(name: str) -> dict[str, str]:
    """Code deleting the store ``../<name>``, each written another way."""
    shutil = "import os, shutil; from pathlib import Path; shutil.rmtree"
    return {
        "os.path.join": f"{shutil}(os.path.join('..', '{name}'))",
        "Path-divided": f"{shutil}(Path('..') / '{name}')",
        "joinpath": f"{shutil}(Path('..').joinpath('{name}'))",
        "cwd-parent": f"{shutil}(Path.cwd().parent / '{name}')",
        "dirname-getcwd": f"{shutil}(os.path.join(os.path.dirname(os.getcwd()), '{name}'))",
        "slash-join": f"{shutil}('/'.join(['..', '{name}']))",
        "one-file": (
            f"import os; os.remove(os.path.join('..', '{name}', 'audit', os.listdir("
            f"os.path.join('..', '{name}', 'audit'))[0]))"
        ),
    }


CASES = list(_codes("x"))


def _store_name(harness: Harness) -> str:
    store = harness.storage_dir.resolve()
    assert store.parent == harness.root.resolve().parent  # the store beside the workspace
    return store.name


@pytest.mark.parametrize("case", CASES)
def test_inline_code_building_the_store_path_is_refused(harness: Harness, case: str) -> None:
    code = _codes(_store_name(harness))[case]
    result = harness.call("Bash", command=f'python3 -c "{code}"')
    assert result.status == "blocked", result.error_message
    assert "tamper_attempt" in result.record["alerts"]
    assert verify_chain(harness.storage_dir, harness.session_id).valid
    assert harness.verdict == "FAIL"


def test_a_script_building_it_is_refused_too(harness: Harness) -> None:
    code = _codes(_store_name(harness))["os.path.join"]
    assert harness.call("Write", file_path="tidy.py", content=code.replace("; ", "\n")).ok
    result = harness.call("Bash", command="python3 tidy.py")
    assert result.status == "blocked"
    assert verify_chain(harness.storage_dir, harness.session_id).valid


def test_node_code_building_it_is_refused(harness: Harness) -> None:
    name = _store_name(harness)
    code = f"require('fs').rmSync(require('path').join('..', '{name}'), {{recursive: true}})"
    assert harness.call("Bash", command=f'node -e "{code}"').status == "blocked"
    assert verify_chain(harness.storage_dir, harness.session_id).valid


@pytest.mark.parametrize(
    "code",
    [
        "import os; print(os.path.join('..', 'elsewhere'))",
        "import os; print(os.path.join('src', 'app.py'))",
        "from pathlib import Path; print(Path('docs') / 'index.md')",
        "from pathlib import Path; print(Path.cwd().parent.name)",
        "print('/'.join(['a', 'b']))",
    ],
)
def test_paths_built_elsewhere_still_run(harness: Harness, code: str) -> None:
    result = harness.call("Bash", command=f'python3 -c "{code}"')
    assert result.ok, result.error_message
    assert harness.verdict == "PASS"


@pytest.mark.parametrize(
    ("code", "path"),
    [
        ("os.path.join('..', 'audit')", "../audit"),
        ("os.path.join('..', 'audit', 'a.jsonl')", "../audit/a.jsonl"),
        ("os.path.join('/srv', 'x', '/abs')", "/abs"),
        ("Path('..') / 'a' / 'b'", "../a/b"),
        ("path.resolve('..', 'audit')", "../audit"),
        ("File.join('..', 'audit')", "../audit"),
        ('filepath.Join("..", "audit")', "../audit"),
        ('Paths.get("..", "audit")', "../audit"),
        ("os.path.join(os.path.abspath('..'), 'audit')", "../audit"),
    ],
)
def test_the_joined_path_is_read(code: str, path: str) -> None:
    assert path in code_paths(code)


def test_a_call_of_something_else_is_not_joined() -> None:
    assert code_paths("x = compute('..', 'audit')") == []
    assert code_paths("print(10 / 2)") == []
