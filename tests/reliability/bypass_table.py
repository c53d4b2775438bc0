"""The bypass corpus (``bypass_corpus.yaml``) and its README table.

    python tests/reliability/bypass_table.py           # print the table for the README
    python tests/reliability/bypass_table.py --write   # replace it in README.md

The README's section "Security: what ``safety`` catches" holds exactly this table and, below it,
the legend of the outcomes the section's text does not explain; ``test_bypass_corpus.py`` fails
when they differ.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

CORPUS = Path(__file__).resolve().parent / "bypass_corpus.yaml"
OUTCOMES = ("caught", "flagged", "documented limit", "benign")
#: The outcomes beyond the two the README's prose explains, as the line below the table says.
LEGEND = (
    "**flagged**: warned — the call runs, and the session's verdict is WARN and the immune "
    "ladder counts it. **benign**: an ordinary command that must stay allowed (a false positive "
    "would fail the test)."
)
README = Path(__file__).resolve().parents[2] / "README.md"
SECTION = "## Security: what `safety` catches"
HEADER = ("| against | evasion | attempt | outcome | how |", "|---|---|---|---|---|")
_PRIMARY = ("command", "file_path", "path", "pattern")


@dataclass(frozen=True)
class Attempt:
    """One row of the corpus."""

    against: str
    evasion: str
    tool: str
    params: dict[str, Any]
    expect: dict[str, Any]
    outcome: str
    how: str
    attempt: str | None = None

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
        shown = _code(value)
        return shown if self.tool == "Bash" else f"{self.tool} {shown}"

    def row(self) -> str:
        """The markdown table row."""
        cells = (self.against, self.evasion, self.display(), f"**{self.outcome}**", self.how)
        return "| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |"


def _code(text: str) -> str:
    """A markdown code span that may itself contain backticks."""
    if "`" in text:
        return f"`` {text} ``"
    return f"`{text}`"


def load_corpus(path: Path = CORPUS) -> list[Attempt]:
    """The corpus rows, in file order."""
    rows = yaml.safe_load(path.read_text(encoding="utf-8"))
    return [Attempt(**row) for row in rows]


def table(rows: list[Attempt] | None = None) -> list[str]:
    """The README table's lines."""
    return [*HEADER, *(row.row() for row in (rows if rows is not None else load_corpus()))]


def legend() -> str:
    """The line below the table explaining the outcomes ``flagged`` and ``benign``."""
    return LEGEND


def write_readme(path: Path = README) -> None:
    """Replace the table (and the legend line below it) in the README's security section."""
    lines = path.read_text(encoding="utf-8").split("\n")
    start = next(
        i
        for i in range(lines.index(SECTION), len(lines))
        if lines[i] == HEADER[0]  # the table's first line
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
