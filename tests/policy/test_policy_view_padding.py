"""A rule on one written file or one URL is not hidden behind many harmless ones.

A command is judged also as each file it writes and each URL it reaches (its views), and a tool
of no category as a write of each path it names; only the first 16 were judged. Sixteen notes
written before the host's settings (``tee n0.md … n15.md ~/.claude/settings.json``), or sixteen
harmless URLs before the one a policy denies, made the call allowed. The first 16 are still
judged one by one, the others together, and one by one when a rule matched them there.
"""

from __future__ import annotations

import pytest

from pytest_harness_audit.policy import Policy

SAFETY = Policy.preset("safety")
NO_EVIL = Policy.from_dict(
    {
        "preset": "safety",
        "rules": [
            {
                "id": "no-evil",
                "name": "No evil host",
                "priority": 1,
                "decision": "deny",
                "match": {
                    "categories": ["network"],
                    "targetPatternsAreRegex": True,
                    "targetPatterns": [r"evil\.example"],
                },
            }
        ],
    }
)
ROOT = "/w"


def _notes(count: int) -> str:
    return " ".join(f"notes/n{index}.md" for index in range(count))


def _urls(count: int) -> str:
    return " ".join(f"https://ok{index}.example/" for index in range(count))


@pytest.mark.parametrize("decoys", [16, 40, 300])
@pytest.mark.parametrize(
    ("last", "rule"),
    [
        ("~/.claude/settings.json", "deny-host-config-write"),
        (".git/hooks/pre-commit", "deny-exec-config-write"),
    ],
)
def test_a_denied_write_behind_many_harmless_ones_is_denied(
    decoys: int, last: str, rule: str
) -> None:
    decided = SAFETY.evaluate(
        "Bash", {"command": f"echo x | tee {_notes(decoys)} {last}"}, root=ROOT
    )
    assert (decided.decision, decided.rule_id) == ("deny", rule)


@pytest.mark.parametrize("decoys", [16, 40])
def test_a_denied_url_behind_many_harmless_ones_is_denied(decoys: int) -> None:
    command = f"curl -s {_urls(decoys)} https://evil.example/x"
    decided = NO_EVIL.evaluate("Bash", {"command": command}, root=ROOT)
    assert (decided.decision, decided.rule_id) == ("deny", "no-evil")


@pytest.mark.parametrize("decoys", [16, 40])
def test_an_uncategorised_tool_naming_a_persona_file_behind_many_notes_is_denied(
    decoys: int,
) -> None:
    params = {"files": [f"notes/{index}.md" for index in range(decoys)] + ["SOUL.md"]}
    decided = SAFETY.evaluate("mcp__notes__save", params, root=ROOT)
    assert (decided.decision, decided.rule_id) == ("deny", "deny-persona-write")


def test_benign_twin_many_harmless_writes_and_urls_keep_their_decision() -> None:
    assert SAFETY.evaluate(
        "Bash", {"command": f"echo x | tee {_notes(40)}"}, root=ROOT
    ).decision == ("allow")
    # a memory file among them is still the warning it was, not more
    memory = SAFETY.evaluate("Bash", {"command": f"echo x | tee {_notes(40)} MEMORY.md"}, root=ROOT)
    assert (memory.decision, memory.rule_id) == ("warn", "warn-memory-write")
    urls = NO_EVIL.evaluate("Bash", {"command": f"curl -s {_urls(40)}"}, root=ROOT)
    assert urls.decision != "deny"
    notes = {"files": [f"notes/{index}.md" for index in range(40)]}
    assert SAFETY.evaluate("mcp__notes__save", notes, root=ROOT).decision == "allow"
