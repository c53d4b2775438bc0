"""The Social Harness addressed-output surface: addresses, sends, collectives, the firewall.

Start with :class:`SocialEndpoint`; :func:`parse_message_text` reads a model's message text, and
:mod:`.mcp_tool` serves the ``send_message`` MCP tool.
"""

from __future__ import annotations

from pytest_harness_audit.social.addresses import (
    CanonicalAddress,
    canonical_address,
    is_address_input,
    is_agent_name,
    resolve_address,
)
from pytest_harness_audit.social.clock import Clock, ManualClock, SystemClock
from pytest_harness_audit.social.endpoint import SocialEndpoint
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
    MessageRule,
)
from pytest_harness_audit.social.forms import FormSchemaError
from pytest_harness_audit.social.inputs import decode_send_input
from pytest_harness_audit.social.mcp_tool import (
    SEND_MESSAGE_TOOL_NAME,
    SEND_OPTIONS_META_KEY,
    call_send_message,
    send_message_tool,
)
from pytest_harness_audit.social.peers import Peer
from pytest_harness_audit.social.store import Post, PostStore
from pytest_harness_audit.social.text import parse_message_text

__all__ = [
    "COLLECTIVE_FAILURE_KINDS",
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
    "Post",
    "PostStore",
    "SendError",
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
