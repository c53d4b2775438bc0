"""Signed checkpoints and published heads through the library and `harness-audit audit …`."""

from __future__ import annotations

import json
import shutil

import pytest

pytest.importorskip("cryptography")

from pytest_harness_audit.audit import AuditChain, StorageLayout, verify_chain
from pytest_harness_audit.audit.checkpoint import (
    checkpoints_path,
    generate_key_pair,
    sign_session_end,
    verify_checkpointed,
)
from pytest_harness_audit.audit.errors import AuditError
from pytest_harness_audit.cli import main


@pytest.fixture
def keys(tmp_path):
    """A key pair in its own directory: (private, public)."""
    directory = tmp_path / "keys"
    directory.mkdir()
    return generate_key_pair(directory / "audit.key")


@pytest.fixture
def session(storage, make_draft):
    """Session 's1' with four records; returns the writer's witness."""
    with AuditChain(storage, "s1") as chain:
        for index in range(4):
            chain.append(make_draft(index))
    return chain.witness


def cli(*args, capsys):
    code = main([*args])
    out, err = capsys.readouterr()
    return code, out, err


def _recompute_everything(storage):
    """Edit record 1, recompute every later link, the anchor and the session file's head copy."""
    import hashlib

    from pytest_harness_audit.audit.anchor import encode_slot

    paths = StorageLayout.at(storage).paths("s1")
    records = [json.loads(line) for line in paths.chain.read_bytes().split(b"\n")[:-1]]
    records[1]["result"]["status"] = "blocked"
    out, prev = b"", "genesis"
    for record in records:
        record["provenance"]["prevRecordHash"] = prev
        line = json.dumps(record, separators=(",", ":")).encode()
        out += line + b"\n"
        prev = hashlib.sha256(line).hexdigest()
    paths.chain.write_bytes(out)
    slot = encode_slot(len(records), len(out), prev, None)
    paths.anchor.write_bytes(slot + slot)
    data = json.loads(paths.session_file.read_text())
    data["anchor"] = {"recordCount": len(records), "head": prev}
    paths.session_file.write_text(json.dumps(data))


def test_keygen_writes_a_private_key_readable_only_by_its_owner(tmp_path, capsys):
    out_file = tmp_path / "k"
    code, out, _ = cli("audit", "keygen", "--out", str(out_file), capsys=capsys)
    assert code == 0 and "Public key:" in out
    assert oct(out_file.stat().st_mode & 0o777) == "0o600"
    assert b"PUBLIC KEY" in (tmp_path / "k.pub").read_bytes()
    code, _, err = cli("audit", "keygen", "--out", str(out_file), capsys=capsys)
    assert code == 2 and "already exists" in err


def test_checkpoint_then_verify_with_the_public_key(storage, session, keys, capsys):
    private, public = keys
    code, out, _ = cli(
        "--storage", str(storage), "audit", "checkpoint", "s1", "--key", str(private), capsys=capsys
    )
    assert code == 0 and "4 records" in out and session.hash in out
    stored = json.loads(checkpoints_path(storage, "s1").read_text())
    assert (stored["recordCount"], stored["head"]) == (4, session.hash)
    code, out, _ = cli(
        "audit",
        "verify",
        "s1",
        "--public-key",
        str(public),
        "--storage",
        str(storage),
        capsys=capsys,
    )
    assert code == 0, out
    assert "Checkpoint: current (4 records)" in out


def test_records_after_the_checkpoint_extend_it(storage, session, keys, make_draft):
    private, public = keys
    sign_session_end(storage, "s1", private, witness=session)
    with AuditChain(storage, "s1") as chain:
        chain.append(make_draft(9))
    report = verify_checkpointed(storage, "s1", public)
    assert (report.valid, report.checkpoint_state, report.checkpoint_count) == (
        True,
        "extended",
        4,
    )


def test_the_key_can_come_from_the_environment(storage, session, keys, capsys, monkeypatch):
    private, _ = keys
    monkeypatch.setenv("HARNESS_AUDIT_SIGNING_KEY", private.read_text())
    code, _, _ = cli("--storage", str(storage), "audit", "checkpoint", "s1", capsys=capsys)
    assert code == 0
    monkeypatch.delenv("HARNESS_AUDIT_SIGNING_KEY")
    code, _, err = cli("--storage", str(storage), "audit", "checkpoint", "s1", capsys=capsys)
    assert code == 2 and "HARNESS_AUDIT_SIGNING_KEY" in err


def test_recompute_everything_passes_verify_but_not_the_head_nor_the_checkpoint(
    storage, session, keys, capsys
):
    private, public = keys
    sign_session_end(storage, "s1", private, witness=session)
    _recompute_everything(storage)
    base = ["--storage", str(storage), "audit", "verify", "s1"]
    code, out, _ = cli(*base, capsys=capsys)
    assert code == 0 and "Chain valid: true" in out  # documented: verify alone cannot tell
    code, out, _ = cli(*base, "--head", session.hash, capsys=capsys)
    assert code == 1 and "witness_mismatch" in out
    code, out, _ = cli(*base, "--head", session.short, capsys=capsys)
    assert code == 1 and "witness_mismatch" in out
    code, out, _ = cli(*base, "--public-key", str(public), capsys=capsys)
    assert code == 1 and "checkpoint_mismatch" in out


def test_a_rollback_to_an_older_chain_fails_the_checkpoint(storage, keys, make_draft):
    private, public = keys
    paths = StorageLayout.at(storage).paths("s1")
    with AuditChain(storage, "s1") as chain:
        chain.append(make_draft(0))
    saved = {name: getattr(paths, name).read_bytes() for name in ("chain", "anchor")}
    with AuditChain(storage, "s1") as chain:
        chain.append(make_draft(1))
    sign_session_end(storage, "s1", private)
    for name, data in saved.items():
        getattr(paths, name).write_bytes(data)
    data = json.loads(paths.session_file.read_text())
    data["anchor"] = None
    paths.session_file.write_text(json.dumps(data))
    assert verify_chain(storage, "s1").valid
    report = verify_checkpointed(storage, "s1", public)
    assert (report.valid, report.reason) == (False, "checkpoint_mismatch")


def test_a_malformed_key_is_one_usage_line(storage, session, tmp_path, capsys):
    bad = tmp_path / "bad.pem"
    bad.write_text("-----BEGIN PUBLIC KEY-----\nnot base64\n-----END PUBLIC KEY-----\n")
    code, out, err = cli(
        "--storage", str(storage), "audit", "verify", "s1", "--public-key", str(bad), capsys=capsys
    )
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and str(bad) in err and "public key" in err
    code, out, err = cli(
        "--storage", str(storage), "audit", "checkpoint", "s1", "--key", str(bad), capsys=capsys
    )
    assert code == 2 and err.count("\n") == 1 and str(bad) in err and "signing key" in err


def _failure_line(out):
    return next(line for line in out.splitlines() if "checkpoint_" in line and "  - " in line)


def test_a_wrong_key_is_invalid_naming_the_file_and_the_check(storage, session, keys, tmp_path):
    private, _ = keys
    (tmp_path / "other").mkdir()
    _, other_public = generate_key_pair(tmp_path / "other" / "k")
    sign_session_end(storage, "s1", private)
    code, out = _verify(storage, "s1", other_public)
    assert code == 1
    line = _failure_line(out)
    assert "checkpoint_signature" in line and str(checkpoints_path(storage, "s1")) in line


def _verify(storage, sid, public, *extra):
    import io
    from contextlib import redirect_stdout

    buffer = io.StringIO()
    with redirect_stdout(buffer):
        code = main(
            ["--storage", str(storage), "audit", "verify", sid, "--public-key", str(public), *extra]
        )
    return code, buffer.getvalue()


def test_a_checkpoint_of_another_session_is_invalid(storage, session, keys, make_draft):
    private, public = keys
    with AuditChain(storage, "s2") as chain:
        chain.append(make_draft(0))
    sign_session_end(storage, "s2", private)
    shutil.copyfile(checkpoints_path(storage, "s2"), checkpoints_path(storage, "s1"))
    code, out = _verify(storage, "s1", public)
    line = _failure_line(out)
    assert code == 1 and "checkpoint_session" in line and "'s2'" in line


@pytest.mark.parametrize("cut", [1, 20, 60])
def test_a_truncated_checkpoint_file_is_invalid(storage, session, keys, cut):
    private, public = keys
    sign_session_end(storage, "s1", private)
    path = checkpoints_path(storage, "s1")
    path.write_bytes(path.read_bytes()[:-cut])
    code, out = _verify(storage, "s1", public)
    line = _failure_line(out)
    assert code == 1 and "checkpoint_malformed" in line and str(path) in line


def test_a_short_signature_is_malformed(storage, session, keys):
    private, public = keys
    sign_session_end(storage, "s1", private)
    path = checkpoints_path(storage, "s1")
    data = json.loads(path.read_text())
    data["signature"] = data["signature"][:40]
    path.write_text(json.dumps(data) + "\n")
    report = verify_checkpointed(storage, "s1", public)
    assert (
        report.reason == "checkpoint_malformed" and "Ed25519 signature has 64" in report.errors[-1]
    )


def test_no_checkpoint_with_a_public_key_is_invalid(storage, session, keys):
    _, public = keys
    report = verify_checkpointed(storage, "s1", public)
    assert (report.valid, report.reason, report.checkpoint_state) == (
        False,
        "checkpoint_missing",
        "missing",
    )


def test_signing_refuses_an_invalid_chain(storage, session, keys, capsys):
    private, _ = keys
    paths = StorageLayout.at(storage).paths("s1")
    paths.chain.write_bytes(paths.chain.read_bytes()[:-5] + b"\n")
    code, out, _ = cli(
        "--storage", str(storage), "audit", "checkpoint", "s1", "--key", str(private), capsys=capsys
    )
    assert code == 1 and out.startswith("Refusing to sign")


def test_a_checkpoint_vouches_for_an_interrupted_append(storage, session, keys, make_draft):
    private, public = keys
    paths = StorageLayout.at(storage).paths("s1")
    before = paths.anchor.read_bytes()
    snapshot = json.loads(paths.session_file.read_text())
    with AuditChain(storage, "s1") as chain:
        chain.append(make_draft(4))
    sign_session_end(storage, "s1", private, witness=chain.witness)
    paths.anchor.write_bytes(before)  # the anchor update "never happened"
    paths.session_file.write_text(json.dumps(snapshot))  # nor the close
    from pytest_harness_audit.audit import repair_chain
    from pytest_harness_audit.audit.errors import ChainError

    with pytest.raises(ChainError, match="nothing vouches"):
        repair_chain(storage, "s1")
    result = repair_chain(storage, "s1", public_key=public)
    assert result.adopted_records == 1 and result.report.valid


def test_head_needs_a_session_and_a_valid_form(storage, session, capsys):
    code, _, err = cli(
        "--storage", str(storage), "audit", "verify", "--head", "a" * 64, capsys=capsys
    )
    assert code == 2 and "SESSION" in err
    code, _, err = cli(
        "--storage", str(storage), "audit", "verify", "s1", "--head", "abc", capsys=capsys
    )
    assert code == 2 and "12 to 64 hex" in err


def test_a_witness_without_a_full_hash_cannot_be_signed(storage, session, keys):
    from pytest_harness_audit.audit.witness import Head

    with pytest.raises(AuditError, match="full head"):
        sign_session_end(storage, "s1", keys[0], witness=Head(4, session.hash[:12]))
