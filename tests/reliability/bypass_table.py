"""The bypass corpus (``bypass_corpus.yaml``) and its README table.

    python tests/reliability/bypass_table.py     # print the table for the README

The README's section "Security: what ``safety`` catches" holds exactly this table;
``test_bypass_corpus.py`` fails when the two differ.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

CORPUS = Path(__file__).resolve().parent / "bypass_corpus.yaml"
OUTCOMES = ("caught", "documented limit")
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


if __name__ == "__main__":
    print("\n".join(table()))
