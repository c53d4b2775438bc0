"""What each post carries, the content limit, and the identifiers the endpoint mints.

Content is a list of parts, ``{type: "text", text}`` or ``{type: "data", value}``. Every send
appends one data part keyed :data:`COLLECTIVE_KEY` after its text, so an omitted ``collective``
and an explicit ``{op: "multicast"}`` store identical content. The RFC 8785 canonical encoding of
the whole content, that part included, may be at most :data:`MAXIMUM_CONTENT_BYTES` bytes.
"""

from __future__ import annotations

import base64
import hashlib
import secrets
from collections.abc import Mapping

from pytest_harness_audit.social.errors import SendError
from pytest_harness_audit.social.message_json import canonical_message_json, message_json_size

#: The key of the collective data part every post carries.
COLLECTIVE_KEY = "org.social-harness/collective"
#: The most canonical bytes one post's content may have.
MAXIMUM_CONTENT_BYTES = 32_768
_COLLECTIVE_ID_DOMAIN = b"org.social-harness/collective-id"


def _base64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def new_nonce() -> str:
    """A fresh 256-bit nonce, base64url."""
    return _base64url(secrets.token_bytes(32))


def collective_id(requester_address: str, nonce: str) -> str:
    """``col_`` + 43 base64url chars: SHA-256 of the domain, requester address and nonce."""
    digest = hashlib.sha256(
        _COLLECTIVE_ID_DOMAIN + b"\0" + requester_address.encode() + b"\0" + nonce.encode()
    ).digest()
    return "col_" + _base64url(digest)


def new_post_id() -> str:
    """A fresh opaque post id, ``pst_`` + 22 base64url chars."""
    return "pst_" + _base64url(secrets.token_bytes(16))


def new_check_id() -> str:
    """A fresh firewall check id, ``chk_`` + 22 base64url chars."""
    return "chk_" + _base64url(secrets.token_bytes(16))


def _data_part(value: Mapping[str, object]) -> dict[str, object]:
    return {"type": "data", "value": {COLLECTIVE_KEY: dict(value)}}


def multicast_content(text: str) -> list[dict[str, object]]:
    """The text, then ``{kind: "operation", op: "multicast"}``."""
    return [{"type": "text", "text": text}, _data_part({"kind": "operation", "op": "multicast"})]


def request_content(
    question: str,
    *,
    op: str,
    operation_id: str,
    nonce: str,
    deadline_at_ms: int,
    requested_schema: Mapping[str, object],
) -> list[dict[str, object]]:
    """The question, then the request part ``{kind: "operation", op, id, nonce, deadlineAt,
    requestedSchema}``."""
    return [
        {"type": "text", "text": question},
        _data_part(
            {
                "kind": "operation",
                "op": op,
                "id": operation_id,
                "nonce": nonce,
                "deadlineAt": deadline_at_ms,
                "requestedSchema": dict(requested_schema),
            }
        ),
    ]


def response_content(operation_id: str, response: Mapping[str, object]) -> list[dict[str, object]]:
    """Only the response part ``{kind: "response", id, action, content?}`` (no text)."""
    return [_data_part({"kind": "response", "id": operation_id, **response})]


def close_content(operation_id: str, included: list[str]) -> list[dict[str, object]]:
    """Only the close part ``{kind: "close", id, included}``: the counted answers' record hashes."""
    return [_data_part({"kind": "close", "id": operation_id, "included": included})]


def check_content_size(content: list[dict[str, object]]) -> None:
    """Raise ``content-invalid`` if the canonical content exceeds :data:`MAXIMUM_CONTENT_BYTES`."""
    size = message_json_size(content)
    if size > MAXIMUM_CONTENT_BYTES:
        raise SendError(
            "content-invalid",
            f"the message content is {size} canonical bytes; the limit is "
            f"{MAXIMUM_CONTENT_BYTES} bytes",
        )


def record_hash(post_id: str, sender: str, conversation: str, content: object) -> str:
    """Hex SHA-256 of a post's canonical identity and content (what an all_gather close lists)."""
    record = {"postId": post_id, "sender": sender, "conversation": conversation, "content": content}
    return hashlib.sha256(canonical_message_json(record).encode()).hexdigest()
