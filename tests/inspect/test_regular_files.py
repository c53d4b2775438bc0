"""A FIFO, a device or a link where the harness reads a workspace file never hangs it."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pytest_harness_audit.inspect.digests import content_digest
from pytest_harness_audit.inspect.learn import credential_values
from pytest_harness_audit.inspect.regular_files import read_regular
from pytest_harness_audit.session.harness import Harness


def finished(work: Callable[[], Any], seconds: float = 20.0) -> Any:
    """``work()``'s result, failing the test when it has not returned within ``seconds``."""
    results: list[Any] = []
    thread = threading.Thread(target=lambda: results.append(work()), daemon=True)
    thread.start()
    thread.join(seconds)
    assert results, f"still blocked after {seconds} s"
    return results[0]


def test_a_regular_file_is_read_up_to_one_byte_past_the_limit(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"abcdef")
    assert read_regular(path, 10) == b"abcdef"
    assert read_regular(path, 3) == b"abcd"


def test_a_fifo_a_device_a_folder_and_a_missing_file_read_as_none(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    assert finished(lambda: read_regular(fifo, 10)) is None
    assert read_regular("/dev/zero", 10) is None
    assert read_regular(tmp_path, 10) is None
    assert read_regular(tmp_path / "missing", 10) is None


def test_a_link_is_followed_unless_told_not_to(tmp_path: Path) -> None:
    (tmp_path / "real").write_bytes(b"x")
    (tmp_path / "link").symlink_to(tmp_path / "real")
    assert read_regular(tmp_path / "link", 10) == b"x"
    assert read_regular(tmp_path / "link", 10, follow=False) is None


def test_secrets_are_learned_past_a_fifo_named_like_a_credential_file(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text("API_KEY=sk-test-0123456789abcdef0123\n", encoding="utf-8")
    os.mkfifo(tmp_path / ".env.local")
    values = finished(lambda: list(credential_values(tmp_path)))
    assert [value for _, value in values] == ["sk-test-0123456789abcdef0123"]


def test_a_protected_file_swapped_for_a_fifo_has_no_digest(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "config")
    assert finished(lambda: content_digest(str(tmp_path / "config"))) is None


@pytest.mark.parametrize(
    "name",
    [
        ".env.x",
        "secrets.json",
        ".git/config.worktree",
        # where the history check reads refs and the masks over history
        ".git/shallow",
        ".git/refs/heads/fifo",
        ".git/objects/info/alternates",
    ],
)
def test_a_session_goes_on_after_the_agent_makes_a_fifo(tmp_path: Path, name: str) -> None:
    harness = Harness.create(tmp_path, template="python-service", policy="safety")
    codes = ",".join(str(byte) for byte in name.encode())
    command = f'python3 -c "import os; os.mkfifo(bytes([{codes}]).decode())"'
    finished(lambda: harness.call("Bash", command=command), 60)
    finished(lambda: harness.call("Bash", command="ls"), 60)
    assert len(harness.calls()) == 2
    harness.close()
