"""An upstream call that times out at the proxy and acts afterwards.

A real upstream (``leaky_upstream.py``'s ``stubborn``) ignores the proxy's
``notifications/cancelled``: after the call timeout it plants ``.git/hooks/pre-commit`` (a file
git runs code from). A later call of the session finds the change (``between``) and FAILs; but
when the timed-out call is the session's last, the session closes PASS with the hook planted.
The benign twin: the same write inside the call is judged (protected file changed, FAIL).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from secret_support import proxy_client, service_harness

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


@pytest.mark.xfail(
    strict=True,
    reason="a change an upstream makes after its call timed out, with no later call, is "
    "never judged: the session closes PASS",
)
def test_git_hook_planted_after_the_call_timed_out(harness: Harness) -> None:
    answer = _stubborn(harness, 2.5)
    assert answer.startswith("timeout after 1s")
    harness.close()
    assert (harness.root / ".git" / "hooks" / "pre-commit").exists()
    assert harness.verdict == "FAIL"


def test_benign_twin_git_hook_planted_within_the_call(harness: Harness) -> None:
    assert _stubborn(harness, 0.0) == "hooked"
    harness.close()
    assert harness.verdict == "FAIL"
