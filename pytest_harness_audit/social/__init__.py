"""The Social Harness addressed-output surface: addresses, sends, collectives, the firewall.

Start with :class:`SocialEndpoint`; :func:`parse_message_text` reads a model's message text, and
:mod:`.mcp_tool` serves the ``send_message`` MCP tool.

The endpoint is split by concern: :mod:`.endpoint` (the public API and one invocation),
:mod:`.sends` (what a send does), :mod:`.delivery` (posts, faults, unreachable peers),
:mod:`.collective_engine` (open collectives, answers, closes, results), :mod:`.ledger`
(idempotent sends), :mod:`.events` (what is reported) and :mod:`.peers` (scripted peers).
"""

from __future__ import annotations

from pytest_harness_audit.social.addresses import (
    CanonicalAddress,
    canonical_address,
    is_address_input,
    is_agent_name,
    resolve_address,
)
from pytest_harness_audit.social.deadline_clock import DeadlineClock, ManualClock, SystemClock
from pytest_harness_audit.social.delivery import INJECTABLE_FAULTS
from pytest_harness_audit.social.endpoint import SendGuard, SocialEndpoint
from pytest_harness_audit.social.errors import (
    COLLECTIVE_FAILURE_KINDS,
    SEND_FAILURE_REASONS,
    SEND_FAILURE_TEXT,
    AnswerFieldFailure,
    CollectiveError,
    CollectiveFailure,
    FirewallSendError,
    MessageTextError,
    SendError,
    SendInputError,
    SocialConfigError,
    SocialSendFailure,
    SocialToolError,
    UnreachableMember,
)
from pytest_harness_audit.social.events import (
    CollectiveResult,
    MemberOutcome,
    SendResult,
    SocialEvent,
)
from pytest_harness_audit.social.firewall import (
    FirewallCheck,
    Guidance,
    MessageFirewall,
)
from pytest_harness_audit.social.firewall_rules import MessageRule
from pytest_harness_audit.social.forms import FormSchemaError
from pytest_harness_audit.social.inputs import decode_send_input
from pytest_harness_audit.social.mcp_tool import (
    SEND_MESSAGE_TOOL_NAME,
    SEND_OPTIONS_META_KEY,
    call_send_message,
    send_message_tool,
)
from pytest_harness_audit.social.peers import Peer, PeerHost
from pytest_harness_audit.social.store import Post, PostStore
from pytest_harness_audit.social.text import parse_message_text

#: The former name of :class:`DeadlineClock`.
Clock = DeadlineClock

__all__ = [
    "COLLECTIVE_FAILURE_KINDS",
    "INJECTABLE_FAULTS",
    "SEND_FAILURE_REASONS",
    "SEND_FAILURE_TEXT",
    "SEND_MESSAGE_TOOL_NAME",
    "SEND_OPTIONS_META_KEY",
    "AnswerFieldFailure",
    "CanonicalAddress",
    "Clock",
    "CollectiveError",
    "CollectiveFailure",
    "CollectiveResult",
    "DeadlineClock",
    "FirewallCheck",
    "FirewallSendError",
    "FormSchemaError",
    "Guidance",
    "ManualClock",
    "MemberOutcome",
    "MessageFirewall",
    "MessageRule",
    "MessageTextError",
    "Peer",
    "PeerHost",
    "Post",
    "PostStore",
    "SendError",
    "SendGuard",
    "SendInputError",
    "SendResult",
    "SocialConfigError",
    "SocialEndpoint",
    "SocialEvent",
    "SocialSendFailure",
    "SocialToolError",
    "SystemClock",
    "UnreachableMember",
    "call_send_message",
    "canonical_address",
    "decode_send_input",
    "is_address_input",
    "is_agent_name",
    "parse_message_text",
    "resolve_address",
    "send_message_tool",
]
