"""Which door a ``send_message`` call comes through, for the outgoing-payload check.

The social door's own send is checked by its message firewall (which refuses with its check id
and feedback); the gate's outgoing check leaves it to the firewall. That trust belongs to the
door, not to the name: a framework's function tool, a host tool or a relayed MCP tool that
happens to be called ``send_message`` is checked by the gate like any other message tool. The
social door marks its own decisions with :func:`social_door_send`.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

_SOCIAL_DOOR_SEND: ContextVar[bool] = ContextVar("social_door_send", default=False)


@contextmanager
def social_door_send() -> Iterator[None]:
    """Mark the gate decisions made inside as the social door's own sends."""
    token = _SOCIAL_DOOR_SEND.set(True)
    try:
        yield
    finally:
        _SOCIAL_DOOR_SEND.reset(token)


def in_social_door_send() -> bool:
    """Whether the current decision is the social door's own send."""
    return _SOCIAL_DOOR_SEND.get()
