"""Soft LCT: a software-bound session identity token derived from host and user."""

from __future__ import annotations

import getpass
import hashlib
import os
import socket
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pytest_harness_audit.audit.clock import utc_timestamp
from pytest_harness_audit.audit.errors import AuditError

BINDING_TYPE = "software"


def machine_hash(hostname: str, username: str) -> str:
    """First 8 hex of SHA-256 over ``"<hostname>:<username>"``."""
    return hashlib.sha256(f"{hostname}:{username}".encode()).hexdigest()[:8]


def current_username() -> str:
    """The login name, falling back to the numeric uid where no name is known."""
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return str(os.getuid())


@dataclass(frozen=True)
class SoftLCT:
    """``web4:session:<machineHash>:<first 8 chars of sessionId>`` with its parts."""

    token_id: str
    session_id: str
    machine_hash: str
    created_at: str
    binding_type: str = BINDING_TYPE

    def __str__(self) -> str:
        return self.token_id

    def to_dict(self) -> dict[str, str]:
        """The JSON form kept in the session file."""
        return {
            "tokenId": self.token_id,
            "sessionId": self.session_id,
            "machineHash": self.machine_hash,
            "createdAt": self.created_at,
            "bindingType": self.binding_type,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, source: str) -> SoftLCT:
        """Read the JSON form back; ``source`` names the file in errors."""
        try:
            return cls(
                token_id=str(data["tokenId"]),
                session_id=str(data["sessionId"]),
                machine_hash=str(data["machineHash"]),
                created_at=str(data["createdAt"]),
                binding_type=str(data.get("bindingType", BINDING_TYPE)),
            )
        except (KeyError, TypeError) as exc:
            raise AuditError(f"{source}: field 'lct' is incomplete ({exc})") from None


def make_soft_lct(
    session_id: str,
    *,
    hostname: str | None = None,
    username: str | None = None,
    created_at: str | None = None,
) -> SoftLCT:
    """Create the Soft LCT of ``session_id`` on this machine (host and user overridable)."""
    host = socket.gethostname() if hostname is None else hostname
    user = current_username() if username is None else username
    digest = machine_hash(host, user)
    return SoftLCT(
        token_id=f"web4:session:{digest}:{session_id[:8]}",
        session_id=session_id,
        machine_hash=digest,
        created_at=created_at or utc_timestamp(),
    )
