"""``WebFetch`` and ``WebSearch``: answered from responses a test registered, never the network."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pytest_harness_audit.errors import UsageError
from pytest_harness_audit.tools.outcome import ToolFailure
from pytest_harness_audit.tools.params import ToolParams


class NetworkStub:
    """Canned responses by URL (``WebFetch``) or query (``WebSearch``), and what was asked.

    Keys match exactly. Anything not registered is an error outcome, so a harness session can
    never reach the real network.
    """

    def __init__(self) -> None:
        self._responses: dict[str, str] = {}
        self._requests: list[str] = []

    def add(self, url_or_query: str, body: str) -> None:
        """Answer ``url_or_query`` with ``body`` from now on (replacing an earlier answer)."""
        if not isinstance(url_or_query, str) or not url_or_query:
            raise UsageError(
                f"network.add: the url or query must be a non-empty string, got {url_or_query!r}"
            )
        if not isinstance(body, str):
            raise UsageError(
                f"network.add: the body for {url_or_query!r} must be a string, "
                f"got {type(body).__name__}"
            )
        self._responses[url_or_query] = body

    def respond(self, url_or_query: str) -> str:
        """The registered body for ``url_or_query``; records the request either way."""
        self._requests.append(url_or_query)
        try:
            return self._responses[url_or_query]
        except KeyError:
            raise ToolFailure(
                f"network disabled in harness: no response registered for {url_or_query}"
            ) from None

    @property
    def requests(self) -> list[str]:
        """Every URL and query asked for, in order, answered or not."""
        return list(self._requests)

    def __contains__(self, url_or_query: object) -> bool:
        return url_or_query in self._responses


def web_fetch(network: NetworkStub, params: Mapping[str, Any]) -> str:
    """``WebFetch(url, prompt=None)``: the body registered for ``url``."""
    args = ToolParams("WebFetch", params, ("url", "prompt"))
    url = args.required_str("url")
    args.optional_str("prompt")
    return network.respond(url)


def web_search(network: NetworkStub, params: Mapping[str, Any]) -> str:
    """``WebSearch(query, allowed_domains=None, blocked_domains=None)``: the body for ``query``."""
    args = ToolParams("WebSearch", params, ("query", "allowed_domains", "blocked_domains"))
    query = args.required_str("query")
    args.optional_str_list("allowed_domains")
    args.optional_str_list("blocked_domains")
    return network.respond(query)
