"""The viewer's colours: one pair (text on background) per tone, each readable at WCAG AA.

A tone never stands alone: every coloured badge also carries its label (``DENIED``, ``FAIL``),
so a reader who cannot tell the colours apart loses nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

#: WCAG 2 AA minimum contrast for normal text.
MIN_CONTRAST: Final = 4.5


@dataclass(frozen=True)
class Tone:
    """Text colour on a background colour, plus a border that marks the tone on white."""

    text: str
    background: str
    border: str


#: ``ok`` (allowed, PASS), ``warn`` (warn, dry-run deny, notice, WARN), ``bad`` (denied,
#: blocked, quarantine, FAIL), ``info`` (lifts and other records), ``plain`` (page text).
TONES: Final[dict[str, Tone]] = {
    "ok": Tone("#0a5a23", "#e3f4e8", "#2e8b4f"),
    "warn": Tone("#6b4000", "#fff1cc", "#c98a00"),
    "bad": Tone("#9b1020", "#fde6e8", "#d1293d"),
    "info": Tone("#0b4a8b", "#e4eefb", "#3b7dd8"),
    "plain": Tone("#1f2328", "#ffffff", "#d0d7de"),
}

#: Solid verdict badges (white text on a strong colour), as the overview table shows them.
VERDICT_TONES: Final[dict[str, Tone]] = {
    "PASS": Tone("#ffffff", "#1a7335", "#1a7335"),
    "WARN": Tone("#1f1300", "#f2b200", "#c98a00"),
    "FAIL": Tone("#ffffff", "#b3152a", "#b3152a"),
}


def _channel(value: int) -> float:
    c = value / 255
    return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4


def luminance(colour: str) -> float:
    """WCAG relative luminance of a ``#rrggbb`` colour."""
    text = colour.lstrip("#")
    if len(text) != 6:
        raise ValueError(f"not a #rrggbb colour: {colour!r}")
    red, green, blue = (int(text[i : i + 2], 16) for i in (0, 2, 4))
    return 0.2126 * _channel(red) + 0.7152 * _channel(green) + 0.0722 * _channel(blue)


def contrast(foreground: str, background: str) -> float:
    """WCAG contrast ratio of two ``#rrggbb`` colours (1 to 21)."""
    first, second = sorted((luminance(foreground), luminance(background)), reverse=True)
    return (first + 0.05) / (second + 0.05)
