"""The one in-memory MCP client of the tests: the official client on a server's own streams.

Built on the SDK's in-memory transport (``mcp.shared.memory``), so every test that talks to a
proxy (or any low-level server) in-process connects the same way.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
from mcp.client.session import ClientSession
from mcp.shared.memory import create_client_server_memory_streams


@asynccontextmanager
async def memory_client(proxy: Any, **options: Any) -> AsyncIterator[ClientSession]:
    """An initialised official client connected to ``proxy.server`` over in-memory streams."""
    async with (
        create_client_server_memory_streams() as (client_streams, server_streams),
        anyio.create_task_group() as group,
    ):
        server = proxy.server
        group.start_soon(server.run, *server_streams, server.create_initialization_options())
        async with ClientSession(*client_streams, **options) as session:
            await session.initialize()
            yield session
        group.cancel_scope.cancel()
