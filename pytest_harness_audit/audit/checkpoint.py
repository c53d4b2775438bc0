"""Signed checkpoints: an Ed25519 signature over (session, record count, head).

A chain with its anchor proves only that nothing changed *unless* someone rewrote both; a
checkpoint signed with a key the agent never sees proves what the chain was when it was signed.
``verify_checkpointed`` checks the newest checkpoint of a session with the public key, then
verifies that the chain still has that head at that count (``checkpoint_mismatch`` otherwise)
and that every later record extends it. So a record edited and every link and the anchor
recomputed, or a chain rolled back to an older state with its older anchor, is caught — as long
as the private key was kept out of the agent's environment.

Checkpoints are appended, one JSON object per line, to ``<storage>/checkpoints/<sessionId>.jsonl``
(or a file of the caller's choice)::

    {"format": "harness-audit-checkpoint/1", "sessionId": "s1", "recordCount": 12,
     "head": "<64 hex>", "signedAt": "2026-…Z", "keyId": "<16 hex>", "signature": "<base64>"}

The signature covers ``format``, ``sessionId``, ``recordCount``, ``head`` and ``signedAt``, one per
line (``message``). Keys are PEM (PKCS#8 private, SubjectPublicKeyInfo public); the private key
comes from a file or from ``$HARNESS_AUDIT_SIGNING_KEY`` (the PEM itself or a path). The
``cryptography`` package is needed only here: ``pip install 'pytest-harness-audit[sign]'``.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from pytest_harness_audit.audit.clock import utc_timestamp
from pytest_harness_audit.audit.errors import AuditError, ChainError
from pytest_harness_audit.audit.scan import Failure
from pytest_harness_audit.audit.storage import StorageLayout
from pytest_harness_audit.audit.verify import ChainReport, verify_chain
from pytest_harness_audit.audit.witness import Head

FORMAT = "harness-audit-checkpoint/1"
KEY_ENV = "HARNESS_AUDIT_SIGNING_KEY"
_SIGNATURE_BYTES = 64


class KeyLoadError(AuditError):
    """A key cannot be loaded: missing file, not PEM, not Ed25519, or ``cryptography`` absent."""


def _crypto() -> Any:
    try:
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric import ed25519
    except ImportError:
        raise KeyLoadError(
            "signed checkpoints need the 'cryptography' package: "
            "pip install 'pytest-harness-audit[sign]'"
        ) from None
    return serialization, ed25519


@dataclass(frozen=True)
class Checkpoint:
    """One signed statement: session ``session_id`` had ``count`` records ending in ``head``."""

    session_id: str
    count: int
    head: str
    signed_at: str
    key_id: str
    signature: str

    @property
    def as_head(self) -> Head:
        """The checkpoint as a ``Head`` to verify a chain against."""
        return Head(self.count, self.head)

    def to_dict(self) -> dict[str, Any]:
        """The stored (JSON) form."""
        return {
            "format": FORMAT,
            "sessionId": self.session_id,
            "recordCount": self.count,
            "head": self.head,
            "signedAt": self.signed_at,
            "keyId": self.key_id,
            "signature": self.signature,
        }


def message(session_id: str, count: int, head: str, signed_at: str) -> bytes:
    """The exact bytes a checkpoint signature covers."""
    return f"{FORMAT}\n{session_id}\n{count}\n{head}\n{signed_at}\n".encode()


# -- keys ------------------------------------------------------------------------------------


def _pem_source(source: str | bytes | os.PathLike[str], what: str) -> tuple[bytes, str]:
    """The PEM bytes of ``source`` (PEM text, or a path) and a name for messages."""
    if isinstance(source, bytes):
        return source, what
    text = os.fspath(source)
    if "-----BEGIN" in text:
        return text.encode("ascii", "replace"), what
    try:
        return Path(text).read_bytes(), text
    except OSError as exc:
        raise KeyLoadError(f"{text}: {what}: cannot read ({exc.strerror})") from None


def load_private_key(source: Any) -> Any:
    """An Ed25519 private key from a key object, PEM text or bytes, or a PEM file path."""
    serialization, ed25519 = _crypto()
    if isinstance(source, ed25519.Ed25519PrivateKey):
        return source
    data, name = _pem_source(source, "signing key")
    try:
        key = serialization.load_pem_private_key(data, password=None)
    except (ValueError, TypeError) as exc:
        raise KeyLoadError(f"{name}: signing key: not a PEM private key ({exc})") from None
    if not isinstance(key, ed25519.Ed25519PrivateKey):
        raise KeyLoadError(f"{name}: signing key: not an Ed25519 key")
    return key


def load_public_key(source: Any) -> Any:
    """An Ed25519 public key from a key object, PEM text or bytes, or a PEM file path.

    A private key (object or PEM) gives its public half.
    """
    serialization, ed25519 = _crypto()
    if isinstance(source, ed25519.Ed25519PublicKey):
        return source
    if isinstance(source, ed25519.Ed25519PrivateKey):
        return source.public_key()
    data, name = _pem_source(source, "public key")
    if b"PRIVATE KEY" in data:
        return load_private_key(data).public_key()
    try:
        key = serialization.load_pem_public_key(data)
    except (ValueError, TypeError) as exc:
        raise KeyLoadError(f"{name}: public key: not a PEM public key ({exc})") from None
    if not isinstance(key, ed25519.Ed25519PublicKey):
        raise KeyLoadError(f"{name}: public key: not an Ed25519 key")
    return key


def signing_key_from_env(environ: dict[str, str] | None = None) -> Any | None:
    """The key of ``$HARNESS_AUDIT_SIGNING_KEY`` (PEM or a path), or ``None`` when unset."""
    value = (os.environ if environ is None else environ).get(KEY_ENV)
    return load_private_key(value) if value else None


def key_id(public_key: Any) -> str:
    """First 16 hex of the SHA-256 of the raw public key: names the key in checkpoints."""
    serialization, _ = _crypto()
    raw = public_key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return hashlib.sha256(raw).hexdigest()[:16]


def generate_key_pair(out: str | os.PathLike[str]) -> tuple[Path, Path]:
    """Write a new private key to ``out`` (mode 0600) and its public key to ``out.pub``."""
    serialization, ed25519 = _crypto()
    private_path = Path(out)
    public_path = private_path.with_name(private_path.name + ".pub")
    for path in (private_path, public_path):
        if path.exists() or path.is_symlink():
            raise KeyLoadError(f"{path}: already exists; refusing to overwrite a key")
    key = ed25519.Ed25519PrivateKey.generate()
    private_pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    public_pem = key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    fd = os.open(private_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as handle:
        handle.write(private_pem)
    public_path.write_bytes(public_pem)
    return private_path, public_path


# -- signing ---------------------------------------------------------------------------------


def checkpoints_path(storage_dir: str | os.PathLike[str], session_id: str) -> Path:
    """``<storage>/checkpoints/<sessionId>.jsonl``."""
    layout = StorageLayout.at(storage_dir)
    return layout.checkpoints_dir / f"{layout.paths(session_id).session_id}.jsonl"


def sign_checkpoint(
    storage_dir: str | os.PathLike[str],
    session_id: str,
    key: Any,
    *,
    witness: Head | None = None,
    path: str | os.PathLike[str] | None = None,
) -> Checkpoint:
    """Sign the session's head and append the checkpoint to its checkpoints file.

    With ``witness`` (the writer's in-memory ``AuditChain.witness``, which needs a count and a
    full hash) that head is signed — what the writer knows, whatever the file says now. Without,
    the chain is verified first and its head signed; an invalid chain is refused
    (``ChainError``).
    """
    private = load_private_key(key)
    sid = StorageLayout.at(storage_dir).paths(session_id).session_id
    if witness is not None:
        if witness.count is None or (len(witness.hash) != 64 and witness.count != 0):
            raise AuditError(f"witness {witness}: a checkpoint needs a count and a full head")
        count, head = witness.count, witness.hash
    else:
        report = verify_chain(storage_dir, sid)
        if not report.valid:
            raise ChainError(
                f"{report.path}: refusing to sign an invalid chain "
                f"(record {report.first_bad_index}: {report.reason})"
            )
        count, head = report.record_count, report.head
    signed_at = utc_timestamp()
    signature = private.sign(message(sid, count, head, signed_at))
    checkpoint = Checkpoint(
        sid,
        count,
        head,
        signed_at,
        key_id(private.public_key()),
        base64.b64encode(signature).decode("ascii"),
    )
    target = Path(path) if path is not None else checkpoints_path(storage_dir, sid)
    target.parent.mkdir(parents=True, exist_ok=True)
    line = json.dumps(checkpoint.to_dict(), separators=(",", ":")) + "\n"
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(target, flags, 0o644)
    try:
        os.write(fd, line.encode("utf-8"))
        os.fsync(fd)
    finally:
        os.close(fd)
    return checkpoint


def sign_session_end(
    storage_dir: str | os.PathLike[str],
    session_id: str,
    key: Any,
    *,
    witness: Head | None = None,
) -> Checkpoint:
    """At the end of a session, sign its final head (the witness when the caller holds one).

    ``key``: a key object, PEM, or a path (e.g. from ``signing_key_from_env()``).
    """
    return sign_checkpoint(storage_dir, session_id, key, witness=witness)


# -- checking --------------------------------------------------------------------------------


class CheckpointError(AuditError):
    """The newest checkpoint cannot be trusted; ``reason`` is a ``checkpoint_*`` code."""

    def __init__(self, reason: str, text: str) -> None:
        super().__init__(text)
        self.reason = reason


def newest_checkpoint(path: str | os.PathLike[str], session_id: str, public_key: Any) -> Checkpoint:
    """The last checkpoint of the file at ``path``, its signature checked with ``public_key``.

    Raises ``CheckpointError`` (one line naming the file and the failed check) when the file is
    missing or empty, its last line is cut short or malformed, the signature does not verify,
    or the checkpoint is for another session.
    """
    key = load_public_key(public_key)
    where = os.fspath(path)
    try:
        data = Path(path).read_bytes()
    except FileNotFoundError:
        raise CheckpointError("checkpoint_missing", f"{where}: no checkpoint file") from None
    except OSError as exc:
        raise CheckpointError("checkpoint_missing", f"{where}: {exc.strerror}") from None
    if not data.strip():
        raise CheckpointError("checkpoint_missing", f"{where}: no checkpoint in the file")
    if not data.endswith(b"\n"):
        raise CheckpointError("checkpoint_malformed", f"{where}: last checkpoint is cut short")
    last = data.rstrip(b"\n").rsplit(b"\n", 1)[-1]
    checkpoint = _parse(last, where)
    try:
        signature = base64.b64decode(checkpoint.signature, validate=True)
    except (binascii.Error, ValueError):
        raise CheckpointError("checkpoint_malformed", f"{where}: signature is not base64") from None
    if len(signature) != _SIGNATURE_BYTES:
        raise CheckpointError(
            "checkpoint_malformed",
            f"{where}: signature has {len(signature)} bytes, an Ed25519 signature has 64",
        )
    signed = message(checkpoint.session_id, checkpoint.count, checkpoint.head, checkpoint.signed_at)
    try:
        key.verify(signature, signed)
    except Exception:  # cryptography's InvalidSignature
        raise CheckpointError(
            "checkpoint_signature",
            f"{where}: signature does not verify with public key {key_id(key)} "
            f"(checkpoint signed by key {checkpoint.key_id})",
        ) from None
    if checkpoint.session_id != session_id:
        raise CheckpointError(
            "checkpoint_session",
            f"{where}: checkpoint is for session {checkpoint.session_id!r}, not {session_id!r}",
        )
    return checkpoint


def _parse(line: bytes, where: str) -> Checkpoint:
    try:
        value = json.loads(line)
    except ValueError:
        raise CheckpointError("checkpoint_malformed", f"{where}: last line is not JSON") from None
    fields = ("sessionId", "recordCount", "head", "signedAt", "keyId", "signature")
    if not isinstance(value, dict) or value.get("format") != FORMAT:
        raise CheckpointError("checkpoint_malformed", f"{where}: not a {FORMAT} checkpoint")
    missing = [name for name in fields if name not in value]
    count = value.get("recordCount")
    if missing or isinstance(count, bool) or not isinstance(count, int) or count < 0:
        text = f"{where}: checkpoint lacks {', '.join(missing) or 'a valid recordCount'}"
        raise CheckpointError("checkpoint_malformed", text)
    texts = [value[name] for name in fields if name != "recordCount"]
    if not all(isinstance(item, str) for item in texts):
        raise CheckpointError("checkpoint_malformed", f"{where}: checkpoint fields must be text")
    sid, head, signed_at, key, signature = texts
    return Checkpoint(sid, count, head, signed_at, key, signature)


def verify_checkpointed(
    storage_dir: str | os.PathLike[str],
    session_id: str,
    public_key: Any,
    *,
    path: str | os.PathLike[str] | None = None,
    full: bool = False,
    witness: Head | str | None = None,
) -> ChainReport:
    """``verify_chain`` plus the session's newest signed checkpoint (see the module docstring).

    A checkpoint that cannot be trusted makes the report invalid with its ``checkpoint_*``
    reason; a key that cannot be loaded raises ``AuditError`` (a usage error).
    """
    key = load_public_key(public_key)
    sid = StorageLayout.at(storage_dir).paths(session_id).session_id
    target = Path(path) if path is not None else checkpoints_path(storage_dir, sid)
    try:
        checkpoint = newest_checkpoint(target, sid, key)
    except CheckpointError as exc:
        report = verify_chain(storage_dir, sid, full=full, witness=witness)
        failure = Failure(report.record_count, 4, exc.reason, None, None, None, str(exc))
        state = "missing" if exc.reason == "checkpoint_missing" else "invalid"
        return report.with_failure(failure, checkpoint_state=state, checkpoint_file=str(target))
    report = verify_chain(
        storage_dir, sid, full=full, witness=witness, checkpoint=checkpoint.as_head
    )
    return replace(report, checkpoint_file=str(target))
