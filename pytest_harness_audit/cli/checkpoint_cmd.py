"""`harness-audit audit checkpoint | keygen`, and the head and key options of `audit verify`."""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Callable
from typing import Any

from pytest_harness_audit.audit.checkpoint import (
    KEY_ENV,
    checkpoints_path,
    generate_key_pair,
    load_private_key,
    load_public_key,
    sign_checkpoint,
    verify_checkpointed,
)
from pytest_harness_audit.audit.errors import ChainError
from pytest_harness_audit.audit.verify import ChainReport, verify_chain
from pytest_harness_audit.audit.witness import parse_head
from pytest_harness_audit.errors import UsageError
from pytest_harness_audit.wording import plural

Add = Callable[[str, str], argparse.ArgumentParser]


def add_verify_options(verify: argparse.ArgumentParser) -> None:
    """``--head``, ``--public-key`` and ``--checkpoints`` of ``audit verify``."""
    verify.add_argument(
        "--head",
        metavar="HEX",
        help="a published head the chain must contain: 64 hex, a prefix of 12 or more, "
        "optionally COUNT:HEX (needs SESSION)",
    )
    verify.add_argument(
        "--public-key",
        metavar="FILE",
        help="check the newest signed checkpoint with this Ed25519 public key (PEM)",
    )
    verify.add_argument(
        "--checkpoints",
        metavar="FILE",
        help="checkpoint file (default: <storage>/checkpoints/<session>.jsonl; needs SESSION)",
    )


def verifier(args: argparse.Namespace) -> Callable[[str], ChainReport]:
    """A function verifying one session as ``args`` say (usage errors raised at once)."""
    if (args.head or args.checkpoints) and not args.session:
        raise UsageError("--head and --checkpoints need a SESSION")
    head = parse_head(args.head) if args.head else None
    key = load_public_key(args.public_key) if args.public_key else None

    def verify(session_id: str) -> ChainReport:
        """Verify one session (with the head and the checkpoint when given)."""
        if key is None:
            return verify_chain(args.storage, session_id, full=args.full, witness=head)
        return verify_checkpointed(
            args.storage,
            session_id,
            key,
            path=args.checkpoints,
            full=args.full,
            witness=head,
        )

    return verify


def head_lines(report: ChainReport) -> list[str]:
    """The witness and checkpoint lines of ``audit verify SESSION``."""
    lines = []
    if report.witness_state != "none":
        count = (
            "" if report.witness_count is None else f" ({plural(report.witness_count, 'record')})"
        )
        lines.append(f"Published head: {report.witness_state}{count}")
    if report.checkpoint_state != "none":
        count = (
            ""
            if report.checkpoint_count is None
            else f" ({plural(report.checkpoint_count, 'record')})"
        )
        lines.append(f"Checkpoint: {report.checkpoint_state}{count} in {report.checkpoint_file}")
    return lines


def register(add: Add) -> None:
    """Add ``checkpoint`` and ``keygen`` to the ``audit`` group (``add(name, help)``)."""
    checkpoint = add("checkpoint", "sign the session's head (count, hash) with an Ed25519 key")
    checkpoint.add_argument("session", help="session id")
    checkpoint.add_argument(
        "--key", metavar="FILE", help=f"private key, PEM (default: ${KEY_ENV}, a PEM or a path)"
    )
    checkpoint.add_argument(
        "--checkpoints",
        metavar="FILE",
        help="append here (default: <storage>/checkpoints/<session>.jsonl)",
    )
    checkpoint.set_defaults(func=_checkpoint)
    keygen = add("keygen", "make an Ed25519 key pair: FILE (private, 0600) and FILE.pub")
    keygen.add_argument("--out", metavar="FILE", required=True, help="private key file")
    keygen.set_defaults(func=_keygen)


def _checkpoint(args: argparse.Namespace) -> int:
    source = args.key or os.environ.get(KEY_ENV)
    if not source:
        raise UsageError(f"no signing key: give --key FILE or set ${KEY_ENV}")
    key = load_private_key(source)
    try:
        checkpoint = sign_checkpoint(args.storage, args.session, key, path=args.checkpoints)
    except ChainError as exc:
        if args.json:
            print(json.dumps({"sessionId": args.session, "signed": False, "refused": str(exc)}))
        else:
            print(f"Refusing to sign: {exc}")
        return 1
    if args.json:
        print(json.dumps({"signed": True, **checkpoint.to_dict()}, indent=2))
        return 0
    print(
        f"Signed checkpoint: session {checkpoint.session_id}, {checkpoint.count} records, "
        f"head {checkpoint.head} (key {checkpoint.key_id})"
    )
    print(f"Stored in: {args.checkpoints or checkpoints_path(args.storage, args.session)}")
    return 0


def _keygen(args: argparse.Namespace) -> int:
    private, public = generate_key_pair(args.out)
    if args.json:
        print(json.dumps({"privateKey": str(private), "publicKey": str(public)}))
    else:
        print(f"Private key: {private} (keep it where the audited agent cannot read it)")
        print(f"Public key:  {public}")
    return 0


def repair_key(args: argparse.Namespace) -> Any:
    """The public key ``audit repair --public-key`` names, loaded (``None`` without)."""
    return load_public_key(args.public_key) if args.public_key else None
