"""Evidence out of the agent's reach: the gaps verify closes, the witness, repair's vouching."""

from __future__ import annotations

import json
import os
import shutil

import pytest

from pytest_harness_audit.audit import AuditChain, StorageLayout, repair_chain, verify_chain
from pytest_harness_audit.audit.errors import AuditError, ChainError
from pytest_harness_audit.audit.storage import default_storage, project_id
from pytest_harness_audit.audit.witness import Head, parse_head


def _session(storage, name="s1", count=4, make_draft=None):
    with AuditChain(storage, name) as chain:
        for index in range(count):
            chain.append(make_draft(index))
        return chain.witness


def _relink_everything(path, edit, *, grow=False):
    """Edit record 1 (and append a copy of the last record), then recompute every link."""
    import hashlib

    lines = path.read_bytes().split(b"\n")[:-1]
    records = [json.loads(line) for line in lines]
    edit(records[1])
    if grow:
        records.append(json.loads(lines[-1]))
    out, prev = [], "genesis"
    for index, record in enumerate(records):
        record["provenance"]["actionIndex"] = index
        record["provenance"]["prevRecordHash"] = prev
        line = json.dumps(record, separators=(",", ":"), ensure_ascii=False).encode()
        out.append(line)
        prev = hashlib.sha256(line).hexdigest()
    path.write_bytes(b"".join(line + b"\n" for line in out))
    return len(out), prev


def _forge_anchor(storage, name, count, head, size):
    from pytest_harness_audit.audit.anchor import encode_slot

    paths = StorageLayout.at(storage).paths(name)
    slot = encode_slot(count, size, head, None)
    paths.anchor.write_bytes(slot + slot)
    data = json.loads(paths.session_file.read_text())
    data["anchor"] = {"recordCount": count, "head": head, "bytes": size, "lastR6Id": None}
    paths.session_file.write_text(json.dumps(data))


# -- verify closes the gaps --------------------------------------------------------------------


def test_cut_tail_and_both_session_files_deleted_is_anchor_missing(storage, make_draft):
    _session(storage, make_draft=make_draft)
    paths = StorageLayout.at(storage).paths("s1")
    lines = paths.chain.read_bytes().split(b"\n")[:-1]
    paths.chain.write_bytes(lines[0] + b"\n")
    paths.anchor.unlink()
    paths.session_file.unlink()
    report = verify_chain(storage, "s1")
    assert (report.valid, report.reason, report.anchor_state) == (
        False,
        "anchor_missing",
        "missing",
    )


def test_records_of_another_session_copied_over_are_session_mismatch(storage, make_draft):
    _session(storage, "victim", make_draft=make_draft)
    _session(storage, "other", make_draft=make_draft)
    layout = StorageLayout.at(storage)
    victim, other = layout.paths("victim"), layout.paths("other")
    for name in ("chain", "anchor", "session_file"):
        shutil.copyfile(getattr(other, name), getattr(victim, name))
    report = verify_chain(storage, "victim")
    assert (report.valid, report.reason, report.first_bad_index) == (False, "session_mismatch", 0)
    assert verify_chain(storage, "victim", full=True).reason == "session_mismatch"


def test_a_session_file_naming_another_session_is_session_mismatch(storage, make_draft):
    _session(storage, make_draft=make_draft)
    path = StorageLayout.at(storage).paths("s1").session_file
    data = json.loads(path.read_text())
    data["sessionId"] = "other"
    path.write_text(json.dumps(data))
    assert verify_chain(storage, "s1").reason == "session_mismatch"


@pytest.mark.parametrize("content", ["", "{not json", "[]"])
def test_an_emptied_or_garbled_session_file_is_a_failed_verification(storage, make_draft, content):
    # an agent that empties the store's files: the verdict is FAIL, never an error raised
    _session(storage, make_draft=make_draft)
    path = StorageLayout.at(storage).paths("s1").session_file
    path.write_text(content)
    report = verify_chain(storage, "s1")
    assert (report.valid, report.reason) == (False, "snapshot_mismatch")
    assert str(path) in report.errors[0]


@pytest.mark.parametrize("which", ["chain", "anchor", "session_file"])
def test_symlinked_session_files_are_refused(storage, make_draft, which):
    _session(storage, "victim", make_draft=make_draft)
    _session(storage, "other", make_draft=make_draft)
    layout = StorageLayout.at(storage)
    target = getattr(layout.paths("victim"), which)
    target.unlink()
    target.symlink_to(getattr(layout.paths("other"), which))
    report = verify_chain(storage, "victim")
    assert (report.valid, report.reason) == (False, "symlink")
    assert str(target) in report.errors[0]


def test_the_writer_never_writes_through_a_symlink(storage, tmp_path, make_draft):
    _session(storage, make_draft=make_draft)
    paths = StorageLayout.at(storage).paths("s1")
    decoy = tmp_path / "decoy.jsonl"
    decoy.write_bytes(b"")
    paths.chain.unlink()
    paths.chain.symlink_to(decoy)
    with pytest.raises(AuditError, match="cannot open audit storage"):
        AuditChain(storage, "s1")
    assert decoy.read_bytes() == b""


def test_an_edited_head_copy_in_the_session_file_is_snapshot_mismatch(storage, make_draft):
    _session(storage, make_draft=make_draft)
    path = StorageLayout.at(storage).paths("s1").session_file
    data = json.loads(path.read_text())
    data["anchor"]["head"] = "0" * 64
    path.write_text(json.dumps(data))
    report = verify_chain(storage, "s1")
    assert (report.valid, report.reason) == (False, "snapshot_mismatch")


def test_a_storage_directory_created_by_the_writer_carries_a_gitignore(storage, make_draft):
    _session(storage, make_draft=make_draft)
    assert (storage / ".gitignore").read_text().splitlines()[-1] == "*"


def test_an_existing_storage_directory_gets_no_gitignore(tmp_path, make_draft):
    _session(tmp_path, make_draft=make_draft)
    assert not (tmp_path / ".gitignore").exists()


# -- the witness ---------------------------------------------------------------------------------


def test_the_witness_is_the_head_the_writer_wrote(storage, make_draft):
    with AuditChain(storage, "s1") as chain:
        assert chain.witness == Head(0, "genesis")
        chain.append(make_draft(0))
        chain.append(make_draft(1))
        assert chain.witness == Head(2, chain.head_hash)
    report = verify_chain(storage, "s1", witness=chain.witness)
    assert (report.valid, report.witness_state) == (True, "current")


def test_recompute_everything_passes_plain_verify_and_fails_the_witness(storage, make_draft):
    witness = _session(storage, make_draft=make_draft)
    paths = StorageLayout.at(storage).paths("s1")

    def edit(record):
        record["result"]["status"] = "blocked"

    count, head = _relink_everything(paths.chain, edit)
    _forge_anchor(storage, "s1", count, head, paths.chain.stat().st_size)
    assert verify_chain(storage, "s1").valid  # not detectable without a secret or a witness
    report = verify_chain(storage, "s1", witness=witness)
    assert (report.valid, report.reason, report.witness_state) == (
        False,
        "witness_mismatch",
        "mismatch",
    )
    assert verify_chain(storage, "s1", expected_head=witness.hash[:12]).reason == (
        "witness_mismatch"
    )


def test_a_rollback_with_its_old_anchor_fails_the_witness(storage, make_draft):
    paths = StorageLayout.at(storage).paths("s1")
    with AuditChain(storage, "s1") as chain:
        chain.append(make_draft(0))
    old = {name: getattr(paths, name).read_bytes() for name in ("chain", "anchor", "session_file")}
    witness = _session(storage, make_draft=make_draft)
    for name, data in old.items():
        getattr(paths, name).write_bytes(data)
    assert verify_chain(storage, "s1").valid
    report = verify_chain(storage, "s1", witness=witness)
    assert (report.valid, report.reason) == (False, "witness_mismatch")


def test_an_older_head_is_extended_by_a_grown_chain(storage, make_draft):
    with AuditChain(storage, "s1") as chain:
        chain.append(make_draft(0))
        early = chain.witness
        chain.append(make_draft(1))
    assert verify_chain(storage, "s1", witness=early).witness_state == "extended"
    short = parse_head(early.hash[:16])
    report = verify_chain(storage, "s1", witness=short)
    assert (report.valid, report.witness_state) == (True, "extended")


def test_a_rewrite_behind_a_live_writer_freezes_its_witness(storage, make_draft):
    chain = AuditChain(storage, "s1")
    for index in range(3):
        chain.append(make_draft(index))
    good = chain.witness
    paths = StorageLayout.at(storage).paths("s1")

    def edit(record):
        record["target"] = "forged"

    count, head = _relink_everything(paths.chain, edit, grow=True)  # grown: the writer resyncs
    _forge_anchor(storage, "s1", count, head, paths.chain.stat().st_size)
    chain.append(make_draft(9))
    assert chain.witness == good
    chain.close()
    assert verify_chain(storage, "s1", witness=chain.witness).reason == "witness_mismatch"


@pytest.mark.parametrize("text", ["abc", "xyz0123456789", "5:" + "g" * 64, "x:" + "a" * 64])
def test_malformed_heads_are_usage_errors(text):
    with pytest.raises(AuditError, match="head"):
        parse_head(text)


def test_heads_parse_with_and_without_count():
    assert parse_head("3:" + "A" * 64) == Head(3, "a" * 64)
    assert parse_head("a" * 12) == Head(None, "a" * 12)
    assert parse_head("genesis") == Head(0, "genesis")


# -- repair vouches ------------------------------------------------------------------------------


def _append_linked_record(storage, name="s1"):
    """Append one well-formed record linked to the head, leaving the anchor alone."""
    import hashlib

    paths = StorageLayout.at(storage).paths(name)
    lines = paths.chain.read_bytes().split(b"\n")[:-1]
    record = json.loads(lines[-1])
    record["recordId"] = "audit:f0f0f0f0"
    record["result"]["status"] = "success"
    record["provenance"]["actionIndex"] = len(lines)
    record["provenance"]["prevRecordHash"] = hashlib.sha256(lines[-1]).hexdigest()
    with paths.chain.open("ab") as handle:
        handle.write(json.dumps(record, separators=(",", ":")).encode() + b"\n")


def test_repair_refuses_a_linked_record_nothing_vouches_for(storage, make_draft):
    _session(storage, make_draft=make_draft)
    _append_linked_record(storage)
    report = verify_chain(storage, "s1")
    assert (report.reason, report.anchor_state) == ("extra_records", "behind")
    with pytest.raises(ChainError, match="nothing vouches"):
        repair_chain(storage, "s1")
    with pytest.raises(ChainError, match="no writer of this session died"):
        AuditChain(storage, "s1")


def test_repair_adopts_a_record_of_a_writer_that_died(storage, make_draft, list_dead_writer):
    _session(storage, make_draft=make_draft)
    _append_linked_record(storage)
    path = StorageLayout.at(storage).paths("s1").session_file
    dead = list_dead_writer(path)
    result = repair_chain(storage, "s1")
    assert result.adopted_records == 1 and result.report.valid
    entry = json.loads(path.read_text())["repairs"][-1]
    assert entry["vouchedBy"].startswith(f"writer pid {dead} died")


def test_writers_list_themselves_while_open(storage, make_draft):
    chain = AuditChain(storage, "s1")
    path = chain.session_file
    writers = json.loads(path.read_text())["writers"]
    assert [entry["pid"] for entry in writers] == [os.getpid()]
    chain.close()
    assert json.loads(path.read_text())["writers"] == []


# -- default storage -------------------------------------------------------------------------------


def test_default_storage_is_a_per_user_state_directory_outside_the_project(tmp_path):
    project = tmp_path / "My Project"
    env = {"HOME": str(tmp_path / "home")}
    path = default_storage(project, env)
    assert path.parent == tmp_path / "home" / ".local" / "state" / "harness-audit"
    assert path.name == project_id(project)
    assert path.name.startswith("My_Project-") and len(path.name) == len("My_Project-") + 8
    assert project not in path.parents
    state = default_storage(project, {"XDG_STATE_HOME": str(tmp_path / "state")})
    assert state == tmp_path / "state" / "harness-audit" / project_id(project)
    chosen = default_storage(project, {"HARNESS_AUDIT_DIR": "/x", "XDG_STATE_HOME": "/y"})
    assert str(chosen) == "/x"
    assert project_id(tmp_path / "a") != project_id(tmp_path / "b" / "a")


def test_anchored_writer_lines_take_the_fast_path_with_their_session(
    storage, make_draft, monkeypatch
):
    from pytest_harness_audit.audit import scan

    _session(storage, count=6, make_draft=make_draft)
    parsed = []
    real = scan.check_line
    monkeypatch.setattr(scan, "check_line", lambda *args: parsed.append(args) or real(*args))
    assert verify_chain(storage, "s1").valid
    assert parsed == []  # every line accepted by its tail: session, index and link
    loaded = []
    real_reader = scan.provenance_reader

    def recording_reader():
        read = real_reader()
        return lambda line: loaded.append(line) or read(line)

    monkeypatch.setattr(scan, "provenance_reader", recording_reader)
    real_validator = scan.json_validator

    def recording_validator():
        is_json = real_validator()
        if is_json is None:
            return None
        return lambda line: loaded.append(line) is None and is_json(line)

    monkeypatch.setattr(scan, "json_validator", recording_validator)
    real_all_json = scan.all_json

    def recording_all_json(batch: list[bytes]) -> bool:
        valid = real_all_json(batch)
        if valid:  # otherwise every line is looked at again on its own
            loaded.extend(batch)
        return valid

    monkeypatch.setattr(scan, "all_json", recording_all_json)
    assert verify_chain(storage, "s1", full=True).valid
    # every line parsed: in full (``check_line``) or on the parsed run's own parse (one line, or
    # a run of lines that end in the writer's tail)
    lines = (storage / "audit" / "s1.jsonl").read_bytes().split(b"\n")[:-1]
    assert sorted([args[0] for args in parsed] + loaded) == sorted(lines)


def test_refused_repair_of_an_unanchored_chain_leaves_no_lock_file(storage, make_draft):
    _session(storage, make_draft=make_draft)
    paths = StorageLayout.at(storage).paths("s1")
    lines = paths.chain.read_bytes().split(b"\n")[:-1]
    records = [json.loads(line) for line in lines]
    for path in (paths.anchor, paths.session_file, paths.lock):
        path.unlink()
    paths.chain.write_bytes(json.dumps(records[0]).encode().replace(b'"kind": ', b'"k": ') + b"\n")
    assert verify_chain(storage, "s1").valid  # one record, no writer mark: a reference chain
    with pytest.raises(ChainError, match="no anchor"):
        repair_chain(storage, "s1")
    assert not paths.lock.exists()
    assert verify_chain(storage, "s1").valid


def test_default_storage_follows_the_host_project_not_the_hook_cwd(tmp_path, monkeypatch):
    project = tmp_path / "project"
    (project / "src").mkdir(parents=True)
    env = {"HOME": str(tmp_path / "home"), "CLAUDE_PROJECT_DIR": str(project)}
    monkeypatch.chdir(project)
    at_root = default_storage(environ=env)
    monkeypatch.chdir(project / "src")  # the host ran `cd src`: its hooks now start there
    assert default_storage(environ=env) == at_root
    assert at_root.name == project_id(str(project))
    # a relative value is no project root: the current directory decides
    relative = {**env, "CLAUDE_PROJECT_DIR": "project"}
    assert default_storage(environ=relative).name == project_id(str(project / "src"))
