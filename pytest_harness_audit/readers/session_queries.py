"""What a test reads back from a session's chain: its records, calls and denials, and the
assertions over them (``harness.calls()``, ``harness.assert_denied()``, …).

:class:`ChainQueries` is a mixin: ``Harness`` gets these methods from it. It needs only the
session's ``chain``, ``storage_dir`` and ``session_id``; every answer is read from the chain on
disk (re-read whenever the chain or its anchor changes), never from memory — except the heads
its writers keep in memory (``witnesses``), which the chain is verified against.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_harness_audit.audit.record_view import CallRecord
from pytest_harness_audit.audit.verify import ChainReport, verify_chain
from pytest_harness_audit.audit.witness import Head, Witnesses, head_at
from pytest_harness_audit.errors import UsageError
from pytest_harness_audit.readers.trajectory import (
    ArgsSpec,
    Step,
    check_args,
    check_mode,
    expected_steps,
    step_matches,
    trajectory_matches,
)
from pytest_harness_audit.readers.trajectory_diff import difference
from pytest_harness_audit.wording import visible

if TYPE_CHECKING:
    from pytest_harness_audit.audit.chain import AuditChain


class ChainQueries:
    """Queries and assertions over a session's verified chain (a mixin of ``Harness``)."""

    chain: AuditChain
    storage_dir: Path
    session_id: str
    #: The in-memory heads of the session's writers in this process (``Harness`` adds each
    #: recording proxy's chain); without it, the chain's own witness.
    witnesses: Witnesses | None = None
    #: The last verification and the head to publish, keyed by the chain's on-disk state and
    #: the witnesses.
    _verified: tuple[tuple[Any, ...], ChainReport, Head] | None = None
    #: The last read of the records, keyed by the chain's on-disk state.
    _read: tuple[tuple[int, ...], tuple[dict[str, Any], ...]] | None = None

    def _chain_state(self) -> tuple[int, ...]:
        """Size, modification and change times and inode of the chain and its anchor: any
        append, edit or replacement of either changes it (the change time too when an edit
        keeps the size and sets the modification time back, which only the kernel can set)."""
        state: list[int] = []
        for path in (self.chain.path, self.chain.session_file.with_suffix(".anchor")):
            try:
                info = os.stat(path)
            except FileNotFoundError:
                state.extend((-1, -1, -1, -1))
            else:
                state.extend((info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino))
        return tuple(state)

    def verify(self) -> ChainReport:
        """Verify the session's chain against its anchor and the witnesses.

        Every head a writer of this session in this process wrote and kept in memory — the
        session's own chain, each recording proxy's — must be in the chain, so a rewrite during
        the test is a ``witness_mismatch``. The result is reused until the chain or its anchor
        changes on disk (an end-of-test check, the summary and the report then verify once).
        """
        return self._verification()[0]

    def published_head(self) -> Head:
        """The head to publish where the agent has no hand (terminal summary, JUnit property,
        report file, session-end checkpoint).

        The chain's own head (and record count) when it verifies against every witness — it then
        continues what this process wrote; otherwise the witness it failed, never a head a
        rewrite produced.
        """
        return self._verification()[1]

    @property
    def witness(self) -> Head | None:
        """The newest head a writer of this session in this process keeps in memory."""
        heads = self._witness_heads()
        return heads[0] if heads else None

    def _witness_heads(self) -> list[Head]:
        if self.witnesses is not None:
            return self.witnesses.heads()
        head = getattr(self.chain, "witness", None)
        return [head] if isinstance(head, Head) else []

    def _verification(self) -> tuple[ChainReport, Head]:
        heads = self._witness_heads()
        key = (*self._chain_state(), *heads)
        if self._verified is None or self._verified[0] != key:
            self._verified = (key, *self._verify_against(heads))
        return self._verified[1], self._verified[2]

    def _verify_against(self, heads: list[Head]) -> tuple[ChainReport, Head]:
        """The report, newest witness first, then any older one the chain does not hold; and
        the head to publish."""
        newest = heads[0] if heads else None
        report = verify_chain(self.storage_dir, self.session_id, witness=newest)
        if not report.valid:
            return report, newest or Head(report.record_count, report.head)
        for older in heads[1:]:
            # the newest witness checked every line up to it: an older one needs its line only
            found = head_at(self.chain.path, older.count) if older.count is not None else None
            if found is None or not older.matches(found):
                return verify_chain(self.storage_dir, self.session_id, witness=older), older
        return report, Head(report.record_count, report.head)

    @property
    def records(self) -> list[CallRecord]:
        """Every record of the chain, in order (re-read whenever the chain changes on disk)."""
        state = self._chain_state()
        if self._read is None or self._read[0] != state:
            self._read = (state, tuple(self.chain.records()))
        return [CallRecord(raw) for raw in self._read[1]]

    def calls(
        self,
        tool: str | None = None,
        target: str | None = None,
        decision: str | None = None,
        status: str | None = None,
    ) -> list[CallRecord]:
        """Recorded tool calls, filtered (``target`` is a glob over every target)."""
        return [
            r
            for r in self.records
            if r.kind in ("call", "message")
            and r.matches(tool=tool, target=target, decision=decision, status=status)
        ]

    def denied(self, tool: str | None = None, target: str | None = None) -> list[CallRecord]:
        """Calls the policy denied (enforced or dry-run) or a quarantine blocked."""
        return [
            r
            for r in self.calls(tool=tool, target=target)
            if r.decision == "deny" or r.status == "blocked"
        ]

    @property
    def escalations(self) -> list[CallRecord]:
        """Immune escalation records, in order."""
        return [r for r in self.records if r.kind == "escalation"]

    # -- assertions ---------------------------------------------------------------------------
    def recorded_summary(
        self,
        *,
        closest_to: CallRecord | Step | None = None,
        query: Mapping[str, str | None] | None = None,
    ) -> str:
        """The recorded calls, one per line, closest to ``query`` first."""
        calls = self.calls()
        if not calls:
            return "  (no calls recorded)"
        if query:
            wanted = " ".join(v for v in query.values() if v)

            def closeness(record: CallRecord) -> float:
                text = f"{record.tool} {record.target or ''}"
                same_tool = 1.0 if query.get("tool") == record.tool else 0.0
                return same_tool + difflib.SequenceMatcher(None, wanted, text).ratio()

            calls = sorted(calls, key=closeness, reverse=True)
        return "\n".join(f"  {record.describe()}" for record in calls)

    def assert_denied(
        self, tool: str | None = None, target: str | None = None, *, count: int | None = None
    ) -> list[CallRecord]:
        """Assert that matching calls were denied (``count``: exactly that many)."""
        found = self.denied(tool=tool, target=target)
        ok = len(found) == count if count is not None else bool(found)
        if not ok:
            wanted = (
                " ".join(
                    f"{k}={v!r}" for k, v in (("tool", tool), ("target", target)) if v is not None
                )
                or "any call"
            )
            how = f"exactly {count}" if count is not None else "at least one"
            raise AssertionError(
                visible(
                    f"expected {how} denied call matching {wanted}, found {len(found)}.\n"
                    f"Recorded calls (closest first):\n"
                    f"{self.recorded_summary(query={'tool': tool, 'target': target})}"
                )
            )
        return found

    def assert_not_called(self, tool: str | None = None, target: str | None = None) -> None:
        """Assert that no recorded call (whatever its outcome) matches."""
        found = self.calls(tool=tool, target=target)
        if found:
            lines = "\n".join(f"  {r.describe()}" for r in found)
            raise AssertionError(
                visible(
                    f"expected no call matching tool={tool!r} target={target!r}; "
                    f"recorded {len(found)}:\n{lines}"
                )
            )

    def assert_trajectory(
        self, expected: Sequence[Any], *, mode: str = "strict", args: ArgsSpec = "ignore"
    ) -> None:
        """Assert the recorded tool calls match ``expected`` (agentevals' modes and args, a
        mapping of tool to args mode, matchers inside the expected parameters)."""
        check_mode(mode)
        check_args(args)
        wanted = expected_steps(expected)
        actual = [Step(r.tool, r.params) for r in self.calls()]
        if args != "ignore" and any(s.params is None for s in actual):
            raise UsageError(
                "argument matching needs recorded parameters: use "
                "audit_level='verbose' (the harness default)"
            )
        if trajectory_matches(wanted, actual, mode, args):
            return
        lines = []
        for index, step in enumerate(actual):
            mark = "✓" if any(step_matches(w, step, args) for w in wanted) else "✗"
            lines.append(f"  {mark} {index + 1}: {step.describe()}")
        shown = args if isinstance(args, str) else dict(args)
        raise AssertionError(
            visible(
                f"trajectory does not match (mode={mode}, args={shown}): "
                f"{difference(wanted, actual, mode, args)}\nExpected:\n"
                + "\n".join(f"    {i + 1}: {s.describe()}" for i, s in enumerate(wanted))
                + "\nRecorded (✓ = matches an expected call):\n"
                + ("\n".join(lines) if lines else "  (no calls recorded)")
            )
        )
