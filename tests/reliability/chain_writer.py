"""A writer process for the crash and concurrency suites.

    python chain_writer.py STORAGE SESSION COUNT TAG [--gate] [--wait]

Opens the session's chain, prints ``ready``, then appends ``COUNT`` records (``-1``: until
killed), each a Bash call ``echo TAG I``; after each ``append`` returns it prints the record's
``recordId`` and ``actionIndex`` — the acknowledgement the crash suite holds the chain to.

``--gate`` goes through a real gate with the ``safety`` preset instead (as a test and its proxy
subprocess share a session): even calls read ``README.md``, odd calls ``.env`` (denied, so the
immune ladder climbs too). ``--wait`` waits for a line on stdin after ``ready`` before the
first append, so several writers can be started together.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from pytest_harness_audit.audit import AuditChain, RecordDraft


def _chain_appender(storage: str, session: str, tag: str) -> tuple[Any, Any]:
    chain = AuditChain(storage, session)

    def append(index: int) -> dict[str, Any]:
        command = f"echo {tag} {index}"
        return chain.append(
            RecordDraft(
                tool="Bash",
                category="command",
                target=command,
                params={"command": command},
                constraints=("policy:allow", "rule:default"),
                output=f"{tag} {index}\n",
            )
        )

    return append, chain.close


def _gate_appender(storage: str, session: str, tag: str) -> tuple[Any, Any]:
    from pathlib import Path

    from pytest_harness_audit.gate import Gate
    from pytest_harness_audit.policy import Policy

    gate = Gate.open(
        storage_dir=Path(storage),
        session_id=session,
        policy=Policy.from_dict({"preset": "safety", "auditLevel": "verbose"}),
        root="/ws",
    )

    def append(index: int) -> dict[str, Any]:
        path = "README.md" if index % 2 == 0 else ".env"
        decision = gate.decide("Read", {"file_path": path, "tag": f"{tag} {index}"})
        status = "blocked" if decision.blocked else "success"
        return gate.record(decision, status=status, output=None if decision.blocked else "ok")

    return append, gate.chain.close


def main(argv: list[str]) -> int:
    """Append as told; see the module docstring."""
    parser = argparse.ArgumentParser()
    parser.add_argument("storage")
    parser.add_argument("session")
    parser.add_argument("count", type=int)
    parser.add_argument("tag")
    parser.add_argument("--gate", action="store_true")
    parser.add_argument("--wait", action="store_true")
    args = parser.parse_args(argv)
    make = _gate_appender if args.gate else _chain_appender
    append, close = make(args.storage, args.session, args.tag)
    out = sys.stdout
    out.write("ready\n")
    out.flush()
    if args.wait:
        sys.stdin.readline()
    index = 0
    while args.count < 0 or index < args.count:
        record = append(index)
        out.write(f"{record['recordId']} {record['provenance']['actionIndex']}\n")
        out.flush()
        index += 1
    close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
