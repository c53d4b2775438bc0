"""Tampering with a whole stored session — chain, anchor, session file, links, checkpoints.

Each case acts on a finished session ``s`` of ``RECORDS`` records (record 2 is the blocked
``rm -rf /``) beside a second session ``other``, and names the weakest level that detects it:

* ``verify``     — ``harness-audit audit verify`` alone;
* ``witness``    — the head the writer kept in memory (``AuditChain.witness``), compared at the end
                   of the test;
* ``head``       — the head published out of the agent's reach (a 12-hex prefix), given to
                   ``audit verify --head``;
* ``checkpoint`` — the session's final head signed with a key the agent never saw
                   (``audit verify --public-key``).

"Detects" means: the chain is reported invalid, or (for a head or checkpoint) the chain no longer
ends at it. Every level above a case's level detects it too. ``WHY`` cases are the ones the issue
measured on main; ``OWN`` are further classes.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_harness_audit.audit import AuditChain, RecordDraft
from pytest_harness_audit.audit.anchor import encode_slot
from pytest_harness_audit.audit.storage import SessionPaths

LEVELS = ("verify", "witness", "head", "checkpoint")
RECORDS = 5


@dataclass
class Stage:
    """The stored sessions a case tampers with."""

    storage: Path
    paths: SessionPaths
    other: SessionPaths
    root: Path

    def lines(self) -> list[bytes]:
        """The chain's complete lines."""
        return self.paths.chain.read_bytes().split(b"\n")[:-1]

    def records(self) -> list[dict[str, Any]]:
        """The chain's records."""
        return [json.loads(line) for line in self.lines()]

    def write_records(self, records: list[dict[str, Any]], *, legacy: bool = False) -> None:
        """Write ``records`` with every position and link recomputed (a forger's best chain)."""
        out, prev = [], "genesis"
        for index, record in enumerate(records):
            record["provenance"]["actionIndex"] = index
            record["provenance"]["prevRecordHash"] = prev
            line = json.dumps(record, separators=(",", ":"), ensure_ascii=False).encode()
            out.append(line)
            digest = hashlib.sha256(line).hexdigest()
            prev = digest[:16] if legacy else digest
        self.paths.chain.write_bytes(b"".join(line + b"\n" for line in out))

    def forge_anchor(self, *, snapshot: bool = True) -> None:
        """Rewrite the anchor (and the session file's head copy) to fit the chain as it is."""
        lines = self.lines()
        head = hashlib.sha256(lines[-1]).hexdigest() if lines else "genesis"
        size = self.paths.chain.stat().st_size
        slot = encode_slot(len(lines), size, head, None)
        self.paths.anchor.write_bytes(slot + slot)
        if snapshot:
            self.edit_session(anchor={"recordCount": len(lines), "head": head, "bytes": size})

    def edit_session(self, **fields: Any) -> None:
        """Change fields of the session file."""
        data = json.loads(self.paths.session_file.read_text())
        data.update(fields)
        self.paths.session_file.write_text(json.dumps(data))


def bash(command: str, status: str = "success") -> RecordDraft:
    """A Bash call draft."""
    return RecordDraft(
        tool="Bash",
        category="command",
        target=command,
        params={"command": command},
        constraints=("policy:deny", "rule:deny-rm-rf")
        if status == "blocked"
        else ("policy:allow",),
        status=status,
    )


def build_session(storage: Path, name: str, prefix: str = "") -> Any:
    """A finished session of ``RECORDS`` calls; returns the writer's witness."""
    with AuditChain(storage, name) as chain:
        for index in range(RECORDS):
            if index == 2:
                chain.append(bash("rm -rf /", "blocked"))
            else:
                chain.append(bash(f"{prefix}echo {index}"))
    return chain.witness


# -- the cases the issue measured ------------------------------------------------------------


def erase(stage: Stage) -> None:
    """`: > chain; rm anchor session-file` — the exact erase sequence (lock file left)."""
    stage.paths.chain.write_bytes(b"")
    stage.paths.anchor.unlink()
    stage.paths.session_file.unlink()


def erase_then_resume(stage: Stage) -> None:
    """Erase everything (lock file too), then the next hook call starts the session afresh."""
    erase(stage)
    stage.paths.lock.unlink()
    with AuditChain(stage.storage, "s") as chain:
        chain.append(bash("echo innocent"))


def truncate_chain(stage: Stage) -> None:
    """`truncate`/`Write` on the chain: keep the first two records."""
    stage.paths.chain.write_bytes(b"".join(line + b"\n" for line in stage.lines()[:2]))


def cut_tail_delete_both(stage: Stage) -> None:
    """Cut the tail, then delete both the anchor and the session file ("Anchor: none")."""
    truncate_chain(stage)
    stage.paths.anchor.unlink()
    stage.paths.session_file.unlink()
    stage.paths.lock.unlink()


def copy_other_session(stage: Stage) -> None:
    """Copy another session's three files over this one."""
    for name in ("chain", "anchor", "session_file"):
        shutil.copyfile(getattr(stage.other, name), getattr(stage.paths, name))


def symlink_other_session(stage: Stage) -> None:
    """Symlink this session's chain and anchor to another valid session's."""
    for name in ("chain", "anchor"):
        getattr(stage.paths, name).unlink()
        getattr(stage.paths, name).symlink_to(getattr(stage.other, name))


def edit_head_copy(stage: Stage) -> None:
    """Edit the head copy inside the session file."""
    stage.edit_session(anchor={"recordCount": RECORDS, "head": "0" * 64})


def recompute_everything(stage: Stage) -> None:
    """Turn the blocked `rm -rf /` into a success, recompute every link, the anchor, the copy."""
    records = stage.records()
    records[2]["result"]["status"] = "success"
    records[2]["rules"]["constraints"] = ["policy:allow"]
    stage.write_records(records)
    stage.forge_anchor()


def rollback(stage: Stage) -> None:
    """Roll back to an old chain (two records) with its old anchor and session file."""
    for path in (stage.paths.chain, stage.paths.anchor, stage.paths.session_file):
        path.unlink()
    with AuditChain(stage.storage, "s") as chain:
        chain.append(bash("echo 0"))
        chain.append(bash("echo 1"))


def forged_append_then_repair(stage: Stage) -> None:
    """Append a well-formed record linked to the head and ask repair to adopt it."""
    from pytest_harness_audit.audit import repair_chain
    from pytest_harness_audit.audit.errors import ChainError

    records = stage.records()
    forged = json.loads(json.dumps(records[-1]))
    forged["recordId"] = "audit:f0f0f0f0"
    line = json.dumps(forged, separators=(",", ":")).encode()
    lines = stage.lines()
    forged["provenance"]["actionIndex"] = len(lines)
    forged["provenance"]["prevRecordHash"] = hashlib.sha256(lines[-1]).hexdigest()
    line = json.dumps(forged, separators=(",", ":")).encode()
    with stage.paths.chain.open("ab") as handle:
        handle.write(line + b"\n")
    try:
        repair_chain(stage.storage, "s")
    except ChainError:
        return
    raise AssertionError("repair adopted a record nothing vouched for")


def writer_through_symlink(stage: Stage) -> None:
    """Make the chain a symlink to a decoy file and let a writer open the session."""
    from pytest_harness_audit.audit.errors import AuditError

    decoy = stage.root / "decoy.jsonl"
    decoy.write_bytes(stage.paths.chain.read_bytes())
    stage.paths.chain.unlink()
    stage.paths.chain.symlink_to(decoy)
    before = decoy.read_bytes()
    try:
        with AuditChain(stage.storage, "s") as chain:
            chain.append(bash("echo through the link"))
    except AuditError:
        pass
    assert decoy.read_bytes() == before, "the writer wrote through a symlink"


# -- further classes ---------------------------------------------------------------------------


def delete_anchor(stage: Stage) -> None:
    """Delete only the anchor."""
    stage.paths.anchor.unlink()


def delete_session_file(stage: Stage) -> None:
    """Delete only the session file (its repairs log and head copy)."""
    stage.paths.session_file.unlink()


def zero_anchor(stage: Stage) -> None:
    """Overwrite both anchor slots with garbage."""
    stage.paths.anchor.write_bytes(b"\x01" * 256)


def anchor_one_behind(stage: Stage) -> None:
    """Roll the anchor back one append (the older slot only)."""
    data = stage.paths.anchor.read_bytes()
    newer = (RECORDS & 1) * 128
    older = data[128 - newer : 256 - newer]
    stage.paths.anchor.write_bytes(older + older)


def truncate_and_forge_anchor(stage: Stage) -> None:
    """Cut the tail and rewrite the anchor to fit (the session file's head copy left)."""
    truncate_chain(stage)
    stage.forge_anchor(snapshot=False)


def truncate_and_forge_all(stage: Stage) -> None:
    """Cut the tail and rewrite the anchor and the head copy to fit."""
    truncate_chain(stage)
    stage.forge_anchor()


def delete_and_relink(stage: Stage) -> None:
    """Delete the blocked record, recompute every later link, the anchor and the copy."""
    records = stage.records()
    del records[2]
    stage.write_records(records)
    stage.forge_anchor()


def insert_and_relink(stage: Stage) -> None:
    """Insert a forged record, recompute every later link, the anchor and the copy."""
    records = stage.records()
    records.insert(1, json.loads(json.dumps(records[0])))
    records[1]["recordId"] = "audit:f0f0f0f0"
    stage.write_records(records)
    stage.forge_anchor()


def append_and_anchor(stage: Stage) -> None:
    """Append a forged, correctly linked record after the session ended; re-anchor it."""
    records = stage.records()
    forged = json.loads(json.dumps(records[-1]))
    forged["recordId"] = "audit:f0f0f0f0"
    stage.write_records([*records, forged])
    stage.forge_anchor()


def replace_with_fresh_session(stage: Stage) -> None:
    """Replace the session by a brand-new one of the same id, written by the real writer."""
    for path in (stage.paths.chain, stage.paths.anchor, stage.paths.session_file):
        path.unlink()
    build_session(stage.storage, "s", prefix="clean ")


def copy_chain_only(stage: Stage) -> None:
    """Copy only another session's chain over this one's."""
    shutil.copyfile(stage.other.chain, stage.paths.chain)


def copy_session_file_only(stage: Stage) -> None:
    """Copy only another session's session file over this one's."""
    shutil.copyfile(stage.other.session_file, stage.paths.session_file)


def hard_link_other_chain(stage: Stage) -> None:
    """Replace the chain and anchor by hard links to another session's (not symlinks)."""
    for name in ("chain", "anchor"):
        getattr(stage.paths, name).unlink()
        os.link(getattr(stage.other, name), getattr(stage.paths, name))


def symlink_audit_directory(stage: Stage) -> None:
    """Replace the whole audit directory by a symlink to a copy with a forged chain."""
    copy = stage.root / "audit-copy"
    shutil.copytree(stage.storage / "audit", copy)
    shutil.rmtree(stage.storage / "audit")
    (stage.storage / "audit").symlink_to(copy)


def symlink_anchor_to_forgery(stage: Stage) -> None:
    """Point the anchor at a forged anchor file elsewhere."""
    forged = stage.root / "forged.anchor"
    forged.write_bytes(stage.paths.anchor.read_bytes())
    stage.paths.anchor.unlink()
    stage.paths.anchor.symlink_to(forged)


def torn_tail(stage: Stage) -> None:
    """Append a fragment without newline."""
    with stage.paths.chain.open("ab") as handle:
        handle.write(b'{"recordId":"audit:dead')


def duplicate_last_and_anchor(stage: Stage) -> None:
    """Repeat the last line verbatim and re-anchor."""
    lines = stage.lines()
    stage.paths.chain.write_bytes(b"".join(line + b"\n" for line in [*lines, lines[-1]]))
    stage.forge_anchor()


def rename_session_in_records(stage: Stage) -> None:
    """Make every record name another session, with every link and the anchor recomputed."""
    records = stage.records()
    for record in records:
        record["provenance"]["sessionId"] = "other"
    stage.write_records(records)
    stage.forge_anchor()


def pose_as_reference_chain(stage: Stage) -> None:
    """Drop the blocked record and every file but the chain, relinked with 16-hex legacy links."""
    records = stage.records()
    del records[2]
    for record in records:
        record.pop("kind", None)
    stage.write_records(records, legacy=True)
    for path in (stage.paths.anchor, stage.paths.session_file, stage.paths.lock):
        path.unlink()


def forged_writer_vouches(stage: Stage) -> None:
    """Append a linked record, list a dead writer in the session file, let repair adopt it."""
    from pytest_harness_audit.audit import repair_chain

    lines = stage.lines()
    forged = json.loads(lines[-1])
    forged["recordId"] = "audit:f0f0f0f0"
    forged["provenance"]["actionIndex"] = len(lines)
    forged["provenance"]["prevRecordHash"] = hashlib.sha256(lines[-1]).hexdigest()
    with stage.paths.chain.open("ab") as handle:
        handle.write(json.dumps(forged, separators=(",", ":")).encode() + b"\n")
    stage.edit_session(writers=[{"pid": 999_999_999, "host": os.uname().nodename, "token": "x"}])
    assert repair_chain(stage.storage, "s").adopted_records == 1


def rollback_and_drop_checkpoints(stage: Stage) -> None:
    """Roll back and delete the signed checkpoints too."""
    rollback(stage)
    shutil.rmtree(stage.storage / "checkpoints")


def recompute_and_resign(stage: Stage) -> None:
    """Recompute everything and sign the forged head with a key of the forger's own."""
    from pytest_harness_audit.audit.checkpoint import generate_key_pair, sign_session_end

    recompute_everything(stage)
    (stage.root / "forger").mkdir()
    private, _ = generate_key_pair(stage.root / "forger" / "key")
    sign_session_end(stage.storage, "s", private)


@dataclass(frozen=True)
class Case:
    """One tamper class: how, where it comes from, and the weakest level that detects it."""

    name: str
    tamper: Callable[[Stage], None]
    level: str
    origin: str


WHY = "why"
OWN = "own"
CASES = [
    Case("erase", erase, "verify", WHY),
    Case("erase-then-resume", erase_then_resume, "witness", WHY),
    Case("truncate-chain", truncate_chain, "verify", WHY),
    Case("cut-tail-delete-anchor-and-session", cut_tail_delete_both, "verify", WHY),
    Case("copy-other-session", copy_other_session, "verify", WHY),
    Case("symlink-other-session", symlink_other_session, "verify", WHY),
    Case("edit-head-copy", edit_head_copy, "verify", WHY),
    Case("recompute-everything", recompute_everything, "witness", WHY),
    Case("rollback-with-old-anchor", rollback, "witness", WHY),
    Case("forged-append-repair", forged_append_then_repair, "verify", WHY),
    Case("writer-through-symlink", writer_through_symlink, "verify", WHY),
    Case("delete-anchor", delete_anchor, "verify", OWN),
    Case("delete-session-file", delete_session_file, "verify", OWN),
    Case("garbage-anchor", zero_anchor, "verify", OWN),
    Case("anchor-one-behind", anchor_one_behind, "verify", OWN),
    Case("truncate-forge-anchor", truncate_and_forge_anchor, "verify", OWN),
    Case("truncate-forge-anchor-and-copy", truncate_and_forge_all, "witness", OWN),
    Case("delete-relink", delete_and_relink, "witness", OWN),
    Case("insert-relink", insert_and_relink, "witness", OWN),
    Case("append-after-end", append_and_anchor, "witness", OWN),
    Case("replace-with-fresh-session", replace_with_fresh_session, "witness", OWN),
    Case("copy-chain-only", copy_chain_only, "verify", OWN),
    Case("copy-session-file-only", copy_session_file_only, "verify", OWN),
    Case("hard-link-other-session", hard_link_other_chain, "verify", OWN),
    Case("symlink-audit-directory", symlink_audit_directory, "verify", OWN),
    Case("symlink-anchor-to-forgery", symlink_anchor_to_forgery, "verify", OWN),
    Case("torn-tail", torn_tail, "verify", OWN),
    Case("duplicate-last-reanchor", duplicate_last_and_anchor, "verify", OWN),
    Case("records-renamed-relinked", rename_session_in_records, "verify", OWN),
    Case("pose-as-reference-chain", pose_as_reference_chain, "witness", OWN),
    Case("forged-dead-writer-vouches", forged_writer_vouches, "witness", OWN),
    Case("rollback-drop-checkpoints", rollback_and_drop_checkpoints, "witness", OWN),
    Case("recompute-resign-own-key", recompute_and_resign, "witness", OWN),
]
"""Every session tamper class."""
