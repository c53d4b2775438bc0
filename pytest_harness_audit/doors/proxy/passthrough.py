"""Everything that is not ``tools/call``: resources, prompts, completion and logging level.

These requests are relayed to the upstreams that announced the capability. Resource reads and
prompt gets hand the agent content, so each goes through the gate first, like a tool call
(:mod:`.gated_reads`); listings, subscriptions, completion and the logging level are relayed
as they are — once the strings they send (a listing's cursor included) are checked for known
secrets (:mod:`.outgoing`).
With one capable upstream a request passes through unchanged,
cursor included; with several the listings are merged (prompt names get the ``server__``
prefix, like tools) and a read or get goes to the upstream that owns the name or URI.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

import anyio
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel.server import NotificationOptions, Server
from mcp.shared.exceptions import MCPError
from pydantic import BaseModel

from pytest_harness_audit.doors.proxy.client_requests import CallOrigin
from pytest_harness_audit.doors.proxy.envelope import refuse_ill_formed
from pytest_harness_audit.doors.proxy.gated_reads import (
    GatedReads,
    RequestBlocked,
    prompt_params,
    prompt_tool_name,
    read_params,
    read_tool_name,
)
from pytest_harness_audit.doors.proxy.incoming import (
    ListingT,
    relayed_error,
    screened,
    server_of,
)
from pytest_harness_audit.doors.proxy.outgoing import (
    completion_params,
    refuse_if_secret,
    request_tool_name,
    uri_params,
)
from pytest_harness_audit.doors.proxy.routing import SEPARATOR
from pytest_harness_audit.doors.proxy.upstream import Upstream
from pytest_harness_audit.gate.seam import describe_exception

ResultT = TypeVar("ResultT", bound=BaseModel)
Context = ServerRequestContext[Any, Any]
_MAX_PAGES = 100


def _strip_meta(params: BaseModel) -> Any:
    """The client's ``_meta`` belongs to the client hop; the upstream hop gets its own."""
    return params.model_copy(update={"meta": None})


class Passthrough:
    """Relay the non-tool MCP surface to the upstreams that support it."""

    def __init__(self, upstreams: Sequence[Upstream], reads: GatedReads) -> None:
        self._upstreams = list(upstreams)
        self._reads = reads
        self._prefixed = len(self._upstreams) > 1
        self._resource_owner: dict[str, Upstream] = {}

    def _capable(self, has: Callable[[types.ServerCapabilities], object]) -> list[Upstream]:
        return [u for u in self._upstreams if u.alive and has(u.capabilities)]

    def notification_options(self) -> NotificationOptions:
        """List-changed flags: announced when any upstream announces them."""
        caps = [u.capabilities for u in self._upstreams]
        return NotificationOptions(
            prompts_changed=any(c.prompts is not None and c.prompts.list_changed for c in caps),
            resources_changed=any(
                c.resources is not None and c.resources.list_changed for c in caps
            ),
            tools_changed=any(c.tools is not None and c.tools.list_changed for c in caps),
        )

    def register(self, server: Server[Any]) -> None:
        """Add handlers for the capabilities at least one upstream announced."""
        caps = [u.capabilities for u in self._upstreams]
        if any(c.resources is not None for c in caps):
            server.add_request_handler(
                "resources/list", types.PaginatedRequestParams, self.list_resources
            )
            server.add_request_handler(
                "resources/templates/list",
                types.PaginatedRequestParams,
                self.list_resource_templates,
            )
            server.add_request_handler(
                "resources/read", types.ReadResourceRequestParams, self.read_resource
            )
        if any(c.resources is not None and c.resources.subscribe for c in caps):
            server.add_request_handler(
                "resources/subscribe", types.SubscribeRequestParams, self.subscribe
            )
            server.add_request_handler(
                "resources/unsubscribe", types.UnsubscribeRequestParams, self.unsubscribe
            )
        if any(c.prompts is not None for c in caps):
            server.add_request_handler(
                "prompts/list", types.PaginatedRequestParams, self.list_prompts
            )
            server.add_request_handler("prompts/get", types.GetPromptRequestParams, self.get_prompt)
        if any(c.completions is not None for c in caps):
            server.add_request_handler(
                "completion/complete", types.CompleteRequestParams, self.complete
            )
        if any(c.logging is not None for c in caps):
            server.add_request_handler(
                "logging/setLevel", types.SetLevelRequestParams, self.set_logging_level
            )

    # -- resources -------------------------------------------------------------------------

    async def list_resources(
        self, ctx: Context, params: types.PaginatedRequestParams
    ) -> types.ListResourcesResult:
        """Merge (or pass through) ``resources/list``; remember which upstream owns each URI."""
        upstreams = self._capable(lambda c: c.resources)
        await self._refuse_cursor(ctx, upstreams, "resources/list", params)

        async def page(upstream: Upstream, cursor: str | None) -> types.ListResourcesResult:
            request = types.ListResourcesRequest(params=types.PaginatedRequestParams(cursor=cursor))
            return await self._ask(upstream, "resources/list", request, types.ListResourcesResult)

        if len(upstreams) == 1:
            result = await page(upstreams[0], params.cursor)
            self._own(upstreams[0], [r.uri for r in result.resources])
            return await self._screened(upstreams, "resources/list", result)
        merged: list[types.Resource] = []
        for upstream, items in await _gather_all(upstreams, page, lambda r: r.resources):
            self._own(upstream, [r.uri for r in items])
            merged.extend(items)
        listing = types.ListResourcesResult(resources=merged)
        return await self._screened(upstreams, "resources/list", listing)

    async def list_resource_templates(
        self, ctx: Context, params: types.PaginatedRequestParams
    ) -> types.ListResourceTemplatesResult:
        """Merge (or pass through) ``resources/templates/list``."""
        upstreams = self._capable(lambda c: c.resources)
        await self._refuse_cursor(ctx, upstreams, "resources/templates/list", params)

        async def page(upstream: Upstream, cursor: str | None) -> types.ListResourceTemplatesResult:
            request = types.ListResourceTemplatesRequest(
                params=types.PaginatedRequestParams(cursor=cursor)
            )
            result_type = types.ListResourceTemplatesResult
            return await self._ask(upstream, "resources/templates/list", request, result_type)

        method = "resources/templates/list"
        if len(upstreams) == 1:
            return await self._screened(upstreams, method, await page(upstreams[0], params.cursor))
        merged: list[types.ResourceTemplate] = []
        for _, items in await _gather_all(upstreams, page, lambda r: r.resource_templates):
            merged.extend(items)
        listing = types.ListResourceTemplatesResult(resource_templates=merged)
        return await self._screened(upstreams, method, listing)

    async def read_resource(
        self, ctx: Context, params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        """Relay ``resources/read`` to the owner of the URI (or try each capable upstream),
        each attempt gated and recorded as ``mcp__<server>__resources/read``."""
        request = types.ReadResourceRequest(params=_strip_meta(params))
        origin = CallOrigin.of(ctx)

        async def ask(upstream: Upstream) -> types.ReadResourceResult:
            async def relay() -> types.ReadResourceResult:
                refuse_ill_formed(request, upstream.name)
                return await upstream.session.send_request(request, types.ReadResourceResult)

            return await self._reads.run(
                read_tool_name(upstream.name),
                read_params(params.uri),
                relay,
                types.ReadResourceResult,
                origin,
            )

        return await self._first_answer(self._candidates(params.uri), ask)

    async def subscribe(
        self, ctx: Context, params: types.SubscribeRequestParams
    ) -> types.EmptyResult:
        """Relay ``resources/subscribe`` to the owner of the URI (refused when the URI holds
        a known secret, see :mod:`.outgoing`)."""
        request = types.SubscribeRequest(params=_strip_meta(params))
        candidates = [u for u in self._candidates(params.uri) if _can_subscribe(u)]
        await self._refuse_secret(ctx, candidates, "resources/subscribe", uri_params(params.uri))
        return await self._first_answer(
            candidates,
            lambda u: self._ask(u, "resources/subscribe", request, types.EmptyResult),
        )

    async def unsubscribe(
        self, ctx: Context, params: types.UnsubscribeRequestParams
    ) -> types.EmptyResult:
        """Relay ``resources/unsubscribe`` to the owner of the URI (refused like a
        subscribe when the URI holds a known secret)."""
        request = types.UnsubscribeRequest(params=_strip_meta(params))
        candidates = [u for u in self._candidates(params.uri) if _can_subscribe(u)]
        await self._refuse_secret(ctx, candidates, "resources/unsubscribe", uri_params(params.uri))
        return await self._first_answer(
            candidates,
            lambda u: self._ask(u, "resources/unsubscribe", request, types.EmptyResult),
        )

    async def _refuse_secret(
        self, ctx: Context, candidates: Sequence[Upstream], method: str, params: dict[str, Any]
    ) -> None:
        """Refuse (recorded) a relayed request holding a known secret; see :mod:`.outgoing`."""
        server = candidates[0].name if candidates else "proxy"
        await refuse_if_secret(
            self._reads.gate, request_tool_name(server, method), params, CallOrigin.of(ctx)
        )

    async def _screened(
        self, upstreams: Sequence[Upstream], method: str, listing: ListingT
    ) -> ListingT:
        """The listing as the client may see it (see :mod:`.incoming`)."""
        return await screened(self._reads.gate, server_of(upstreams), method, listing)

    async def _refuse_cursor(
        self,
        ctx: Context,
        candidates: Sequence[Upstream],
        method: str,
        params: types.PaginatedRequestParams | None,
    ) -> None:
        """A listing's ``cursor`` is the client's text and leaves with the request: refused
        like a subscription's URI when it holds a known secret."""
        if params is not None and params.cursor is not None:
            await self._refuse_secret(ctx, candidates, method, {"cursor": params.cursor})

    def _own(self, upstream: Upstream, uris: Sequence[str]) -> None:
        for uri in uris:
            self._resource_owner[uri] = upstream

    def _candidates(self, uri: str) -> list[Upstream]:
        owner = self._resource_owner.get(uri)
        if owner is not None and owner.alive:
            return [owner]
        return self._capable(lambda c: c.resources)

    # -- prompts ---------------------------------------------------------------------------

    async def list_prompts(
        self, ctx: Context, params: types.PaginatedRequestParams
    ) -> types.ListPromptsResult:
        """Merge (or pass through) ``prompts/list``; prefixed names with several upstreams."""
        upstreams = self._capable(lambda c: c.prompts)
        await self._refuse_cursor(ctx, upstreams, "prompts/list", params)

        async def page(upstream: Upstream, cursor: str | None) -> types.ListPromptsResult:
            request = types.ListPromptsRequest(params=types.PaginatedRequestParams(cursor=cursor))
            return await self._ask(upstream, "prompts/list", request, types.ListPromptsResult)

        if not self._prefixed and len(upstreams) == 1:
            return await self._screened(
                upstreams, "prompts/list", await page(upstreams[0], params.cursor)
            )
        merged: list[types.Prompt] = []
        for upstream, items in await _gather_all(upstreams, page, lambda r: r.prompts):
            merged.extend(
                p.model_copy(update={"name": f"{upstream.name}{SEPARATOR}{p.name}"}) for p in items
            )
        listing = types.ListPromptsResult(prompts=merged)
        return await self._screened(upstreams, "prompts/list", listing)

    async def get_prompt(
        self, ctx: Context, params: types.GetPromptRequestParams
    ) -> types.GetPromptResult:
        """Relay ``prompts/get`` to the upstream named by the prompt name, gated and recorded
        as ``mcp__<server>__prompts/get``."""
        upstream, name = self._prompt_owner(params.name)
        request = types.GetPromptRequest(
            params=_strip_meta(params).model_copy(update={"name": name})
        )

        async def relay() -> types.GetPromptResult:
            refuse_ill_formed(request, upstream.name)
            return await upstream.session.send_request(request, types.GetPromptResult)

        return await self._reads.run(
            prompt_tool_name(upstream.name),
            prompt_params(name, params.arguments),
            relay,
            types.GetPromptResult,
            CallOrigin.of(ctx),
        )

    def _prompt_owner(self, exposed: str) -> tuple[Upstream, str]:
        capable = self._capable(lambda c: c.prompts)
        if not self._prefixed and capable:
            return capable[0], exposed
        server, _, name = exposed.partition(SEPARATOR)
        for upstream in capable:
            if upstream.name == server and name:
                return upstream, name
        raise MCPError(code=types.INVALID_PARAMS, message=f"Unknown prompt: {exposed}")

    # -- completion and logging ------------------------------------------------------------

    async def complete(
        self, ctx: Context, params: types.CompleteRequestParams
    ) -> types.CompleteResult:
        """Relay ``completion/complete`` to the owner of the referenced prompt or resource
        (refused when what it sends holds a known secret, see :mod:`.outgoing`; its answer
        screened as a listing is, see :mod:`.incoming`)."""
        ref = params.ref
        if isinstance(ref, types.PromptReference):
            upstream, name = self._prompt_owner(ref.name)
            params = params.model_copy(update={"ref": ref.model_copy(update={"name": name})})
            candidates = [upstream]
        else:
            candidates = self._candidates(ref.uri)
        candidates = [u for u in candidates if u.capabilities.completions is not None]
        await self._refuse_secret(ctx, candidates, "completion/complete", completion_params(params))
        request = types.CompleteRequest(params=_strip_meta(params))
        result = await self._first_answer(
            candidates, lambda u: self._ask(u, "completion/complete", request, types.CompleteResult)
        )
        # the values offered are the upstream's text, shown to the user or the model
        return await self._screened(candidates[:1], "completion/complete", result)

    async def set_logging_level(
        self, ctx: Context, params: types.SetLevelRequestParams
    ) -> types.EmptyResult:
        """Relay ``logging/setLevel`` to every upstream that has logging; the client gets the
        first upstream's error (inspected like any relayed error) when one fails, and every
        upstream is asked either way."""
        request = types.SetLevelRequest(params=_strip_meta(params))
        upstreams = self._capable(lambda c: c.logging)
        failures: dict[str, MCPError] = {}

        async def ask(upstream: Upstream) -> None:
            try:
                await self._ask(upstream, "logging/setLevel", request, types.EmptyResult)
            except MCPError as exc:
                failures[upstream.name] = exc

        async with anyio.create_task_group() as group:
            for upstream in upstreams:
                group.start_soon(ask, upstream)
        for upstream in upstreams:
            if upstream.name in failures:
                raise failures[upstream.name]
        return types.EmptyResult()

    async def _ask(
        self, upstream: Upstream, method: str, request: Any, result_type: type[ResultT]
    ) -> ResultT:
        """``upstream``'s answer to ``request``; its error (or a failure to read its answer)
        as the client may see it (:func:`.incoming.relayed_error`)."""
        try:
            return await upstream.session.send_request(request, result_type)
        except MCPError as exc:
            error = exc
        except Exception as exc:
            # a malformed answer's validation text quotes the upstream's values
            error = MCPError(code=types.INTERNAL_ERROR, message=describe_exception(exc))
        raise await relayed_error(self._reads.gate, upstream.name, method, error)

    @staticmethod
    async def _first_answer(
        candidates: Sequence[Upstream], ask: Callable[[Upstream], Awaitable[ResultT]]
    ) -> ResultT:
        last_error: MCPError | None = None
        for upstream in candidates:
            try:
                return await ask(upstream)
            except RequestBlocked:
                raise  # the gate's answer: no other upstream is asked
            except MCPError as exc:
                last_error = exc
        if last_error is not None:
            raise last_error
        raise MCPError(code=types.METHOD_NOT_FOUND, message="No upstream serves this request")


def _can_subscribe(upstream: Upstream) -> bool:
    resources = upstream.capabilities.resources
    return resources is not None and bool(resources.subscribe)


PageT = TypeVar("PageT", bound=BaseModel)
ItemT = TypeVar("ItemT")


async def _gather_all(
    upstreams: Sequence[Upstream],
    page: Callable[[Upstream, str | None], Awaitable[PageT]],
    items_of: Callable[[PageT], list[ItemT]],
) -> list[tuple[Upstream, list[ItemT]]]:
    """Every page of every upstream, fetched concurrently, in upstream order."""
    collected: dict[str, list[ItemT]] = {}

    async def walk(upstream: Upstream) -> None:
        items: list[ItemT] = []
        cursor: str | None = None
        try:
            for _ in range(_MAX_PAGES):
                result = await page(upstream, cursor)
                items.extend(items_of(result))
                cursor = getattr(result, "next_cursor", None)
                if not cursor:
                    break
        except MCPError:
            return  # one failing upstream must not hide the others' listings
        collected[upstream.name] = items

    async with anyio.create_task_group() as group:
        for upstream in upstreams:
            group.start_soon(walk, upstream)
    return [(u, collected.get(u.name, [])) for u in upstreams]
