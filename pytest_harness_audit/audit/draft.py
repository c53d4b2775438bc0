"""``RecordDraft``: what a caller hands to ``AuditChain.append`` for one record.

A plain (interpreted) class even in the compiled build: callers may hand in any values, and
``validate_draft`` names the first invalid one, where a compiled class would refuse them with a
bare ``TypeError`` as the draft is made.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class RecordDraft:
    """Everything about one call (or event) that goes into its R6 record.

    ``target`` is the full primary target (the record keeps its display form), ``targets`` all
    targets, ``params`` the call parameters (hashed into ``inputHash``; kept whole at audit level
    ``verbose``), ``constraints`` the policy decision tags (``policy:deny``, ``rule:<id>``,
    ``enforced:false`` …), ``output`` the call's output (hashed into ``outputHash``; ``None`` means
    no output), and ``extra`` additional top-level keys (``alerts``, ``decision``, ``immune`` …).
    """

    tool: str
    category: str
    target: str | None = None
    targets: tuple[str, ...] = ()
    params: Mapping[str, Any] = field(default_factory=dict)
    constraints: tuple[str, ...] = ()
    status: str = "success"
    output: Any = None
    error_message: str | None = None
    duration_ms: float | None = None
    agent_id: str | None = None
    approval_required: bool = False
    kind: str = "call"
    extra: Mapping[str, Any] | None = None
