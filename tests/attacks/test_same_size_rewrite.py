"""A record rewritten in place to the same size, with the chain file's modification time set
back, is not hidden by the session's cached verification: the verdict and the summary read the
chain again and find it invalid. Touching the file without changing it keeps it valid."""

from __future__ import annotations

import os
from pathlib import Path

from pytest_harness_audit.session.harness import Harness


def session(tmp_path: Path) -> Harness:
    harness = Harness.create(tmp_path, template="empty", policy="safety", session_id="s")
    harness.call("Bash", command="rm -rf /")
    assert harness.verify().valid  # the verification is now cached
    return harness


def test_a_same_size_rewrite_with_its_time_set_back_is_seen(tmp_path: Path) -> None:
    harness = session(tmp_path)
    path = harness.chain.path
    info = os.stat(path)
    text = path.read_text(encoding="utf-8")
    forged = text.replace('"blocked"', '"success"')
    assert forged != text and len(forged) == len(text)
    path.write_text(forged, encoding="utf-8")
    os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns))
    assert os.stat(path).st_size == info.st_size
    assert os.stat(path).st_mtime_ns == info.st_mtime_ns
    assert not harness.verify().valid
    assert harness.records[0].status == "success"  # what the file now says, not the cache
    harness.close()


def test_a_file_touched_without_a_change_stays_valid(tmp_path: Path) -> None:
    harness = session(tmp_path)
    path = harness.chain.path
    info = os.stat(path)
    os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns + 1_000_000))
    os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns))
    assert harness.verify().valid
    assert harness.verdict == "FAIL"
    harness.close()
