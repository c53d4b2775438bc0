"""An upstream call that times out at the proxy and acts afterwards.

A real upstream (``leaky_upstream.py``'s ``stubborn``) ignores the proxy's
``notifications/cancelled``: after the call timeout it plants ``.git/hooks/pre-commit`` (a file
git runs code from). A later call of the session finds the change (``between``) and FAILs;
when the timed-out call is the session's last, the closing proxy compares the workspace once
more, after a grace for the timed-out call, and records the change (``ProxyClosed``). The benign
twins: the same write inside the call is judged (protected file changed, FAIL); a call that
times out and writes nothing leaves the session PASS.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from secret_support import proxy_client, service_harness

from pytest_harness_audit.doors.proxy.late_effects import PROXY_CLOSED
from pytest_harness_audit.session.harness import Harness

LEAKY = str(Path(__file__).resolve().parent / "leaky_upstream.py")


@pytest.fixture
def harness(tmp_path: Path) -> Iterator[Harness]:
    yield from service_harness(tmp_path)


def _stubborn(harness: Harness, seconds: float) -> str:
    upstream = {"mcpServers": {"leaky": {"command": sys.executable, "args": [LEAKY]}}}
    proxy = harness.start_proxy(upstream, workspace_tools=False, call_timeout=1.0)

    async def session() -> str:
        async with proxy_client(proxy) as client:
            result = await client.call_tool("stubborn", {"seconds": seconds})
            await anyio.sleep(seconds + 1.0)  # the upstream acts meanwhile
            return "".join(getattr(block, "text", "") for block in result.content)

    return anyio.run(session)


@pytest.mark.slow
def test_git_hook_planted_after_the_call_timed_out(harness: Harness) -> None:
    answer = _stubborn(harness, 2.5)
    assert answer.startswith("timeout after 1s")
    harness.close()
    assert (harness.root / ".git" / "hooks" / "pre-commit").exists()
    assert harness.verdict == "FAIL"
    (closing,) = [r for r in harness.records if r.tool == PROXY_CLOSED]
    assert ".git/hooks/pre-commit" in json.dumps(closing.raw)


@pytest.mark.slow
def test_benign_twin_a_timed_out_call_that_writes_nothing_passes(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LEAKY_BENIGN", "1")
    assert _stubborn(harness, 1.5).startswith("timeout after 1s")
    harness.close()
    assert not [r for r in harness.records if r.tool == PROXY_CLOSED]
    assert harness.verdict == "PASS"


@pytest.mark.slow
def test_benign_twin_git_hook_planted_within_the_call(harness: Harness) -> None:
    assert _stubborn(harness, 0.0) == "hooked"
    harness.close()
    assert harness.verdict == "FAIL"
