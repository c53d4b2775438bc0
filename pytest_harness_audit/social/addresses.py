"""Agent names and the ``agent:`` / ``group:`` address grammar, with canonicalisation.

A name is 3 to 32 ASCII characters of lowercase letters and digits, in runs joined by single
hyphens; there is no case folding. ``agent:<name>`` is a direct address; ``group:<a>,<b>,…`` is
group input that canonicalises to the sender plus the named agents, 3 to 32 members, sorted by
byte order. A group naming exactly one other agent is that agent's direct conversation.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from typing import Literal

from pytest_harness_audit.social.errors import SendError, SocialConfigError

AGENT_PREFIX = "agent:"
GROUP_PREFIX = "group:"
MINIMUM_NAME_LENGTH = 3
MAXIMUM_NAME_LENGTH = 32
MINIMUM_GROUP_MEMBERS = 3
MAXIMUM_MEMBERS = 32

_NAME_PATTERN = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
_NAME_RULE = (
    "a name is 3 to 32 lowercase letters, digits and single inner hyphens, such as agent:bob or "
    "group:bob,carol"
)
_NAME_TEXT = "3 to 32 lowercase letters, digits and single inner hyphens"


def is_agent_name(value: object) -> bool:
    """Whether ``value`` is a valid agent name (``^[a-z0-9]+(-[a-z0-9]+)*$``, 3–32 chars)."""
    return (
        isinstance(value, str)
        and MINIMUM_NAME_LENGTH <= len(value) <= MAXIMUM_NAME_LENGTH
        and _NAME_PATTERN.fullmatch(value) is not None
    )


def check_registry(local_agent: str, peers: Iterable[str]) -> frozenset[str]:
    """The registry of ``peers``' names, after checking them and ``local_agent``'s: valid
    names, none twice, none the local agent's (:class:`SocialConfigError` otherwise)."""
    if not is_agent_name(local_agent):
        raise SocialConfigError(
            f"local agent name {local_agent!r} is invalid: a name is {_NAME_TEXT}"
        )
    names = tuple(peers)
    for name in names:
        if not is_agent_name(name):
            raise SocialConfigError(f"peer name {name!r} is invalid: a name is {_NAME_TEXT}")
        if name == local_agent:
            raise SocialConfigError(f"peer name {name!r} is the local agent's own name")
        if names.count(name) > 1:
            raise SocialConfigError(f"peer name {name!r} is listed twice")
    return frozenset(names)


def agent_address(name: str) -> str:
    """``agent:<name>``."""
    return f"{AGENT_PREFIX}{name}"


def is_address_input(value: object) -> bool:
    """Whether ``value`` is syntactically an ``agent:`` address or ``group:`` input."""
    if not isinstance(value, str):
        return False
    if value.startswith(AGENT_PREFIX):
        return is_agent_name(value[len(AGENT_PREFIX) :])
    if value.startswith(GROUP_PREFIX):
        return all(is_agent_name(name) for name in value[len(GROUP_PREFIX) :].split(","))
    return False


@dataclass(frozen=True)
class CanonicalAddress:
    """A destination in canonical form, seen from the local agent.

    ``address`` is ``agent:<name>`` for a direct conversation or ``group:<names>`` (local agent
    included, byte order) for a group; ``members`` lists every member's name including the local
    agent, in byte order; ``remote`` the members other than the local agent.
    """

    kind: Literal["direct", "group"]
    address: str
    members: tuple[str, ...]
    local: str

    @property
    def remote(self) -> tuple[str, ...]:
        """The members other than the local agent, in byte order."""
        return tuple(name for name in self.members if name != self.local)

    @property
    def remote_addresses(self) -> tuple[str, ...]:
        """``agent:<name>`` of every member other than the local agent."""
        return tuple(agent_address(name) for name in self.remote)


def _invalid_address(to: object) -> SendError:
    shown = to if isinstance(to, str) else repr(to)
    return SendError(
        "invalid-address", f"{shown} is not a valid agent: or group: address ({_NAME_RULE})"
    )


def canonical_address(to: object, local_agent: str) -> CanonicalAddress:
    """Put one destination in canonical form, before any registry lookup.

    Raises :class:`SendError` ``invalid-address`` for anything outside the grammar and
    ``membership-invalid`` for a self-send, a repeated name, or a group of fewer than 3 or more
    than 32 members. A group naming exactly one other agent canonicalises to ``agent:<it>``.
    """
    if not isinstance(to, str):
        raise _invalid_address(to)
    if to.startswith(AGENT_PREFIX):
        name = to[len(AGENT_PREFIX) :]
        if not is_agent_name(name):
            raise _invalid_address(to)
        if name == local_agent:
            raise SendError(
                "membership-invalid",
                f"{to} is this agent; a message must name another agent",
            )
        return CanonicalAddress("direct", to, tuple(sorted((name, local_agent))), local_agent)
    if not to.startswith(GROUP_PREFIX):
        raise _invalid_address(to)
    explicit = to[len(GROUP_PREFIX) :].split(",")
    if not all(is_agent_name(name) for name in explicit):
        raise _invalid_address(to)
    repeated = sorted({name for name in explicit if explicit.count(name) > 1})
    if repeated:
        names = ", ".join(agent_address(name) for name in repeated)
        raise SendError("membership-invalid", f"{to} names {names} more than once")
    members = set(explicit) | {local_agent}
    if len(members) == 2:
        (other,) = members - {local_agent}
        return CanonicalAddress("direct", agent_address(other), tuple(sorted(members)), local_agent)
    if len(members) < 2:
        raise SendError("membership-invalid", f"{to} names no agent other than this one")
    if len(members) > MAXIMUM_MEMBERS:
        raise SendError(
            "membership-invalid",
            f"{to} makes a group of {len(members)} members; a group has at most "
            f"{MAXIMUM_MEMBERS} members, this agent included",
        )
    # Names are ASCII, so Python's code-point order is the byte order the grammar asks for.
    ordered = tuple(sorted(members))
    return CanonicalAddress("group", GROUP_PREFIX + ",".join(ordered), ordered, local_agent)


def unknown_members(address: CanonicalAddress, registry: Collection[str]) -> tuple[str, ...]:
    """The remote members of ``address`` that the registry does not know, in byte order."""
    return tuple(name for name in address.remote if name not in registry)


def resolve_address(to: object, local_agent: str, registry: Collection[str]) -> CanonicalAddress:
    """Canonicalise ``to`` and check every remote member against ``registry``.

    Raises :class:`SendError` as :func:`canonical_address`, or ``unknown-agent`` naming the
    first unknown member's address.
    """
    address = canonical_address(to, local_agent)
    unknown = unknown_members(address, registry)
    if unknown:
        raise SendError("unknown-agent", f"{agent_address(unknown[0])} is not a known agent")
    return address
