"""`harness-audit policy status | rules | presets | test TOOL [TARGET]`."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from pytest_harness_audit.audit.records import display_target
from pytest_harness_audit.cli.policy_lint import masking_lints
from pytest_harness_audit.errors import HarnessAuditError, UsageError
from pytest_harness_audit.policy import Policy
from pytest_harness_audit.policy.evaluation import Evaluation
from pytest_harness_audit.policy.loader import preset_path
from pytest_harness_audit.policy.model import Rule
from pytest_harness_audit.policy.source import DEFAULT_PRESET, resolve_policy

#: Where `policy test TOOL TARGET` puts TARGET, per tool.
NATURAL_PARAMETER = {
    "Bash": "command",
    "Read": "file_path",
    "Write": "file_path",
    "Edit": "file_path",
    "NotebookEdit": "file_path",
    "Glob": "pattern",
    "Grep": "pattern",
    "WebFetch": "url",
    "WebSearch": "query",
}


def register(subparsers: Any) -> None:
    """Add the ``policy`` command group."""
    group = subparsers.add_parser("policy", help="inspect and dry-run a policy")
    commands = group.add_subparsers(dest="command", metavar="SUBCOMMAND")
    commands.required = True

    def add(name: str, help_text: str) -> argparse.ArgumentParser:
        parser: argparse.ArgumentParser = commands.add_parser(name, help=help_text)
        source = parser.add_mutually_exclusive_group()
        source.add_argument("--policy", metavar="FILE", help="policy file (YAML or JSON)")
        source.add_argument("--preset", metavar="NAME", help="shipped preset (default: safety)")
        parser.add_argument("--json", action="store_true", help="machine-readable output")
        return parser

    add("status", "show the policy engine state").set_defaults(func=_status)
    add("rules", "list the rules in evaluation order").set_defaults(func=_rules)
    add("presets", "list the shipped presets").set_defaults(func=_presets)
    test = add("test", "dry-run one tool call against the policy")
    test.add_argument("tool", help="tool name, e.g. Bash")
    test.add_argument("target", nargs="?", help="goes to the tool's natural parameter")
    test.add_argument("--params", metavar="JSON", help="full tool parameters as a JSON object")
    test.set_defaults(func=_test)


def policy_from_args(args: argparse.Namespace) -> Policy:
    """The policy named by ``--policy FILE``/``--preset NAME`` (default: the ``safety`` preset);
    read once per command line (kept on ``args``; so is the error of one that does not load)."""
    cached = getattr(args, "_resolved_policy", None)
    if isinstance(cached, Policy):
        return cached
    if isinstance(cached, HarnessAuditError):
        raise cached
    try:
        if getattr(args, "policy", None):
            policy = resolve_policy(Path(args.policy))
        else:
            policy = resolve_policy(getattr(args, "preset", None) or None)
    except HarnessAuditError as exc:
        args._resolved_policy = exc
        raise
    args._resolved_policy = policy
    return policy


def linted_policy(args: argparse.Namespace) -> Policy:
    """:func:`policy_from_args`, after printing on stderr one warning line per rule that the
    rule order keeps from denying (:mod:`~pytest_harness_audit.cli.policy_lint`)."""
    policy = policy_from_args(args)
    if getattr(args, "policy", None):
        source = str(args.policy)
    else:
        source = str(preset_path(policy.spec.preset or DEFAULT_PRESET))
    for line in masking_lints(policy, source):
        print(line, file=sys.stderr)
    return policy


def _status(args: argparse.Namespace) -> int:
    policy = linted_policy(args)
    if args.json:
        print(
            json.dumps(
                {
                    "name": policy.name,
                    "rules": len(policy.rules),
                    "defaultPolicy": policy.default_policy,
                    "enforce": policy.enforce,
                    "preset": policy.spec.preset,
                    "contentHash": policy.content_hash,
                }
            )
        )
        return 0
    print("Policy engine:")
    print(f"  Rules:    {len(policy.rules)}")
    print(f"  Default:  {policy.default_policy}")
    print(f"  Enforce:  {str(policy.enforce).lower()}")
    if policy.spec.preset:
        print(f"  Preset:   {policy.spec.preset}")
    return 0


def describe_match(rule: Rule) -> str:
    """The ``match:`` line of ``policy rules`` (criteria joined by AND)."""
    match = rule.match
    parts = []
    if match.tools is not None:
        parts.append(f"tools=[{', '.join(match.tools)}]")
    if match.categories is not None:
        parts.append(f"categories=[{', '.join(match.categories)}]")
    if match.target_patterns is not None:
        kind = "regex" if match.target_patterns_are_regex else "glob"
        parts.append(f"targets({kind})=[{', '.join(match.target_patterns)}]")
    if match.rate_limit is not None:
        parts.append(f"rateLimit={match.rate_limit.max_count}/{match.rate_limit.window_ms:g}ms")
    if match.effects is not None:
        parts.append(f"effects=[{', '.join(match.effects)}] (after the call ran)")
    return " AND ".join(parts) if parts else "(everything)"


def _rules(args: argparse.Namespace) -> int:
    policy = linted_policy(args)
    if args.json:
        print(json.dumps(policy.to_dict()))
        return 0
    rules = policy.rules
    print(f"{len(rules)} rule{'s' if len(rules) != 1 else ''} (priority order):")
    for rule in rules:
        print()
        print(f"  [{rule.priority}] {rule.id} -> {rule.decision}")
        print(f"       {rule.name}")
        print(f"       match: {describe_match(rule)}")
        if rule.reason:
            print(f"       reason: {rule.reason}")
    print()
    print(f"Default: {policy.default_policy} | Enforce: {str(policy.enforce).lower()}")
    return 0


def _presets(args: argparse.Namespace) -> int:
    names = Policy.preset_names()
    if args.json:
        print(json.dumps([{"name": n, "description": Policy.preset_description(n)} for n in names]))
        return 0
    for name in names:
        preset = Policy.preset(name)
        print(f"{name:<11} {Policy.preset_description(name)}")
        print(
            f"{'':<11} default={preset.default_policy} enforce="
            f"{str(preset.enforce).lower()} rules={len(preset.rules)}"
        )
    return 0


def test_params(tool: str, target: str | None, params_json: str | None) -> dict[str, Any]:
    """Build the parameters of `policy test` from TARGET and/or ``--params``."""
    params: dict[str, Any] = {}
    if params_json is not None:
        try:
            loaded = json.loads(params_json)
        except json.JSONDecodeError as exc:
            raise UsageError(f"--params: invalid JSON: {exc.msg}") from None
        if not isinstance(loaded, dict):
            raise UsageError(f"--params: must be a JSON object, got {params_json!r}")
        params.update(loaded)
    if target is not None:
        params[NATURAL_PARAMETER.get(tool, "path")] = target
    return params


def format_evaluation(tool: str, evaluation: Evaluation) -> str:
    """The human output of `policy test` (the reference plugin's layout)."""
    lines = [
        f"Tool:       {tool}",
        f"Category:   {evaluation.category}",
        f"Target:     {display_target(evaluation.target) or '(none)'}",
        f"Decision:   {evaluation.decision}",
        f"Enforced:   {str(evaluation.enforced).lower()}",
        f"Reason:     {evaluation.reason}",
    ]
    if evaluation.rule_id is not None:
        lines.append(f"Rule:       {evaluation.rule_id} (priority {evaluation.priority})")
    lines.append(f"Constraints: {', '.join(evaluation.constraints)}")
    return "\n".join(lines)


def _test(args: argparse.Namespace) -> int:
    policy = linted_policy(args)
    params = test_params(args.tool, args.target, args.params)
    evaluation = policy.evaluate(args.tool, params)
    if args.json:
        print(json.dumps({"tool": args.tool, "params": params, **evaluation.to_dict()}))
    else:
        print(format_evaluation(args.tool, evaluation))
    return 0
