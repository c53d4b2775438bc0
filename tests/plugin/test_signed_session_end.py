"""With a signing key in the environment, every session's final head is signed at its end."""

from __future__ import annotations

import pytest

from pytest_harness_audit.audit.storage import list_sessions
from pytest_harness_audit.cli import main as cli

pytest.importorskip("cryptography")

SUITE = """
def test_clean(harness):
    harness.call("Bash", command="echo hi")
"""


def test_sessions_are_signed_at_their_end(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = pytester.path.parent / "ci-key.pem"
    assert cli(["audit", "keygen", "--out", str(key)]) == 0
    monkeypatch.setenv("HARNESS_AUDIT_SIGNING_KEY", str(key))
    pytester.makepyfile(test_suite=SUITE)
    pytester.runpytest("--harness-audit").assert_outcomes(passed=1)
    store = pytester.path / ".harness-audit"
    (session,) = list_sessions(store)
    assert (store / "checkpoints" / f"{session}.jsonl").is_file()
    public = f"{key}.pub"
    verify = ["--storage", str(store), "audit", "verify", session, "--public-key", public]
    assert cli(verify) == 0
    # a chain recomputed after the signature no longer matches it
    chain = store / "audit" / f"{session}.jsonl"
    chain.write_text(chain.read_text().replace("echo hi", "echo ho"))
    assert cli(verify) == 1


def test_without_a_key_nothing_is_signed(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("HARNESS_AUDIT_SIGNING_KEY", raising=False)
    pytester.makepyfile(test_suite=SUITE)
    pytester.runpytest("--harness-audit").assert_outcomes(passed=1)
    assert not (pytester.path / ".harness-audit" / "checkpoints").exists()
