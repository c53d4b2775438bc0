"""The policy a session ran under, kept beside its chain.

Other processes (the MCP proxy, ``harness-audit immune …``) rebuild the same gate from it:
``<storage>/policies/<session>.json`` holds the resolved policy document and its name.

The file is evidence within the agent's reach (a call's code may find the store by a name built
at run time), so the gate that wrote it keeps its bytes (:class:`PolicySeal`): after each call
it looks again, and a file that changed is written back and noted in the chain
(:data:`SEALED_FILE_CHANGED`, which FAILs the session). A file that claims the policy's content
hash but holds other rules is rewritten when a gate opens the session, noted the same way, and
:func:`load_session_policy` refuses one whose rules do not hash to the hash it claims.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Protocol

from pytest_harness_audit.audit.atomic_file import replace_file
from pytest_harness_audit.audit.chain import AuditChain
from pytest_harness_audit.audit.records import RecordDraft
from pytest_harness_audit.audit.storage import sanitize_session_id
from pytest_harness_audit.errors import PolicyError
from pytest_harness_audit.gate.store_guard import TAMPER_ALERT
from pytest_harness_audit.policy import Policy


class _Gate(Protocol):
    """What :class:`SealWatch` needs of the gate it watches for."""

    door: str
    chain: AuditChain
    clock: Callable[[], float]

    def _appended(self, record: Mapping[str, Any]) -> None: ...


#: The tool of the note of a file a session sealed that changed outside its writers (the
#: session's stored policy, a proxy's sealed files): the verdict FAILs (``policy-changed``).
SEALED_FILE_CHANGED = "SealedFileChanged"


def policy_path(storage_dir: str | os.PathLike[str], session_id: str) -> Path:
    """Where the policy of ``session_id`` is kept."""
    return Path(storage_dir) / "policies" / f"{sanitize_session_id(session_id)}.json"


def _document_bytes(policy: Policy) -> bytes:
    document = {"name": policy.name, "contentHash": policy.content_hash, "policy": policy.to_dict()}
    return json.dumps(document, sort_keys=True, indent=1).encode("utf-8")


def save_session_policy(
    storage_dir: str | os.PathLike[str], session_id: str, policy: Policy
) -> Path:
    """Write (atomically) the policy document of a session; return its path."""
    path = policy_path(storage_dir, session_id)
    replace_file(path, _document_bytes(policy))
    return path


def load_session_policy(storage_dir: str | os.PathLike[str], session_id: str) -> Policy | None:
    """The policy a session ran under, or ``None`` when none was kept.

    Raises :class:`PolicyError` when the file's rules do not hash to the content hash it
    claims: it was changed after the gate wrote it.
    """
    path = policy_path(storage_dir, session_id)
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    policy = Policy.from_dict(document["policy"], source=str(path), name=document.get("name"))
    claimed = document.get("contentHash")
    if claimed is not None and claimed != policy.content_hash:
        raise PolicyError(
            f"the stored policy was changed after the session's gate wrote it (its rules hash to "
            f"{policy.content_hash[:12]}, it claims {str(claimed)[:12]})",
            source=str(path),
        )
    return policy


def publish_session_policy(
    storage_dir: str | os.PathLike[str], session_id: str, policy: Policy
) -> Path:
    """Keep the session's policy beside its chain, rewriting it only when it changed."""
    return seal_session_policy(storage_dir, session_id, policy)[0].path


class PolicySeal:
    """The stored policy of a session as this process wrote it: its bytes and the file's
    identity, so a look after each call costs one ``stat`` when nothing changed."""

    def __init__(self, path: Path, expected: bytes, content_hash: str) -> None:
        self.path = path
        self.expected = expected
        self.content_hash = content_hash
        self._seen: tuple[int, int, int] | None = None
        self._note_seen()

    def _note_seen(self) -> None:
        try:
            info = os.stat(self.path)
        except OSError:
            self._seen = None
            return
        self._seen = (info.st_ino, info.st_size, info.st_mtime_ns)

    def broken(self) -> str | None:
        """``None`` while the file holds what was written; else the problem, after writing the
        file back (later processes rebuild the session's gate from it)."""
        try:
            info = os.stat(self.path)
        except OSError:
            info = None
        if info is not None and (info.st_ino, info.st_size, info.st_mtime_ns) == self._seen:
            return None
        try:
            found = self.path.read_bytes()
        except OSError:
            found = None
        if found == self.expected or (found is not None and _same_rules(found, self.content_hash)):
            self._note_seen()  # another gate of the session wrote the same rules (its name)
            return None
        what = "removed" if found is None else "changed"
        replace_file(self.path, self.expected)
        self._note_seen()
        return (
            f"the session's stored policy ({self.path.parent.name}/{self.path.name}) was {what} "
            "outside the gate: it is written back, and the calls are judged under the policy "
            "the session started with"
        )


def seal_session_policy(
    storage_dir: str | os.PathLike[str], session_id: str, policy: Policy
) -> tuple[PolicySeal, str | None]:
    """Publish the session's policy (as :func:`publish_session_policy`) and seal it.

    The second item is the problem when the file found claims this very policy (its name and
    content hash) but holds other bytes: it was changed after a gate wrote it.
    """
    path = policy_path(storage_dir, session_id)
    expected = _document_bytes(policy)
    try:
        found: bytes | None = path.read_bytes()
    except OSError:
        found = None
    problem: str | None = None
    if found != expected:
        if found is not None and _claims(found, policy):
            problem = (
                f"the session's stored policy ({path.parent.name}/{path.name}) claims the "
                "session's policy but holds other rules: it is written back"
            )
        replace_file(path, expected)
    return PolicySeal(path, expected, policy.content_hash), problem


def _same_rules(found: bytes, content_hash: str) -> bool:
    """Whether the stored document ``found`` holds rules hashing to ``content_hash``."""
    try:
        document = json.loads(found)
        return bool(Policy.from_dict(document["policy"]).content_hash == content_hash)
    except Exception:  # anything unreadable is not the same rules: the file is written back
        return False


def _claims(found: bytes, policy: Policy) -> bool:
    try:
        current = json.loads(found)
    except ValueError:
        return False
    return (
        isinstance(current, dict)
        and current.get("contentHash") == policy.content_hash
        and current.get("name") == policy.name
    )


def _second_name(path: Path) -> str | None:
    """The problem when the store's file at ``path`` has more than one name (a hard link a
    call's code made: another path to write the evidence through), else ``None``."""
    try:
        links = os.stat(path, follow_symlinks=False).st_nlink
    except OSError:
        return None
    if links < 2:
        return None
    return (
        f"the session's {path.parent.name}/{path.name} has a second name outside the harness "
        f"({links} hard links): another path to write the evidence through"
    )


class SealWatch:
    """Looks at the session's stored policy after each call (a gate's observer): a file changed
    outside the gate is written back and noted in the chain, which FAILs the session. The chain
    and the stored policy given a second name (a hard link) are noted too, once each."""

    def __init__(self, gate: _Gate, seal: PolicySeal, found: str | None = None) -> None:
        self.gate = gate
        self.seal = seal
        self._linked: set[str] = set()  # files of the store already noted as hard-linked
        if found is not None:  # the file was changed before this gate opened the session
            self._note(found)

    def __call__(self, record: Mapping[str, Any], output: Any) -> None:
        problem = self.seal.broken()
        if problem is not None:
            self._note(problem)  # the call's code reached the store
        for path in (self.gate.chain.path, self.seal.path):
            linked = _second_name(path)
            if linked is not None and linked not in self._linked:
                self._linked.add(linked)
                self._note(linked)  # a name outside the store to write the evidence through

    def _note(self, problem: str) -> None:
        gate = self.gate
        draft = RecordDraft(
            tool=SEALED_FILE_CHANGED,
            category="session",
            kind="note",
            status="error",
            error_message=problem,
            extra={"door": gate.door, "alerts": [TAMPER_ALERT], "clock": round(gate.clock(), 6)},
        )
        gate._appended(gate.chain.append(draft))
