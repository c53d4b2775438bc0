"""The PowerShell reading scans a run of separators or of unclosed quotes once, not once from
each of them: the same text as the former expressions, and 8,000 newlines (16 seconds) or
30,000 unclosed ``"`` read in time that grows with the command."""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_harness_audit.policy import Policy
from pytest_harness_audit.policy.shell import (
    powershell,
    powershell_dotnet,
    powershell_pipes,
    powershell_words,
)
from pytest_harness_audit.policy.shell.quoted_spans import sub_quoted

_FORMER_PREFIX = r"(^|[;|{(\n]\s*)"
_TEXT = st.text(alphabet="\n \t;|{(&.$x=[]\\-'\"`,Ab", max_size=30)


def _former(expression: re.Pattern[str]) -> re.Pattern[str]:
    pattern = expression.pattern.replace("(^|[;|{(\\n][^\\S\\n]*)", _FORMER_PREFIX)
    pattern = pattern.replace("(^|[;|&{(\\n][^\\S\\n]*)", r"(^|[;|&{(\n]\s*)")
    assert pattern != expression.pattern
    return re.compile(pattern, expression.flags)


_STATEMENT_STARTS = [
    (powershell._ASSIGNMENT, lambda m: m.group(1)),
    (powershell._CALL_OPERATOR, lambda m: m.group(1)),
    (powershell._MODULE_QUALIFIED, lambda m: m.group(1)),
    (powershell._STATEMENT_CMDLET, lambda m: m.group(1) + m.group(2).lower()),
]


@settings(max_examples=2000, deadline=None)
@given(_TEXT, st.sampled_from(["", "Remove-Item", "a\\Get-Item", "$a = ls", "& ls"]))
def test_statement_starts_rewrite_as_before(text: str, word: str) -> None:
    text = text + word + text[::-1]
    for expression, replace in _STATEMENT_STARTS:
        assert expression.sub(replace, text) == _former(expression).sub(replace, text)


@settings(max_examples=3000, deadline=None)
@given(_TEXT)
def test_quotes_are_blanked_as_before(text: str) -> None:
    for expression in (powershell._QUOTED, powershell_dotnet._QUOTES):
        blank = lambda m: "<" + " " * len(m.group()) + ">"  # noqa: E731
        assert sub_quoted(expression, blank, text) == expression.sub(blank, text)


def _prefix_reach(prefix: str, text: str) -> int:
    """Characters the statement-start prefix covers, tried from every place of ``text``."""
    expression = re.compile(prefix)
    return sum(
        m.end() - start for start in range(len(text)) if (m := expression.match(text, start))
    )


def test_a_run_of_newlines_is_covered_once() -> None:
    text = "echo" + "\n" * 2_000
    new_prefix = powershell._CALL_OPERATOR.pattern.split(")")[0] + ")"
    assert _prefix_reach(new_prefix, text) <= 2 * len(text)
    assert _prefix_reach(_FORMER_PREFIX, text) > 500 * len(text)  # the count tells them apart


class _Counted:
    """An expression that counts the places it is tried from."""

    def __init__(self, expression: re.Pattern[str]) -> None:
        self.expression, self.tries, self.failed = expression, 0, 0

    def match(self, text: str, start: int) -> Any:
        self.tries += 1
        found = self.expression.match(text, start)
        self.failed += found is None
        return found


@pytest.mark.parametrize("text", ['"`' * 3_000, "`\"'" * 3_000, "'a" * 3_000 + '"`"'])
def test_each_kind_of_quote_fails_once(text: str) -> None:
    counted = _Counted(powershell_dotnet._QUOTES)
    blank = lambda m: " " * len(m.group())  # noqa: E731
    assert sub_quoted(counted, blank, text) == powershell_dotnet._QUOTES.sub(blank, text)  # type: ignore[arg-type]
    assert counted.failed <= 2


@pytest.mark.parametrize(
    "command",
    [
        "\n" * 8_000 + "Get-Content .env",
        '"`' * 20_000 + "\nGet-Content .env",
        "\n" * 4_000 + "$x = Get-Content .env",
        "& { " + "\n" * 4_000 + "Get-Content '.env' }",
    ],
)
def test_the_secret_is_still_named(command: str) -> None:
    decision = Policy.preset("safety").evaluate("PowerShell", {"command": command}).decision
    assert decision in {"deny", "warn"}


def test_a_listing_of_many_paths_reads_its_filters_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """``gci`` with thousands of paths (``ls `⏎`` 4,000 times: 35 seconds) reads its
    ``-Filter`` and the like once, not once for each path."""
    calls = [0]
    named = powershell_words.named

    def counted(words: Any, *names: str) -> Any:
        calls[0] += 1
        return named(words, *names)

    monkeypatch.setattr(powershell_pipes, "named", counted)
    safety = Policy.preset("safety")
    assert safety.evaluate("PowerShell", {"command": "ls `\n" * 1_000}).decision == "warn"
    assert calls[0] <= 50
    command = "Get-ChildItem app docs -Filter *.env -Recurse | Get-Content"
    assert safety.evaluate("PowerShell", {"command": command}).decision == "deny"
