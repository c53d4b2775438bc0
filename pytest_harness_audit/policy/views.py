"""A shell command judged also as what it amounts to: a network exchange, a write of files.

Rules name categories, and a shell command is ``command``; but ``curl https://x`` is a network
exchange and ``echo x >> MEMORY.md`` a write of ``MEMORY.md``. So after a command is evaluated
as a command, it is evaluated again in each *view* its reading gives:

* ``network`` — the reading noted a network exchange (``note:network``: ``curl``, ``wget``,
  ``nc``, ``ssh``, ``scp``, ``rsync host:``, ``git push``, ``/dev/tcp/…``, inline code using a
  network library): once per URL among its targets (as a ``url`` parameter, so rules on URLs
  apply), or once with no target;
* ``file_write`` — each file it writes (a ``write:<path>`` target: ``>``, ``>>``, ``tee``,
  ``cp``/``mv`` onto it, ``sed -i`` …) as a ``file_path``.

A view counts only when one of the policy's rules decides it (a view's default decision is the
command's own), and only when it is more severe than the command's decision (deny over warn over
allow; on a tie the command's own rule stays). The result keeps the command's category and
targets and takes the view's rule. Every rule of a policy on network access or on file writes so
applies to the shell too.

A tool with no category (``unknown``: a function tool without one; ``mcp``: a host or relayed MCP
tool the tables do not know) is judged as a write of each path it names
(:func:`with_write_views`): the rules that deny writes apply to it. Such a tool given a shell
command (a ``command``, ``cmd``, ``script`` or ``argv`` parameter, or another name for one such
as ``command_line``: :data:`~.param_targets.COMMAND_ALIASES`; an agent framework's ``bash`` or
``shell`` function tool, an MCP server's ``terminal_exec``) is judged too as that command
(:func:`with_command_view`): the rules that deny commands apply to it. The argument objects it
carries for an inner call (a hub's ``{"name": "shell", "arguments": {"command": …}}``, or the
same as a JSON text: :mod:`.embedded_calls`) are each judged as a call of the tool
(:func:`with_embedded_views`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Final, Protocol

from pytest_harness_audit.policy.categories import COMMAND, FILE_WRITE, NETWORK
from pytest_harness_audit.policy.embedded_calls import TOO_MANY_NAMES, named_embedded_calls
from pytest_harness_audit.policy.evaluation import Evaluation
from pytest_harness_audit.policy.model import PolicySpec
from pytest_harness_audit.policy.param_targets import (
    COMMAND_KEYS,
    argv_command,
    as_dict,
    is_code_alias,
    is_command_alias,
    is_path_like,
)
from pytest_harness_audit.policy.patch_paths import patch_paths
from pytest_harness_audit.policy.tool_names import (
    POWERSHELL,
    SHELL_NAMES,
    canonical_name,
    spelled_tool,
    types_into_terminal,
)

#: Most files (or URLs) of one call evaluated as views one by one; the others are evaluated
#: together, as one view naming them all, and one by one (up to :data:`MAX_VIEWS_EVER`) when a
#: rule matched them there: a rule on one of them is never hidden behind a few harmless ones.
MAX_VIEWS: Final = 16
MAX_VIEWS_EVER: Final = 4096
NETWORK_TARGET: Final = "note:network"
_WRITE: Final = "write:"
_WRITE_LENGTH: Final = len(_WRITE)
_RANK: Final = {"allow": 0, "warn": 1, "ask": 2, "deny": 3}
#: Written files no rule is about (the shell's own sinks).
_SINKS: Final = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "-"})


class Evaluator(Protocol):
    """The evaluation a view runs (the compiled policy's, without views)."""

    def __call__(
        self, tool: str, params: Mapping[str, Any], *, root: str | None, category: str
    ) -> Evaluation: ...


def wanted(spec: PolicySpec) -> frozenset[str]:
    """The views some rule of ``spec`` can decide: a call rule naming ``network`` or
    ``file_write`` and not ``command`` (a rule naming ``command`` already sees commands)."""
    views: set[str] = set()
    for rule in spec.rules:
        categories = rule.match.categories
        if rule.match.effects is not None or categories is None or COMMAND in categories:
            continue
        views.update(c for c in (NETWORK, FILE_WRITE) if c in categories)
    return frozenset(views)


def _is_url(target: str) -> bool:
    scheme, sep, _ = target.partition("://")
    return bool(sep) and scheme.isalpha() and len(scheme) <= 10


def view_calls(targets: Sequence[str], views: frozenset[str]) -> list[tuple[str, dict[str, str]]]:
    """``(category, params)`` of every view of a command with these targets."""
    calls: list[tuple[str, dict[str, str]]] = []
    if NETWORK in views and NETWORK_TARGET in targets:
        urls = [t for t in dict.fromkeys(targets) if _is_url(t)]
        calls.extend((NETWORK, {"url": url}) for url in urls)
        if not urls:
            calls.append((NETWORK, {}))
    if FILE_WRITE in views and any(t.startswith(_WRITE) for t in targets):  # most write none
        # filtered first, then de-duplicated: the same paths in the same order, and a command
        # that writes nothing (the commonest) builds nothing
        written = [
            t[_WRITE_LENGTH:]
            for t in targets
            if t.startswith(_WRITE) and t[_WRITE_LENGTH:] not in _SINKS
        ]
        if written:
            unique = list(dict.fromkeys(written))
            calls.extend((FILE_WRITE, {"file_path": path}) for path in unique)
    return calls


def judged_views(
    calls: Sequence[tuple[str, Mapping[str, Any]]],
    tool: str,
    root: str | None,
    evaluate: Evaluator,
) -> Iterator[Evaluation]:
    """The evaluations of the views ``calls`` (:func:`view_calls`), in order: the first
    :data:`MAX_VIEWS` of each category one by one; the others in one view naming all of their
    files or URLs (``paths``), then — when a rule matched there and did not deny, so that it may
    hide another rule's deny — one by one, up to :data:`MAX_VIEWS_EVER`."""
    by_category: dict[str, list[Mapping[str, Any]]] = {}
    for category, view_params in calls:
        by_category.setdefault(category, []).append(view_params)
    for category, all_params in by_category.items():
        for view_params in all_params[:MAX_VIEWS]:
            yield evaluate(tool, view_params, root=root, category=category)
        rest = all_params[MAX_VIEWS:]
        named = [value for view in rest for value in view.values() if type(value) is str]
        if not named:
            continue
        together = evaluate(tool, {"paths": named}, root=root, category=category)
        yield together
        if together.rule_id is not None and together.decision != "deny":
            for view_params in rest[: MAX_VIEWS_EVER - MAX_VIEWS]:
                yield evaluate(tool, view_params, root=root, category=category)


def with_write_views(
    evaluation: Evaluation,
    tool: str,
    params: Mapping[str, Any],
    root: str | None,
    evaluate: Evaluator,
) -> Evaluation:
    """``evaluation`` of a tool with no category, or the deny of a rule on writes.

    What such a tool does to the files it names cannot be known: each path-like target (no
    URL) is judged as a ``file_write`` of it, and a deny there (a persona file, a file git runs
    code from, the host's settings) is the call's decision. Warnings on writes are not taken:
    the tool may only read. The files a patch among its parameters changes are written ones
    (:func:`~.patch_paths.patch_paths`: ``apply_patch``'s ``*** Update File: SOUL.md``)."""
    if evaluation.decision == "deny":
        return evaluation
    paths = [t for t in dict.fromkeys(evaluation.targets) if not _is_url(t) and is_path_like(t)]
    paths += [path for path in patch_paths(tool, params) if path not in paths]
    calls = [(FILE_WRITE, {"file_path": path}) for path in paths]
    for seen in judged_views(calls, tool, root, evaluate):
        if seen.rule_id is not None and seen.decision == "deny":
            return _denied_by_view(seen, evaluation, list(evaluation.targets), params, root)
    return evaluation


def _denied_by_view(
    seen: Evaluation,
    evaluation: Evaluation,
    targets: list[str],
    params: Mapping[str, Any],
    root: str | None,
) -> Evaluation:
    """The call's decision when a view of it (``seen``) is denied: that deny, with the call's
    own category and the ``targets`` shown."""
    return Evaluation(
        seen.decision,
        seen.enforced,
        seen.rule_id,
        seen.rule_name,
        seen.priority,
        seen.reason,
        seen.constraints,
        evaluation.category,
        targets,
        params,
        root,
    )


def names_command(params: Mapping[str, Any]) -> bool:
    """Whether ``params`` (read through a lone wrapping object, as targets are) hold a shell
    command under one of :data:`COMMAND_KEYS` (text, or an argv list) or, as text, under one of
    :data:`~.param_targets.COMMAND_ALIASES`."""
    return command_params(params) is not None


def command_params(params: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """``params`` as a command tool's: themselves when they hold a command under one of
    :data:`COMMAND_KEYS`, else with the text of the first of
    :data:`~.param_targets.COMMAND_ALIASES` as their ``command``, else themselves when they
    hold program text (``code``), else with the text of a code cell
    (:data:`~.param_targets.CODE_ALIASES`) as their ``code``; the text a computer-use ``type``
    action types (into a terminal, maybe) as their ``command``; ``None`` when they hold no
    command."""
    fields = as_dict(params)
    for key in COMMAND_KEYS:
        value = fields.get(key)
        if (isinstance(value, str) and value.strip()) or argv_command(value) is not None:
            return params
    for key, value in fields.items():
        if type(key) is str and isinstance(value, str) and value.strip() and is_command_alias(key):
            return {**fields, "command": value}
    code = fields.get("code")
    if isinstance(code, str) and code.strip():
        return params  # program text, read as `python3 -c CODE` (as every door's `code` is)
    typed = fields.get("text")  # a computer-use `type` action: maybe into a terminal
    if (
        fields.get("action", fields.get("type")) == "type"
        and isinstance(typed, str)
        and typed.strip()
    ):
        return {**fields, "command": typed}
    for key, value in fields.items():  # a notebook cell's text (a Jupyter server's tools)
        if type(key) is str and isinstance(value, str) and value.strip() and is_code_alias(key):
            return {**fields, "code": value}
    return None


def with_command_view(
    evaluation: Evaluation,
    tool: str,
    params: Mapping[str, Any],
    root: str | None,
    evaluate: Evaluator,
) -> Evaluation:
    """``evaluation`` of a tool with no category given a shell command, or the deny of a rule
    on commands.

    Whether such a tool runs its ``command`` in a shell cannot be known: the call is judged as a
    ``command`` too (its other views included), and a deny there (``rm -rf``, a credential
    file read, a write of a persona file) is the call's decision. Warnings on commands are not
    taken: the parameter may be no shell command at all."""
    if evaluation.decision == "deny":
        return evaluation
    seen = evaluate(tool, command_params(params) or params, root=root, category=COMMAND)
    if seen.rule_id is None or seen.decision != "deny":
        return evaluation
    return _denied_by_view(seen, evaluation, list(seen.targets), params, root)


class CallEvaluator(Protocol):
    """The full evaluation of a call of a tool (the inner calls' own not looked at again)."""

    def __call__(self, tool: str, params: Mapping[str, Any], *, root: str | None) -> Evaluation: ...


class SpelledEvaluator(Protocol):
    """The evaluation of a call of ``tool`` in the category of the built-in tool ``spelled``
    (the call keeps its name: a rule naming tools matches exact names)."""

    def __call__(
        self, tool: str, spelled: str, params: Mapping[str, Any], *, root: str | None
    ) -> Evaluation: ...


def with_embedded_views(
    evaluation: Evaluation,
    tool: str,
    params: Mapping[str, Any],
    root: str | None,
    evaluate: CallEvaluator,
    as_spelled: SpelledEvaluator,
) -> Evaluation:
    """``evaluation`` of a tool with no category, or the deny of one of the inner calls it
    carries (:func:`~.embedded_calls.embedded_calls`), each judged as a call of the tool with
    those arguments: a command there is read as one, a path there as a write of it. Warnings
    are not taken, as for the tool's own parameters — unless the inner call names its tool
    (``{"name": "Bash", "arguments": …}``, or ``python``, ``pwsh``, a spelling of one:
    :func:`~.tool_names.spelled_tool`): it is judged as a call of that tool too, and the more
    severe decision is kept."""
    if evaluation.decision == "deny":
        return evaluation
    best = evaluation
    for name, inner in named_embedded_calls(params):
        if name == TOO_MANY_NAMES:  # not read whole: the gate refuses it (``unread-parameters``)
            return _denied_by_view(best, best, [*best.targets, TOO_MANY_NAMES], params, root)
        seen = evaluate(tool, inner, root=root)
        if seen.rule_id is not None and seen.decision == "deny":
            targets = list(dict.fromkeys([*evaluation.targets, *seen.targets]))
            return _denied_by_view(seen, evaluation, targets, params, root)
        if name is None or name == tool:
            continue
        spelled = spelled_tool(name)
        if spelled is None:  # the tool it names, by its own name
            seen = evaluate(name, inner, root=root)
        else:
            seen = as_spelled(name, spelled, _spelled_params(spelled, name, inner), root=root)
        if seen.rule_id is not None and _RANK.get(seen.decision, 0) > _RANK.get(best.decision, 0):
            targets = list(dict.fromkeys([*evaluation.targets, *seen.targets]))
            best = _denied_by_view(seen, evaluation, targets, params, root)
            if seen.decision == "deny":
                return best
    return best


#: Parameters a shell tool (:data:`~.tool_names.SHELL_NAMES`) given no command may take its
#: input under: text typed into a shell session (inspect_ai's ``bash_session`` ``input``).
_SHELL_INPUTS: Final = ("input", "keys", "text")


def _spelled_params(spelled: str, tool: str, params: Mapping[str, Any]) -> Mapping[str, Any]:
    """``params`` as the built-in tool ``spelled`` takes them: a command under another name as
    its ``command``, a shell session's ``input`` too; else as they are."""
    found = command_params(params)
    fields = as_dict(params)
    if found is None and (canonical_name(tool) in SHELL_NAMES or types_into_terminal(tool)):
        for key in _SHELL_INPUTS:
            value = fields.get(key)
            if isinstance(value, str) and value.strip():
                return {**fields, "command": value}
    if found is None:
        return params
    if spelled == POWERSHELL and not isinstance(found.get("command"), str):
        for key in COMMAND_KEYS:  # PowerShell's reading takes its text from ``command``
            value = as_dict(found).get(key)
            if isinstance(value, str):
                return {**as_dict(found), "command": value}
    return found


def with_spelled_view(
    evaluation: Evaluation,
    tool: str,
    params: Mapping[str, Any],
    root: str | None,
    evaluate: SpelledEvaluator,
) -> Evaluation:
    """``evaluation``, or the more severe decision of the call as the built-in tool its name
    spells (:func:`~.tool_names.spelled_tool`: ``bash``,
    ``Bash `` or ``Bаsh`` as ``Bash``, ``pwsh`` as ``PowerShell``), with the same parameters.
    Warnings count here: the name says what the tool runs. It is judged as a call of that tool,
    by its name too: a rule naming ``Bash`` judges ``bash``."""
    spelled = spelled_tool(tool)
    if spelled is None or evaluation.decision == "deny":
        return evaluation
    seen = evaluate(tool, spelled, _spelled_params(spelled, tool, params), root=root)
    if _RANK.get(seen.decision, 0) <= _RANK.get(evaluation.decision, 0):
        return evaluation
    targets = list(dict.fromkeys([*evaluation.targets, *seen.targets]))
    return _denied_by_view(seen, evaluation, targets, params, root)


def with_views(
    evaluation: Evaluation,
    tool: str,
    params: Mapping[str, Any],
    root: str | None,
    views: frozenset[str],
    evaluate: Evaluator,
) -> Evaluation:
    """``evaluation`` of a command, or the more severe decision of one of its views."""
    outcome = evaluation.outcome
    if outcome.decision == "deny" or outcome.category != COMMAND:
        return evaluation
    calls = view_calls(evaluation.target_list, views)
    if not calls:
        return evaluation
    best: Evaluation | None = None
    rank = _RANK.get(outcome.decision, 0)
    for seen in judged_views(calls, tool, root, evaluate):
        if seen.rule_id is not None and _RANK.get(seen.decision, 0) > rank:
            best, rank = seen, _RANK[seen.decision]
            if seen.decision == "deny":
                break
    if best is None:
        return evaluation
    return Evaluation(
        best.decision,
        best.enforced,
        best.rule_id,
        best.rule_name,
        best.priority,
        best.reason,
        best.constraints,
        evaluation.category,
        list(evaluation.targets),
        params,
        root,
    )
