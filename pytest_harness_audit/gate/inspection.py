"""The inspect step of the door seam: what a call did, judged by the policy's effect rules.

:class:`SessionInspection` adapts the inspection library (:mod:`pytest_harness_audit.inspect`)
to the seam. After a call ran it reports the call's effects and the secrets in its output, and
asks the policy's effect rules (``match.effects``) what they mean. Before an outgoing call runs
(a web fetch, a message, an upstream MCP call, a shell command) it scans the payload for known
secrets, so a leak can be refused before it leaves.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from pytest_harness_audit.gate.decision import BLOCK_PREFIX, GateDecision, built_in_refusal
from pytest_harness_audit.gate.seam import CallFindings, Outcome
from pytest_harness_audit.gate.social_context import in_social_door_send
from pytest_harness_audit.gate.store_guard import STORE_RULE_ID, TAMPER_ALERT
from pytest_harness_audit.inspect import (
    CREDENTIAL_OBJECT_READ,
    CREDENTIAL_READ,
    DIRECTORY_DELETED,
    FILES_DELETED,
    HISTORY_DESTROYED,
    MEMORY_WRITE,
    OUTPUT_PARTLY_SCANNED,
    PROTECTED_FILE_CHANGED,
    SECRET_EXPOSURE,
    SESSION_LOST,
    STARTUP_WRITE,
    UNCOMMITTED_DISCARDED,
    Inspector,
)
from pytest_harness_audit.inspect import Findings as Seen
from pytest_harness_audit.inspect.aliases import linked_params
from pytest_harness_audit.inspect.credential_reads import CredentialReadWatch
from pytest_harness_audit.inspect.read_spans import Budget
from pytest_harness_audit.policy import Evaluation, Policy
from pytest_harness_audit.policy.effects import EffectJudgement
from pytest_harness_audit.policy.shell.object_readers import objects_read_in_view
from pytest_harness_audit.policy.shell.search_only import (
    exhaustive_searches,
    only_searches,
    search_opens,
)
from pytest_harness_audit.tools.shell import exit_status

#: More tracked files than this deleted (or emptied) by one call, or by the session's calls
#: together (the call that brings them over it), is ``many_files_deleted``.
MANY_FILES_DELETED = 10
#: Why a payload the secret scan could not read whole is refused.
UNSCANNED_REASON = (
    "The outgoing payload is nested too deeply or too long to be scanned for known secrets"
)
#: The social door's tool (``social.SEND_MESSAGE_TOOL_NAME``): only its sends meet the message
#: firewall; another tool of the ``message`` category (a mapped MCP tool, a function tool) does not.
_SOCIAL_SEND = "send_message"
#: Categories whose parameters can carry data out of the session.
OUTGOING_CATEGORIES = frozenset({"network", "message", "mcp", "command", "delegation", "unknown"})
#: The built-in categories whose parameters stay in the session (a file tool's, the host's
#: bookkeeping): every other category's — a policy's own (``toolCategories``), a function
#: tool's ``category="notes"`` — may leave, as :data:`OUTGOING_CATEGORIES`' do.
LOCAL_CATEGORIES = frozenset({"file_read", "file_write", "state", "credential_access"})
_EFFECT_ALERTS = (
    PROTECTED_FILE_CHANGED,
    SECRET_EXPOSURE,
    FILES_DELETED,
    DIRECTORY_DELETED,
    HISTORY_DESTROYED,
    MEMORY_WRITE,
    STARTUP_WRITE,
    CREDENTIAL_READ,
    CREDENTIAL_OBJECT_READ,
    UNCOMMITTED_DISCARDED,
)

#: Work lost for good, judged as a large deletion too (``many_files_deleted``) by a policy that
#: does not name the loss itself: committed history destroyed, and every uncommitted change
#: thrown away file by file (what `git reset --hard` does).
_LOSSES_JUDGED_AS_DELETION = frozenset({HISTORY_DESTROYED, UNCOMMITTED_DISCARDED})


@dataclass(frozen=True)
class OutgoingLeak:
    """A known secret found in a payload about to leave, with the policy's judgement."""

    alerts: tuple[str, ...]
    judgement: EffectJudgement | None
    secrets: tuple[dict[str, Any], ...]
    #: The payload with every known secret replaced: what the record may hold.
    redacted_params: Mapping[str, Any]
    #: A write through a hard link to a protected file: the policy's refusal of the write of
    #: that file (then there is no secret: the call is refused as that write).
    refusal: Evaluation | None = None


class SessionInspection:
    """One session's inspection at the seam (a :class:`~.seam.CallInspector`)."""

    def __init__(self, inspector: Inspector, policy: Policy) -> None:
        self.inspector = inspector
        self.policy = policy
        firewall = policy.firewall
        self._firewall_guards_secrets = (
            firewall is not None and firewall.get("guardSecrets") is not False
        )

    def before(self, tool: str, category: str, params: Mapping[str, Any]) -> object:
        """A workspace snapshot when the call's category can change files; a command of
        searches gets the opens of each watched file they may make, so that what they open
        while other calls run is theirs (:meth:`.CredentialReadWatch.reset`)."""
        return self.inspector.before(tool, category, params, self._search_opens(params))

    def _search_opens(self, params: Mapping[str, Any]) -> Budget:
        """For a command, how often it opens each of the files given when it is a search that
        runs to its end (:func:`exhaustive_searches`), worked out in the watch's own window
        (what it opens is the auditor's)."""
        command = params.get("command") if isinstance(params, Mapping) else None
        if not isinstance(command, str):
            return None
        root = self.inspector.root

        def budget(files: tuple[str, ...]) -> dict[str, int] | None:
            if not exhaustive_searches(command, root):
                return None
            return {path: search_opens(command, root, path) for path in files}

        return budget

    def changed_since_last(self) -> bool:
        """Whether the workspace changed since the session's last watched call ended."""
        return self.inspector.changed_since_last()

    def hold_reads(self) -> None:
        """The auditor is about to read workspace files itself (see :func:`.seam.own_reading`)."""
        reads = self.inspector.credential_reads
        if reads is not None:
            reads.hold()

    def release_reads(self) -> None:
        """The auditor's own reading is over: none of it is a call's."""
        reads = self.inspector.credential_reads
        if reads is not None:
            reads.release()

    def after(
        self, token: object, tool: str, category: str, params: Mapping[str, Any], outcome: Outcome
    ) -> CallFindings:
        """The call's effects and exposed secrets, and what the policy says they mean."""
        try:
            return self._after(token, tool, category, params, outcome)
        finally:
            self.release_reads()  # judging a search reads the files it searched, after the call

    def _after(
        self, token: object, tool: str, category: str, params: Mapping[str, Any], outcome: Outcome
    ) -> CallFindings:
        seen = self.inspector.after(token, tool, category, params, outcome.output)
        error = outcome.error_message
        status = exit_status(error)
        if not error:
            return self._judged(seen, tool, category, None, params, status)
        in_error = self.inspector.scan_output(error)  # an exception's text reaches the agent too
        if not in_error.secrets:
            return self._judged(seen, tool, category, None, params, status)
        alerts = tuple(dict.fromkeys((*seen.alerts, *in_error.alerts)))
        both = replace(seen, alerts=alerts, secrets=(*seen.secrets, *in_error.secrets))
        return self._judged(both, tool, category, str(in_error.redacted_output), params, status)

    def outgoing(self, tool: str, category: str, params: Mapping[str, Any]) -> OutgoingLeak | None:
        """Known secrets in a payload about to leave (``None`` when there are none).

        Messages are left to the message firewall when its secret guard is on: it refuses
        them with its own check id and feedback, using :meth:`message_secrets`.
        """
        if category == "file_write":
            refusal = self._through_link(tool, params)
            if refusal is not None:
                return OutgoingLeak((), None, (), params, refusal)
        if category in LOCAL_CATEGORIES and not tool.startswith("mcp__"):
            return None  # an upstream MCP tool's arguments leave, whatever its category
        if (
            category == "message"
            and tool == _SOCIAL_SEND
            and self._firewall_guards_secrets
            and in_social_door_send()  # the door, not the name: any other send_message is checked
        ):
            return None  # the social door's own send: its firewall refuses with its check id
        seen = self.inspector.outgoing(tool, params)
        if SECRET_EXPOSURE not in seen.alerts:
            return self._unscanned(tool, category, params, seen)
        judgement = self.policy.effect_rules.judge((SECRET_EXPOSURE,), tool=tool, category=category)
        secrets = tuple(finding.to_record() for finding in seen.secrets)
        redacted = seen.redacted_output if isinstance(seen.redacted_output, Mapping) else params
        return OutgoingLeak((SECRET_EXPOSURE,), judgement, secrets, redacted)

    def _unscanned(
        self, tool: str, category: str, params: Mapping[str, Any], seen: Seen
    ) -> OutgoingLeak | None:
        """A payload the scan could not read whole (nested deeper, or longer, than it reads):
        refused where the policy refuses a known secret leaving, since it may hold one (in
        dry-run, a warning)."""
        if not seen.unscanned:
            return None
        judgement = self.policy.effect_rules.judge((SECRET_EXPOSURE,), tool=tool, category=category)
        if judgement is None or judgement.verdict is None:
            return None
        if judgement.verdict != "FAIL":
            unseen = replace(judgement, reason=UNSCANNED_REASON)
            return OutgoingLeak((OUTPUT_PARTLY_SCANNED,), unseen, (), params)
        refusal = Evaluation(
            "deny",
            True,
            judgement.rule_id,
            judgement.rule_id,
            None,
            UNSCANNED_REASON,
            ("policy:deny", f"rule:{judgement.rule_id}"),
            category,
            None,
            params,
            self.inspector.root,
        )
        return OutgoingLeak((), None, (), params, refusal)

    def _through_link(self, tool: str, params: Mapping[str, Any]) -> Evaluation | None:
        """A write through a hard link to a protected file (``cp -l .git/config notes.cfg``,
        then Write ``notes.cfg``), judged as the write of that file: the policy's refusal of
        it, or ``None`` (no such link, or the policy allows that write too)."""
        root = self.inspector.root
        aliased, links = linked_params(root, params, self.inspector.snapshot)
        if not links:
            return None
        judged = self.policy.evaluate(tool, aliased, root=root)
        if not judged.blocked:
            return None
        named = ", ".join(f"{link} is a hard link to {target}" for link, target in links)
        return Evaluation(
            judged.decision,
            judged.enforced,
            judged.rule_id,
            judged.rule_name,
            judged.priority,
            f"{judged.reason} ({named})",
            judged.constraints,
            judged.category,
            list(judged.targets),
            params,
            root,
        )

    def scrub(self, value: Any) -> Any:
        """``value`` with every known secret replaced (what a record may hold of it)."""
        return self.inspector.scrubbed((value,))[0]

    def scrub_all(self, values: Sequence[Any]) -> list[Any]:
        """:meth:`scrub` of each of ``values`` (the fields of one record): a text found in
        several of them is scanned once."""
        return self.inspector.scrubbed(values)

    def message_secrets(self, text: str) -> list[str]:
        """Fingerprints of the known secrets in a message text, in any form, including a
        value split over this and the previous messages (the firewall's secret guard)."""
        seen = self.inspector.outgoing("send_message", {"text": text})
        return list(dict.fromkeys(finding.fingerprint for finding in seen.secrets))

    def close(self) -> None:
        """Release the workspace watch."""
        self.inspector.close()

    def _searched_in_view(self, params: Any, seen: Seen, status: int | None) -> bool:
        """Whether the call is a command of searches whose lines the agent received (and the
        output scan read): their reads of credential files need no judgement of their own.

        The kernel names no reader: each file must have been opened no more often than the
        searches open it, and not read through a descriptor opened before the call (a process
        an earlier call left running reads it meanwhile). Beside another call made at once,
        only a search that surely opened every file it names (it ran to its end: exit status
        ``status`` 0 or 1) tells its opens from the other call's."""
        command = params.get("command") if isinstance(params, Mapping) else None
        root = self.inspector.root
        if not isinstance(command, str) or not only_searches(command, root):
            return False
        watch = self.inspector.credential_reads
        if watch is None or not _told_apart(watch, command, root, status):
            return False
        read = seen.effects.get("credentialRead")
        files = [f for f in read if isinstance(f, str)] if isinstance(read, list) else []
        opens = watch.opens()
        return not set(files) & watch.unopened() and all(
            opens.get(f, 0) <= search_opens(command, root, f) for f in files
        )

    def _objects_in_view(self, params: Any, seen: Seen, status: int | None) -> bool:
        """Whether the call read credential files' stored copies (git's loose objects) only
        by commands the reading judges itself (:mod:`~pytest_harness_audit.policy.shell.
        object_readers`): ``git log --stat`` reads them to count lines, ``git gc`` to pack them.
        A recursive search beside other programs (``grep -rn TODO . && pytest``) opens each
        object under ``.git`` once: the reads are its own when no object was opened more often
        than the searches open it. Not when one was read through a descriptor opened before
        the call (a process an earlier call left running)."""
        effects = seen.effects
        if "credentialObjectRead" not in effects or "credentialObjectHeld" in effects:
            return False
        command = params.get("command") if isinstance(params, Mapping) else None
        root = self.inspector.root
        if not isinstance(command, str):
            return False
        if objects_read_in_view(command, root):
            return True
        watch = self.inspector.credential_reads
        if watch is None or not _told_apart(watch, command, root, status):
            return False
        opens = watch.stored_opens()
        return bool(opens) and all(
            count <= search_opens(command, root, path) for path, count in opens.items()
        )

    def _judged(
        self,
        seen: Seen,
        tool: str,
        category: str,
        redacted_error: str | None,
        params: Any = None,
        status: int | None = 0,
    ) -> CallFindings:
        if CREDENTIAL_OBJECT_READ in seen.alerts and self._objects_in_view(params, seen, status):
            seen = _without_object_reads(seen)
        if CREDENTIAL_READ in seen.alerts and self._searched_in_view(params, seen, status):
            seen = _without_searched_reads(seen)
        effects = [alert for alert in seen.alerts if alert in _EFFECT_ALERTS]
        between = seen.effects.get("between")
        if (
            _many_deleted(seen.effects)
            or (isinstance(between, Mapping) and _many_deleted(between))
            or not _LOSSES_JUDGED_AS_DELETION.isdisjoint(effects)
        ):
            effects.append("many_files_deleted")
        judgement = self.policy.effect_rules.judge(effects, tool=tool, category=category)
        record: dict[str, Any] = dict(seen.effects)
        if seen.secrets:
            record["secrets"] = [finding.to_record() for finding in seen.secrets]
        verdict = judgement.verdict if judgement is not None else None
        # only an enforced deny changes what the agent receives: a dry run never interferes
        exposed = seen.redacted or redacted_error is not None
        redact = exposed and judgement is not None and judgement.verdict == "FAIL"
        caught_by = ""
        if judgement is not None:
            caught_by = "output" if SECRET_EXPOSURE in judgement.effects else "effect"
        return CallFindings(
            alerts=seen.alerts,
            effects=record or None,
            verdict=verdict,
            reason=f"rule {judgement.rule_id}: {judgement.reason}" if judgement else "",
            caught_by=caught_by,
            redacted=redact,
            output=seen.redacted_output if redact else None,
            error_message=redacted_error if redact else None,
        )


def _without_searched_reads(seen: Seen) -> Seen:
    """``seen`` with its credential reads kept as ``effects.credentialSearched``, not judged."""
    effects = dict(seen.effects)
    effects["credentialSearched"] = effects.pop("credentialRead", [])
    alerts = tuple(alert for alert in seen.alerts if alert != CREDENTIAL_READ)
    return replace(seen, alerts=alerts, effects=effects)


def _told_apart(watch: CredentialReadWatch, command: str, root: str, status: int | None) -> bool:
    """Whether a search's opens can be told from those of the calls made beside it: there were
    none, or it ran to its end (``status`` 0 or 1) opening each file as often as it names it."""
    return not watch.concurrent() or (status in (0, 1) and exhaustive_searches(command, root))


def _without_object_reads(seen: Seen) -> Seen:
    """``seen`` without its reads of credential files' stored copies: commands the reading
    judges itself made them (``git log --stat``); the record keeps only a packing of one."""
    effects = {k: v for k, v in seen.effects.items() if k != "credentialObjectRead"}
    alerts = tuple(alert for alert in seen.alerts if alert != CREDENTIAL_OBJECT_READ)
    return replace(seen, alerts=alerts, effects=effects)


def _many_deleted(effects: Mapping[str, Any]) -> bool:
    session = effects.get(SESSION_LOST)  # this call's and the earlier calls' losses together
    if isinstance(session, int) and session > MANY_FILES_DELETED:
        return True
    tracked = effects.get("trackedDeleted")
    emptied = effects.get("emptiedCount", len(effects.get("emptied") or ()))
    discarded = effects.get("discardedCount", len(effects.get("discarded") or ()))
    lost = sum(n for n in (tracked, emptied, discarded) if isinstance(n, int))
    if lost > MANY_FILES_DELETED:
        return True
    deleted = effects.get("deleted")
    count = effects.get("deletedCount")
    if isinstance(count, int):
        return count > MANY_FILES_DELETED
    return isinstance(deleted, list) and len(deleted) > MANY_FILES_DELETED


def leak_decision(
    tool: str,
    params: Mapping[str, Any],
    evaluation: Evaluation,
    alerts: tuple[str, ...],
    leak: OutgoingLeak,
    root: str | None,
) -> GateDecision:
    """A payload carrying a known secret: refused when the policy's effect rules deny it (or
    a write through a hard link the policy refuses as the write of the file it links)."""
    if leak.refusal is not None:
        refused = leak.refusal
        message = f"{BLOCK_PREFIX}[web4-policy] {refused.reason}"
        return GateDecision(tool, params, refused, True, message, refused.constraints, alerts)
    all_alerts = tuple(dict.fromkeys((*alerts, *leak.alerts)))
    judgement = leak.judgement
    params = leak.redacted_params  # the record never holds the value
    extra: dict[str, Any] = {"secrets": list(leak.secrets)}
    if judgement is not None and judgement.verdict is not None:
        reason = f"rule {judgement.rule_id}: {judgement.reason}"
        extra["judged"] = {"verdict": judgement.verdict, "reason": reason, "caughtBy": "output"}
    if judgement is None or judgement.verdict != "FAIL":
        return GateDecision(
            tool,
            params,
            evaluation,
            False,
            "",
            evaluation.constraints,
            all_alerts,
            record_extra=extra,
        )
    refused = Evaluation(
        "deny",
        True,
        judgement.rule_id,
        judgement.rule_id,
        None,
        "A known secret is in the outgoing payload",
        ("policy:deny", f"rule:{judgement.rule_id}"),
        evaluation.category,
        None,  # worked out from the redacted payload
        params,
        root,
    )
    message = f"{BLOCK_PREFIX}[web4-policy] a known secret is in the outgoing payload"
    return GateDecision(
        tool,
        params,
        refused,
        True,
        message,
        refused.constraints,
        all_alerts,
        record_extra=extra,
    )


def store_refusal(
    tool: str,
    params: Mapping[str, Any],
    evaluation: Evaluation,
    alerts: tuple[str, ...],
    touched: str,
    root: str | None,
    what: str = "the audit store",
) -> GateDecision:
    """The refusal of a call that touches the audit store, or ``what`` else the built-in rule
    keeps out of the agent's reach (no policy overrides it)."""
    reason = f"{what} is out of the agent's reach ({touched})"
    rule = (STORE_RULE_ID, "Protect the audit store")
    all_alerts = tuple(dict.fromkeys((*alerts, TAMPER_ALERT)))
    return built_in_refusal(tool, params, evaluation, rule, reason, all_alerts, root)
