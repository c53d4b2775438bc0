"""The bypass corpus (``bypass_corpus.yaml``) and its table in docs/security.md.

    python tests/reliability/bypass_table.py           # print the table
    python tests/reliability/bypass_table.py --write   # replace it in docs/security.md

The page "Security: what ``safety`` catches" holds exactly this table and, below it,
the legend of the outcomes the section's text does not explain; ``test_bypass_corpus.py`` fails
when they differ.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

CORPUS = Path(__file__).resolve().parent / "bypass_corpus.yaml"
OUTCOMES = ("caught", "flagged", "documented limit", "benign")
#: What stopped a caught or flagged attempt: the gate's reading of the call before it ran
#: (``text``), the workspace effect the call had (``effect``), or a secret found in an output or
#: an outgoing payload (``output``).
CAUGHT_BY = ("text", "effect", "output", "containment")
#: The outcomes beyond the two the README's prose explains, as the line below the table says.
LEGEND = (
    "**flagged**: warned — the call runs, and the session's verdict is WARN and the immune "
    "ladder counts it. **benign**: an ordinary command that must stay allowed (a false positive "
    "would fail the test). **open**: not reached yet — the row's test expects the outcome named "
    "in parentheses and is an expected failure until the product gives it. **caught by**: "
    "*text* — the gate read the call and refused or flagged it before it ran; *effect* — it ran, "
    "and what it did to the workspace (files deleted, a protected file changed) decided the "
    "verdict; *output* — a secret in its output or in an outgoing payload was found (and "
    "redacted or refused where the door can still change it); *containment* — a process the "
    "call started to act after it was ended with the call, and what it aimed at is untouched."
)
README = Path(__file__).resolve().parents[2] / "docs" / "security.md"
SECTION = "# Security: what `safety` catches"
HEADER = (
    "| against | evasion | attempt | outcome | caught by | how |",
    "|---|---|---|---|---|---|",
)
_PRIMARY = ("command", "file_path", "path", "pattern", "revision", "text")


@dataclass(frozen=True)
class Step:
    """One call of a row: a tool and its parameters (``send``: a message ``{to, text}``)."""

    tool: str
    params: dict[str, Any]


@dataclass(frozen=True)
class Attempt:
    """One row of the corpus (the YAML header explains the fields)."""

    against: str
    evasion: str
    tool: str
    params: dict[str, Any]
    expect: dict[str, Any]
    outcome: str
    how: str
    attempt: str | None = None
    caught_by: str | None = None
    run: bool = False
    before: tuple[Step, ...] = ()
    setup: dict[str, str] = field(default_factory=dict)
    #: The owner's uncommitted edits: text appended to each file after ``setup`` is committed.
    uncommitted: dict[str, str] = field(default_factory=dict)
    pending: bool = False
    why_pending: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(
            self,
            "before",
            tuple(step if isinstance(step, Step) else Step(**step) for step in self.before),
        )

    @property
    def runs(self) -> bool:
        """Whether the row is run through the harness (else only decided)."""
        return self.run or "status" in self.expect or bool(self.before or self.uncommitted)

    @property
    def steps(self) -> tuple[Step, ...]:
        """Every call of the row, the attempt last."""
        return (*self.before, Step(self.tool, self.params))

    @property
    def test_id(self) -> str:
        """A readable pytest id."""
        value = next((str(self.params[k]) for k in _PRIMARY if k in self.params), "")
        return f"{self.tool} {value}"[:60]

    def display(self) -> str:
        """The attempt as the table shows it (markdown)."""
        if self.attempt is not None:
            return self.attempt
        value = next(str(self.params[k]) for k in _PRIMARY if k in self.params)
        shown = _code(value.replace("\n", "\\n"))  # a table row is one line
        return shown if self.tool == "Bash" else f"{self.tool} {shown}"

    def row(self) -> str:
        """The markdown table row."""
        if self.pending:
            outcome = f"**open** ({self.outcome})"
            caught_by = "—"
            how = f"not yet: {self.why_pending}" if self.why_pending else self.how
        else:
            outcome = f"**{self.outcome}**"
            caught_by = self.caught_by or "—"
            how = self.how
        cells = (self.against, self.evasion, self.display(), outcome, caught_by, how)
        return "| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |"


def _code(text: str) -> str:
    """A markdown code span that may itself contain backticks."""
    if "`" in text:
        return f"`` {text} ``"
    return f"`{text}`"


def load_corpus(path: Path = CORPUS) -> list[Attempt]:
    """The corpus rows, in file order."""
    # libyaml's parser when present: the corpus is read at collection by every test process
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    rows = yaml.load(path.read_text(encoding="utf-8"), Loader=loader)
    return [Attempt(**row) for row in rows]


def table(rows: list[Attempt] | None = None) -> list[str]:
    """The README table's lines."""
    return [*HEADER, *(row.row() for row in (rows if rows is not None else load_corpus()))]


def legend() -> str:
    """The line below the table explaining the outcomes and the "caught by" column."""
    return LEGEND


def write_readme(path: Path = README) -> None:
    """Replace the table (and the legend line below it) in the README's security section."""
    lines = path.read_text(encoding="utf-8").split("\n")
    start = next(
        i
        for i in range(lines.index(SECTION), len(lines))
        if lines[i].startswith("| against |")  # the table's first line
    )
    end = start
    while end < len(lines) and lines[end].startswith("|"):
        end += 1
    if end + 1 < len(lines) and lines[end] == "" and lines[end + 1].startswith("**flagged**"):
        end += 2  # the legend written last time
    lines[start:end] = [*table(), "", legend()]
    path.write_text("\n".join(lines), encoding="utf-8")


if __name__ == "__main__":
    import sys

    if sys.argv[1:] == ["--write"]:
        write_readme()
    else:
        print("\n".join(table()))
        print()
        print(legend())
