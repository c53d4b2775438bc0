"""`harness-audit hook pre | post | permission-request | permission-denied | stop | subagent-stop |
session-start | session-end | config-change`: the host hook adapter (JSON on stdin, answer on
stdout; ``stop`` and the session events print nothing on stdout)."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pytest_harness_audit.cli.policy_cmd import policy_from_args
from pytest_harness_audit.doors.hook import (
    WARN_MODES,
    PreAnswers,
    handle_permission_denied,
    handle_post,
    handle_pre,
)
from pytest_harness_audit.doors.hook_config import handle_config_change
from pytest_harness_audit.doors.hook_continuity_events import after_event, before_event
from pytest_harness_audit.doors.hook_deadline import DEADLINE_S, Deadline, Refusal
from pytest_harness_audit.doors.hook_effects import DEFAULT_ENTRY_LIMIT
from pytest_harness_audit.doors.hook_faults import keep_unfinished, record_post_fault
from pytest_harness_audit.doors.hook_git import isolate_git
from pytest_harness_audit.doors.hook_marks import marked
from pytest_harness_audit.doors.hook_policy_pin import pinned_policy
from pytest_harness_audit.doors.hook_prompt import fail_closed_answer, handle_permission_request
from pytest_harness_audit.doors.hook_session import (
    handle_session_end,
    handle_session_start,
    handle_stop,
    handle_subagent_stop,
)
from pytest_harness_audit.errors import HarnessAuditError
from pytest_harness_audit.gate.seam import describe_exception


def register(subparsers: Any) -> None:
    """Add the ``hook`` command group."""
    group = subparsers.add_parser(
        "hook",
        help="gate and record a host's tool, permission, stop and session hook payloads",
    )
    commands = group.add_subparsers(dest="command", metavar="SUBCOMMAND")
    commands.required = True
    for name, handler, text in (
        ("pre", handle_pre, "answer a PreToolUse payload"),
        ("post", handle_post, "record a PostToolUse or PostToolUseFailure payload"),
        ("permission-request", handle_permission_request, "mark a call the host asks about"),
        ("permission-denied", handle_permission_denied, "record a PermissionDenied payload"),
        ("stop", handle_stop, "record the turn's asks the host settled without an event"),
        ("subagent-stop", handle_subagent_stop, "record a subagent's asks settled without one"),
        ("session-start", handle_session_start, "open and record a SessionStart"),
        ("session-end", handle_session_end, "verify, record and report a SessionEnd"),
        ("config-change", handle_config_change, "judge, record and answer a ConfigChange"),
    ):
        parser = commands.add_parser(name, help=text)
        source = parser.add_mutually_exclusive_group()
        source.add_argument(
            "--policy",
            metavar="FILE",
            default=os.environ.get("HARNESS_AUDIT_POLICY_FILE"),
            help="policy file (default: $HARNESS_AUDIT_POLICY_FILE)",
        )
        source.add_argument(
            "--preset",
            metavar="NAME",
            default=os.environ.get("HARNESS_AUDIT_PRESET"),
            help="preset (default: $HARNESS_AUDIT_PRESET or safety)",
        )
        if handler is handle_pre:
            _register_pre_answers(parser)
        deadline_help = _DEADLINE_HELP.get(handler)
        if deadline_help is not None:
            parser.add_argument(
                "--deadline",
                metavar="SECONDS",
                type=_seconds,
                default=DEADLINE_S,
                help=f"{deadline_help} (default: {DEADLINE_S:g}; keep it under the hook entry's "
                "timeout, 600 by default)",
            )
        parser.set_defaults(func=lambda args, handler=handler: _run(args, handler))
    _register_install(commands)


#: What ``--deadline`` does, for the steps that take one.
_DEADLINE_HELP: dict[object, str] = {
    handle_pre: "refuse the call when no answer is ready after this long",
    handle_permission_request: "refuse the call when no answer is ready after this long",
    handle_post: "past this long, keep the call's fault for the next event and exit 1",
    handle_permission_denied: "past this long, keep the call's fault for the next event and exit 1",
}


def _seconds(text: str) -> float:
    """``--deadline``'s value: a number of seconds above zero."""
    try:
        seconds = float(text)
    except ValueError:
        seconds = 0.0
    if not 0 < seconds < float("inf"):
        raise argparse.ArgumentTypeError(f"expected a positive number of seconds, got {text!r}")
    return seconds


def _deadline(args: argparse.Namespace, handler: Any) -> Deadline:
    """The started deadline of a gating step: past it, the refusal the host honours there."""
    seconds = float(args.deadline)
    late = f"hook {args.command} did not answer within {seconds:g} s"
    if handler is handle_permission_request:
        answer = json.dumps(fail_closed_answer(late)) + "\n"
        refusal = Refusal(answer, f"harness-audit: error: {late} (permission denied)\n", 0)
    else:
        refusal = Refusal("", f"harness-audit: error: {late}, call refused\n", 2)
    return Deadline(seconds, refusal).start()


def _register_pre_answers(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--approve-allowed",
        action="store_true",
        help='answer permissionDecision "allow" for allowed calls (skips the host\'s prompt)',
    )
    parser.add_argument(
        "--warn",
        metavar="ask|pass",
        default=None,
        help="a warned call: ask the user, or pass it through with the warning as context "
        "(default: $HARNESS_AUDIT_HOOK_WARN, else ask)",
    )
    parser.add_argument(
        "--snapshot-limit",
        metavar="N",
        type=int,
        default=DEFAULT_ENTRY_LIMIT,
        help=f"entries a workspace snapshot walks at most (default: {DEFAULT_ENTRY_LIMIT})",
    )


def pre_answers(args: argparse.Namespace, environ: Mapping[str, str] | None = None) -> PreAnswers:
    """The pre step's answers from ``--approve-allowed``, ``--warn`` (else
    ``$HARNESS_AUDIT_HOOK_WARN``, else ``ask``) and ``--snapshot-limit``."""
    env = os.environ if environ is None else environ
    warn = args.warn or env.get("HARNESS_AUDIT_HOOK_WARN") or "ask"
    return PreAnswers(bool(args.approve_allowed), warn, int(args.snapshot_limit))


def _register_install(commands: Any) -> None:
    parser = commands.add_parser(
        "install", help="write or merge the hooks block into Claude Code's settings.json"
    )
    scope = parser.add_mutually_exclusive_group()
    scope.add_argument(
        "--project",
        dest="scope",
        action="store_const",
        const="project",
        help="DIR/.claude/settings.json (the default)",
    )
    scope.add_argument(
        "--user", dest="scope", action="store_const", const="user", help="~/.claude/settings.json"
    )
    parser.add_argument("--dir", type=Path, default=Path("."), help="the project (default: .)")
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--policy", metavar="FILE", help="policy file the hooks use")
    source.add_argument("--preset", metavar="NAME", help="preset the hooks use (default: safety)")
    parser.add_argument("--dry-run", action="store_true", help="show the diff, write nothing")
    parser.add_argument(
        "--warn", choices=WARN_MODES, help="the pre hook's warn mode (default: ask)"
    )
    parser.add_argument(
        "--approve-allowed",
        action="store_true",
        help='the pre hook answers "allow" for allowed calls',
    )
    parser.set_defaults(func=_install)


def _install(args: argparse.Namespace) -> int:
    import shlex

    from pytest_harness_audit.doors.hook_install import install, settings_path

    if args.policy:
        policy_args = f"--policy {shlex.quote(str(Path(args.policy).resolve()))}"
    else:
        policy_args = f"--preset {shlex.quote(args.preset or 'safety')}"
    pre_args = " ".join(
        [
            *(["--warn", args.warn] if args.warn else []),
            *(["--approve-allowed"] * args.approve_allowed),
        ]
    )
    path = settings_path(args.scope or "project", args.dir.resolve())
    done = install(path, policy_args, write=not args.dry_run, pre_args=pre_args)
    if not done.changed:
        print(f"{path}: the harness-audit hooks are already installed")
    else:
        print(done.diff, end="")
        if args.dry_run:
            print(f"(dry run: {path} not written)")
    return 0


def _run(args: argparse.Namespace, handler: Any) -> int:
    isolate_git()  # the project's git configuration runs nothing inside the hook
    if handler in (handle_session_start, handle_session_end, handle_stop, handle_subagent_stop):
        return _run_session_event(args, handler)
    if handler is handle_config_change:
        return _run_config_change(args)
    if handler not in (handle_pre, handle_permission_request):
        return _run_post(args, handler)
    # The host runs the tool when a PreToolUse hook exits with anything but 2 (or a deny), so
    # every failure here, ours included, must refuse the call: exit 2, the reason on stderr. At
    # a PermissionRequest the host ignores exit 2: only a ``decision`` object denies. A step
    # the host cancels at its timeout lets the call go on: past its deadline it refuses.
    deadline = _deadline(args, handler)
    try:
        text = sys.stdin.read()
        policy = pinned_policy(Path(args.storage), policy_from_args(args), text, refuse=True)
        event = before_event(Path(args.storage), policy, text)
        if handler is handle_pre:
            answer = handle_pre(
                text, storage=Path(args.storage), policy=policy, answers=pre_answers(args)
            )
            answer = marked(answer)  # the door's mark in the host's transcript
        else:
            answer = handler(text, storage=Path(args.storage), policy=policy)
        after_event(Path(args.storage), event)
    except Exception as exc:
        deadline.finish()
        problem = str(exc) if isinstance(exc, HarnessAuditError) else describe_exception(exc)
        if handler is handle_permission_request:
            print(json.dumps(fail_closed_answer(problem)))
            print(f"harness-audit: error: {problem} (permission denied)", file=sys.stderr)
            return 0
        if not isinstance(exc, HarnessAuditError):
            problem = f"hook failed, call refused: {problem}"
        print(f"harness-audit: error: {problem}", file=sys.stderr)
        return 2
    deadline.finish()
    print(json.dumps(answer))
    return 0


def _run_post(args: argparse.Namespace, handler: Any) -> int:
    """A post (or permission-denied) step that cannot be recorded as a call: one line on stderr,
    a fault record in its session where the payload names one, exit 1 (nothing is left to block:
    the tool has run, or the host refused it)."""
    event = None
    try:
        policy = policy_from_args(args)
        text = sys.stdin.read()
    except Exception as exc:  # nothing to record into without a policy: one line, exit 1
        problem = str(exc) if isinstance(exc, HarnessAuditError) else describe_exception(exc)
        print(f"harness-audit: error: {problem}", file=sys.stderr)
        return 1
    # a step the host cancels at its timeout leaves the call that ran unjudged: past its own
    # deadline it keeps the fault for the next event (something the agent arranged held it)
    late = f"hook {args.command} did not finish within {float(args.deadline):g} s"
    deadline = Deadline(
        float(args.deadline),
        Refusal("", f"harness-audit: error: {late} (kept for the next event)\n", 1),
        lambda: keep_unfinished(text, Path(args.storage), f"{late}: the call ran unjudged"),
    ).start()
    # the host cancelling the step at its entry's own timeout, before that deadline
    cancelled = f"hook {args.command} was cancelled by the host before it finished"
    deadline.on_cancel(
        Refusal("", f"harness-audit: error: {cancelled} (kept for the next event)\n", 1),
        lambda: keep_unfinished(
            text, Path(args.storage), f"{cancelled}: the call ran unjudged", tamper=False
        ),
    )
    try:
        policy = pinned_policy(Path(args.storage), policy, text, refuse=False)
        event = before_event(Path(args.storage), policy, text)
        answer = handler(text, storage=Path(args.storage), policy=policy)
    except Exception as exc:
        problem = str(exc) if isinstance(exc, HarnessAuditError) else describe_exception(exc)
        try:
            recorded = record_post_fault(
                text, storage=Path(args.storage), policy=policy, problem=problem
            )
        except Exception as fault:
            problem += f" (and the fault record failed: {describe_exception(fault)})"
            recorded = False
        after_event(Path(args.storage), event)
        deadline.finish()
        where = " (recorded as a fault)" if recorded else ""
        print(f"harness-audit: error: {problem}{where}", file=sys.stderr)
        return 1
    after_event(Path(args.storage), event)
    deadline.finish()
    print(json.dumps(answer))
    return 0


def _run_config_change(args: argparse.Namespace) -> int:
    """``config-change``: the answer on stdout (``decision: "block"`` for a change that fails the
    session); any failure, ours included, blocks the change: exit 2, one line on stderr (the host
    ignores both for ``policy_settings``)."""
    try:
        text = sys.stdin.read()
        policy = pinned_policy(Path(args.storage), policy_from_args(args), text, refuse=False)
        event = before_event(Path(args.storage), policy, text)
        answer = handle_config_change(text, storage=Path(args.storage), policy=policy)
        after_event(Path(args.storage), event)
    except Exception as exc:
        problem = str(exc) if isinstance(exc, HarnessAuditError) else describe_exception(exc)
        print(f"harness-audit: error: {problem} (configuration change blocked)", file=sys.stderr)
        return 2
    if answer:  # the host shows no message for a blocked change: one line for its debug log
        print(f"harness-audit: {answer['reason']}", file=sys.stderr)
    print(json.dumps(answer))
    return 0


def _run_session_event(args: argparse.Namespace, handler: Any) -> int:
    """A session event or ``stop``: nothing on stdout (the host would read it as context); a
    problem is one line on stderr and exit 1 (the host goes on; never exit 2, which would keep
    the agent from stopping)."""
    try:
        text = sys.stdin.read()
        policy = pinned_policy(Path(args.storage), policy_from_args(args), text, refuse=False)
        event = before_event(Path(args.storage), policy, text)
        done = handler(text, storage=Path(args.storage), policy=policy)
        after_event(Path(args.storage), event)
    except HarnessAuditError as exc:
        print(f"harness-audit: error: {exc}", file=sys.stderr)
        return 1
    except Exception as exc:
        print(f"harness-audit: error: hook failed: {describe_exception(exc)}", file=sys.stderr)
        return 1
    if done is not None:  # the end: one line for the host's debug log
        chain = "valid" if done.chain.valid else f"INVALID ({done.chain.reason})"
        print(
            f"harness-audit: session {done.session_id}: verdict {done.verdict.value}, "
            f"chain {chain}, report {done.report}",
            file=sys.stderr,
        )
        if policy.show_r6_status:
            from pytest_harness_audit.gate.console import status_line

            print(status_line(Path(args.storage), done.session_id), file=sys.stderr)
    return 0
