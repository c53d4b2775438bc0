"""The host's transcript of a hook session is evidence too: out of the agent's reach to change.

The hook door reads the host's transcript (``transcript_path``, Claude Code's JSON lines) to
tell what the session's calls were: the calls made since a lost chain's witness was first
written (:mod:`.hook_continuity`), the refused calls a chain put back as an older copy no longer
holds and the calls that ran with no post recorded (:mod:`.hook_faults`). The host only ever
appends to it. So at the hook door a call that writes, truncates or deletes the transcript, or
deletes, moves or replaces a folder holding it, is refused like a call that changes the
auditor's installation (``tamper_attempt``, verdict FAIL), whatever the policy says; reading it
stays allowed. A change by names built at run time is not refused (the store rule's limit).
"""

from __future__ import annotations

import os

from pytest_harness_audit.gate.install_guard import InstallGuard
from pytest_harness_audit.gate.store_guard import StoreGuard, split_target
from pytest_harness_audit.policy import Evaluation

#: What the refusal of a call changing the transcript says is out of the agent's reach.
TRANSCRIPT = "the host's transcript of the session (evidence the audit reads)"
#: Target kinds that change what they name (``<kind>:<path>``), as the shell reading gives them.
_CHANGING = frozenset({"destroy", "delete", "write"})
#: Categories whose plain path targets are changed by the call.
_WRITING_CATEGORIES = frozenset({"file_write"})


class EvidenceGuard(InstallGuard):
    """The hook door's guard of the installation and policy file, and of the host's
    transcript of the session (``transcript``; ``None``: the payload names none)."""

    def __init__(self, root: str | None, policy_source: str | None, transcript: str | None) -> None:
        super().__init__(root, policy_source=policy_source)
        self.transcript: StoreGuard | None = None
        if transcript is not None and os.path.isabs(transcript) and not os.path.isdir(transcript):
            # as the store's guard reads paths: links resolved, globs and run-time prefixes
            # matched part by part, a folder holding it deleted or replaced
            self.transcript = StoreGuard(transcript, root)
        self._transcript_targets: set[str] = set()

    def offending(self, evaluation: Evaluation) -> str | None:
        """The first target of a call that changes the installation or the transcript."""
        found = super().offending(evaluation)
        if found is not None or self.transcript is None:
            return found
        writing = evaluation.category in _WRITING_CATEGORIES
        for target in evaluation.targets:
            kind = split_target(target)[0]
            if kind not in _CHANGING and (kind or not writing):
                continue  # a read, or a command's own text
            if self.transcript.offending([target], {}) is not None:
                self._transcript_targets.add(target)
                return target
        return None

    def what(self, touched: str) -> str:
        """The transcript, for a target :meth:`offending` found changing it."""
        return TRANSCRIPT if touched in self._transcript_targets else super().what(touched)


__all__ = ["TRANSCRIPT", "EvidenceGuard"]
