"""The project's secrets as the hook door learns them: within bounds, and said when partial.

Each hook event is a process of its own, which learns the project's secrets anew and builds the
scanner over them (:mod:`~pytest_harness_audit.inspect.learn_limits`: some 20 ms and 3 MB a
value). In a folder with more credential files than the bounds allow (a home folder, a monorepo
full of fixtures) it learns the nearest ones only; a value it did not learn cannot be found in a
payload or an output. So a call of such a project is not judged as if nothing could have leaked:
its record gets ``effects.secretsUnknown`` (why), the alert :data:`SECRETS_INCOMPLETE` and, when
the policy judges a secret exposure for that call, a ``WARN``.
"""

from __future__ import annotations

from pytest_harness_audit.audit.clock import parse_timestamp
from pytest_harness_audit.audit.session_file import readable_session_file
from pytest_harness_audit.audit.storage import StorageLayout
from pytest_harness_audit.gate.seam import CallFindings
from pytest_harness_audit.inspect import SECRET_EXPOSURE
from pytest_harness_audit.inspect.learn_limits import Learned, learn_bounded
from pytest_harness_audit.inspect.secrets import SecretRegistry
from pytest_harness_audit.policy import Policy

#: The alert of a call judged with some of the project's secrets unknown (not learned).
SECRETS_INCOMPLETE = "secrets_incomplete"
#: The effects key saying why.
SECRETS_UNKNOWN_KEY = "secretsUnknown"


def learn_project(
    registry: SecretRegistry,
    root: str,
    skip: str | None,
    session: tuple[str, str] | None = None,
) -> Learned:
    """Add the project's secrets to ``registry`` within the bounds (the audit store at
    ``skip`` left out); ``session`` (store, session id): the credential files changed since
    the session started (by its agent, maybe) are read last."""
    since = None if session is None else session_start_ns(*session)
    return learn_bounded(registry, root, skip=skip, since_ns=since)


def session_start_ns(storage: str, session_id: str) -> int | None:
    """When the session started (its Soft LCT's ``createdAt``), in ns; ``None``: not known."""
    path = StorageLayout.at(storage).paths(session_id).session_file
    data = readable_session_file(path)
    lct = data.get("lct") if data is not None else None
    created = lct.get("createdAt") if isinstance(lct, dict) else None
    moment = parse_timestamp(created) if isinstance(created, str) else None
    return None if moment is None else int(moment.timestamp() * 1_000_000) * 1000


def unlearned(
    learned: Learned | None, policy: Policy, tool: str, category: str
) -> CallFindings | None:
    """The note of a call judged while some secrets were not learned (``None``: all were)."""
    if learned is None or learned.unseen is None:
        return None
    reason = f"not every secret of the project is known: {learned.unseen}"
    note = {SECRETS_UNKNOWN_KEY: reason}
    judgement = policy.effect_rules.judge((SECRET_EXPOSURE,), tool=tool, category=category)
    if judgement is None or judgement.verdict is None:
        return CallFindings((SECRETS_INCOMPLETE,), note)
    return CallFindings((SECRETS_INCOMPLETE,), note, "WARN", reason, "effect")


__all__ = [
    "SECRETS_INCOMPLETE",
    "SECRETS_UNKNOWN_KEY",
    "learn_project",
    "session_start_ns",
    "unlearned",
]
