"""What readers need of a session: a small Protocol, so they never import the session layer.

:class:`~pytest_harness_audit.session.harness.Harness` satisfies :class:`AuditedSession`; so
does any object with these members (a test double, a session read back from disk).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from pytest_harness_audit.audit.record_view import CallRecord
    from pytest_harness_audit.audit.verify import ChainReport
    from pytest_harness_audit.policy.policy import Policy
    from pytest_harness_audit.readers.verdict import Verdict, VerdictReason


class AuditedSession(Protocol):
    """One audited session as assertions, reports and snapshots read it."""

    @property
    def session_id(self) -> str:
        """The session's id."""

    @property
    def root(self) -> Path:
        """The workspace directory."""

    @property
    def storage_dir(self) -> Path:
        """Where the session's chain is stored."""

    @property
    def template(self) -> str | None:
        """The workspace template the session started from."""

    @property
    def policy(self) -> Policy:
        """The session's policy."""

    @property
    def records(self) -> list[CallRecord]:
        """Every record of the chain, in order."""

    @property
    def escalations(self) -> list[CallRecord]:
        """Immune escalation records, in order."""

    def verify(self) -> ChainReport:
        """The chain verified against its anchor."""

    def judge(self) -> tuple[Verdict, tuple[VerdictReason, ...]]:
        """The session's verdict and its reasons."""

    def denied(self, tool: str | None = None, target: str | None = None) -> list[CallRecord]:
        """Calls the policy denied or a quarantine blocked."""

    def assert_denied(
        self, tool: str | None = None, target: str | None = None, *, count: int | None = None
    ) -> list[CallRecord]:
        """Assert that matching calls were denied."""

    def recorded_summary(
        self,
        *,
        closest_to: CallRecord | None = None,
        query: Mapping[str, str | None] | None = None,
    ) -> str:
        """The recorded calls, one per line."""


class StepOutcome(Protocol):
    """The outcome of one played call, as a scenario check reads it."""

    @property
    def decision(self) -> str:
        """``allow``, ``warn`` or ``deny``."""

    @property
    def status(self) -> str:
        """``success``, ``error`` or ``blocked``."""

    @property
    def error_message(self) -> str | None:
        """The error or block message."""


class StepExpectationLike(Protocol):
    """What one scripted call must come to (``None``: not checked)."""

    @property
    def decision(self) -> str | None:
        """The expected decision."""

    @property
    def status(self) -> str | None:
        """The expected status."""


class ScriptedStep(Protocol):
    """One step of a scenario, as a check reads it."""

    @property
    def number(self) -> int:
        """Counts from 1."""

    @property
    def tool(self) -> str:
        """The tool called."""

    @property
    def expect(self) -> StepExpectationLike:
        """What the call must come to."""


class DeniedLike(Protocol):
    """A denied call that must have happened."""

    @property
    def tool(self) -> str | None:
        """Tool name, or any."""

    @property
    def target(self) -> str | None:
        """Target glob, or any."""

    @property
    def count(self) -> int | None:
        """Exactly this many, or at least one."""


class EscalationLike(Protocol):
    """The ladder's expected highest level, and optionally its trigger."""

    @property
    def level(self) -> str:
        """``none``, ``notice`` or ``quarantine``."""

    @property
    def trigger(self) -> str | None:
        """The trigger, or any."""


class SessionExpectationLike(Protocol):
    """What a whole scenario session must come to."""

    @property
    def verdict(self) -> str | None:
        """The exact verdict, or unchecked."""

    @property
    def denied(self) -> Sequence[DeniedLike] | None:
        """Denied calls that must have happened (empty: none may be denied)."""

    @property
    def escalation(self) -> EscalationLike | None:
        """The expected escalation."""


class ScriptedScenario(Protocol):
    """A loaded scenario, as a check reads it."""

    @property
    def name(self) -> str:
        """The scenario's name."""

    @property
    def steps(self) -> Sequence[ScriptedStep]:
        """Its steps, in order."""

    @property
    def expect(self) -> SessionExpectationLike:
        """Its session-level expectations."""
