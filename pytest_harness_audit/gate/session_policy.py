"""The policy a session ran under, kept beside its chain.

Other processes (the MCP proxy, ``harness-audit immune …``) rebuild the same gate from it:
``<storage>/policies/<session>.json`` holds the resolved policy document and its name.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from pytest_harness_audit.audit.storage import sanitize_session_id
from pytest_harness_audit.policy import Policy


def policy_path(storage_dir: str | os.PathLike[str], session_id: str) -> Path:
    """Where the policy of ``session_id`` is kept."""
    return Path(storage_dir) / "policies" / f"{sanitize_session_id(session_id)}.json"


def save_session_policy(
    storage_dir: str | os.PathLike[str], session_id: str, policy: Policy
) -> Path:
    """Write (atomically) the policy document of a session; return its path."""
    path = policy_path(storage_dir, session_id)
    path.parent.mkdir(parents=True, exist_ok=True)
    document = {"name": policy.name, "contentHash": policy.content_hash, "policy": policy.to_dict()}
    handle, temp = tempfile.mkstemp(dir=path.parent, prefix=".policy-", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            json.dump(document, stream, sort_keys=True, indent=1)
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
    return path


def load_session_policy(storage_dir: str | os.PathLike[str], session_id: str) -> Policy | None:
    """The policy a session ran under, or ``None`` when none was kept."""
    path = policy_path(storage_dir, session_id)
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    return Policy.from_dict(document["policy"], source=str(path), name=document.get("name"))


def publish_session_policy(
    storage_dir: str | os.PathLike[str], session_id: str, policy: Policy
) -> Path:
    """Keep the session's policy beside its chain, rewriting it only when it changed."""
    path = policy_path(storage_dir, session_id)
    try:
        current = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        current = None
    if (
        isinstance(current, dict)
        and current.get("contentHash") == policy.content_hash
        and current.get("name") == policy.name
    ):
        return path
    return save_session_policy(storage_dir, session_id, policy)
