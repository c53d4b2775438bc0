"""A writer process for the crash and concurrency suites.

    python chain_writer.py STORAGE SESSION COUNT TAG

Opens the session's chain, prints ``ready``, then appends ``COUNT`` records (``-1``: until
killed), each a Bash call ``echo TAG I``; after each ``append`` returns it prints the record's
``recordId`` and ``actionIndex`` — the acknowledgement the crash suite holds the chain to.
"""

from __future__ import annotations

import sys

from pytest_harness_audit.audit import AuditChain, RecordDraft


def main(argv: list[str]) -> int:
    """Append as told; see the module docstring."""
    storage, session, count, tag = argv[0], argv[1], int(argv[2]), argv[3]
    chain = AuditChain(storage, session)
    out = sys.stdout
    out.write("ready\n")
    out.flush()
    index = 0
    while count < 0 or index < count:
        command = f"echo {tag} {index}"
        record = chain.append(
            RecordDraft(
                tool="Bash",
                category="command",
                target=command,
                params={"command": command},
                constraints=("policy:allow", "rule:default"),
                output=f"{tag} {index}\n",
            )
        )
        out.write(f"{record['recordId']} {record['provenance']['actionIndex']}\n")
        out.flush()
        index += 1
    chain.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
