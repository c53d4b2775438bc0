"""Small builders shared by the policy tests."""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pytest_harness_audit.policy import Evaluation, Policy


def rule(
    rule_id: str = "r",
    *,
    decision: str = "deny",
    priority: int = 1,
    name: str | None = None,
    reason: str | None = None,
    **match: Any,
) -> dict[str, Any]:
    """A rule document; keyword arguments are the ``match`` criteria (camelCase keys)."""
    out: dict[str, Any] = {
        "id": rule_id,
        "name": name if name is not None else f"Rule {rule_id}",
        "priority": priority,
        "decision": decision,
        "match": match,
    }
    if reason is not None:
        out["reason"] = reason
    return out


def policy(*rules: dict[str, Any], **top: Any) -> Policy:
    """A policy of ``rules``; keyword arguments are top-level keys (``defaultPolicy`` …)."""
    return Policy.from_dict({**top, "rules": list(rules)})


def glob_policy(*patterns: str) -> Policy:
    """One deny rule matching ``patterns`` as globs, for any tool."""
    return policy(rule("glob", targetPatterns=list(patterns)))


def regex_policy(*patterns: str, decision: str = "deny") -> Policy:
    """One rule matching ``patterns`` as regexes, for any tool."""
    return policy(
        rule("regex", decision=decision, targetPatterns=list(patterns), targetPatternsAreRegex=True)
    )


def hits(p: Policy, target: str, *, key: str = "pattern", tool: str = "Grep") -> bool:
    """Whether ``target`` (given as parameter ``key``) makes a rule of ``p`` fire."""
    return not p.evaluate(tool, {key: target}).is_default


def decide(p: Policy, tool: str, **params: Any) -> tuple[str, str | None]:
    """``(decision, rule_id)`` of one call."""
    evaluation: Evaluation = p.evaluate(tool, params)
    return evaluation.decision, evaluation.rule_id


# -- a reference glob matcher, written from DESIGN §4 independently of the engine -----------


#: Decisions the shell reading tests expect.
SECRET = ("deny", "deny-secret-files")
DESTROYS = ("deny", "deny-destructive-commands")
UNREADABLE = ("warn", "unreadable-command")
ALLOWED = ("allow", None)


def write_files(root: Path, files: Mapping[str, object]) -> None:
    """Write ``files`` into ``root`` by path: text as it is, a dict as JSON, ``-> target`` as a
    symlink."""
    for name, content in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, str) and content.startswith("-> "):
            os.symlink(content[3:], path)
        else:
            text = content if isinstance(content, str) else json.dumps(content)
            path.write_text(text, encoding="utf-8")


def secret_workspace(parent: Path, files: Mapping[str, str], folders: tuple[str, ...] = ()) -> Path:
    """A workspace folder under ``parent`` holding a ``.env`` secret, ``folders`` and
    ``files`` (by path, with their text)."""
    workspace = parent / "workspace"
    workspace.mkdir(parents=True)
    (workspace / ".env").write_text("API_KEY=sk-test-0123456789abcdef\n", encoding="utf-8")
    for folder in folders:
        (workspace / folder).mkdir(parents=True, exist_ok=True)
    write_files(workspace, files)
    return workspace


def safety_in(command: str, root: object) -> tuple[str, str | None]:
    """``(decision, rule)`` of the ``safety`` preset for the Bash ``command`` in workspace
    ``root``."""
    evaluation = _safety().evaluate("Bash", {"command": command}, root=str(root))
    return evaluation.decision, evaluation.rule_id


@functools.cache
def _safety() -> Policy:
    return Policy.preset("safety")


def _tokens(pattern: str) -> tuple[str, ...]:
    out = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("**/")
            i += 3
        elif pattern.startswith("**", i):
            out.append("**")
            i += 2
        else:
            out.append(pattern[i])
            i += 1
    return tuple(out)


def reference_match(pattern: str, target: str) -> bool:
    """``*`` = any run of non-``/``; ``?`` = one non-``/``; ``**`` = anything; ``**/`` = zero
    or more whole directories (empty, or anything ending in ``/``); the rest literal."""
    tokens = _tokens(pattern)

    @functools.cache
    def match(ti: int, si: int) -> bool:
        if ti == len(tokens):
            return si == len(target)
        token = tokens[ti]
        if token == "**":
            return any(match(ti + 1, k) for k in range(si, len(target) + 1))
        if token == "**/":
            if match(ti + 1, si):
                return True
            return any(
                target[k - 1] == "/" and match(ti + 1, k) for k in range(si + 1, len(target) + 1)
            )
        if token == "*":
            k = si
            while True:
                if match(ti + 1, k):
                    return True
                if k == len(target) or target[k] == "/":
                    return False
                k += 1
        if si == len(target):
            return False
        if token == "?":
            return target[si] != "/" and match(ti + 1, si + 1)
        return target[si] == token and match(ti + 1, si + 1)

    return match(0, 0)


#: The policy of the reference plugin README's "Example: Full Policy Config".
README_POLICY = {
    "defaultPolicy": "allow",
    "enforce": True,
    "rules": [
        {
            "id": "deny-destructive-commands",
            "name": "Block destructive shell commands",
            "priority": 1,
            "decision": "deny",
            "reason": "Destructive command blocked",
            "match": {
                "tools": ["Bash"],
                "targetPatterns": ["rm\\s+-rf", "mkfs\\."],
                "targetPatternsAreRegex": True,
            },
        },
        {
            "id": "deny-secrets",
            "name": "Block reading secret files",
            "priority": 5,
            "decision": "deny",
            "reason": "Secret file access denied",
            "match": {
                "categories": ["file_read"],
                "targetPatterns": ["**/.env", "**/.env.*", "**/credentials.*", "**/*secret*"],
            },
        },
        {
            "id": "warn-network",
            "name": "Warn on network access",
            "priority": 10,
            "decision": "warn",
            "match": {"categories": ["network"]},
        },
    ],
}
