"""The audit chain: R6 records in a hash-linked, anchored JSONL file per session.

    chain = AuditChain(storage_dir, "session-1")
    chain.append(RecordDraft(tool="Bash", category="command", target="ls", params={...}))
    report = verify_chain(storage_dir, "session-1")   # ChainReport(valid=True, …)

Storage layout, record format, anchor and verification rules are described in the modules
``storage``, ``records``, ``anchor`` and ``verify``.
"""

from __future__ import annotations

from pytest_harness_audit.audit.anchor import GENESIS, Anchor, read_anchor
from pytest_harness_audit.audit.canonical import hash_json, input_hash, output_hash
from pytest_harness_audit.audit.chain import AuditChain
from pytest_harness_audit.audit.clock import parse_since, utc_timestamp
from pytest_harness_audit.audit.errors import AuditError, ChainError, SessionNotFoundError
from pytest_harness_audit.audit.lct import SoftLCT, make_soft_lct
from pytest_harness_audit.audit.query import RecordFilter, filter_records
from pytest_harness_audit.audit.reader import iter_file_records, iter_records
from pytest_harness_audit.audit.records import (
    AUDIT_LEVELS,
    DISPLAY_LIMIT,
    KINDS,
    STATUSES,
    RecordDraft,
    display_target,
)
from pytest_harness_audit.audit.repair import RepairResult, repair_chain
from pytest_harness_audit.audit.statistics import (
    AuditStatistics,
    ChainSummary,
    build_statistics,
    format_statistics,
    summarize_chain,
)
from pytest_harness_audit.audit.storage import StorageLayout, list_sessions, sanitize_session_id
from pytest_harness_audit.audit.tags import DecisionTags, parse_tags, record_tags
from pytest_harness_audit.audit.verify import REASONS, ChainReport, verify_chain, verify_file
from pytest_harness_audit.audit.witness import Head, parse_head

__all__ = [
    "AUDIT_LEVELS",
    "DISPLAY_LIMIT",
    "GENESIS",
    "KINDS",
    "REASONS",
    "STATUSES",
    "Anchor",
    "AuditChain",
    "AuditError",
    "AuditStatistics",
    "ChainError",
    "ChainReport",
    "ChainSummary",
    "DecisionTags",
    "Head",
    "RecordDraft",
    "RecordFilter",
    "RepairResult",
    "SessionNotFoundError",
    "SoftLCT",
    "StorageLayout",
    "build_statistics",
    "display_target",
    "filter_records",
    "format_statistics",
    "hash_json",
    "input_hash",
    "iter_file_records",
    "iter_records",
    "list_sessions",
    "make_soft_lct",
    "output_hash",
    "parse_head",
    "parse_since",
    "parse_tags",
    "read_anchor",
    "record_tags",
    "repair_chain",
    "sanitize_session_id",
    "summarize_chain",
    "utc_timestamp",
    "verify_chain",
    "verify_file",
]
