"""Span bookkeeping of secret findings: nested findings dropped, overlapping ones merged."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import Field, replace
from typing import Any, ClassVar, Protocol, TypeVar


class Spanned(Protocol):
    """A finding as span readers see it: whose value, and where."""

    @property
    def fingerprint(self) -> str: ...
    @property
    def start(self) -> int: ...
    @property
    def end(self) -> int: ...


class _Finding(Protocol):
    """What these functions read of a finding (a frozen dataclass)."""

    __dataclass_fields__: ClassVar[dict[str, Field[Any]]]

    @property
    def fingerprint(self) -> str: ...
    @property
    def transform(self) -> str: ...
    @property
    def start(self) -> int: ...
    @property
    def end(self) -> int: ...


_F = TypeVar("_F", bound=_Finding)
#: What takes the place of a finding's span.
REDACTION = "[secret:{fingerprint}]"


def outermost(findings: Iterable[_F]) -> list[_F]:
    """The findings less those inside another finding of the same secret (a value's body
    inside the whole value)."""
    kept: list[_F] = []
    ends: dict[str, int] = {}
    for finding in sorted(findings, key=lambda f: (f.start, -f.end)):
        if finding.end <= ends.get(finding.fingerprint, -1) and finding.start < finding.end:
            continue
        ends[finding.fingerprint] = max(ends.get(finding.fingerprint, -1), finding.end)
        kept.append(finding)
    return kept


def merged(extra: list[_F], found: Iterable[_F]) -> Iterator[_F]:
    """The skeleton findings as one finding per stretch of a value (its overlapping parts
    merged, the longest hit's transform kept), less those inside a span already found."""
    if not extra:
        return
    covered: dict[str, list[tuple[int, int]]] = {}
    for finding in found:
        covered.setdefault(finding.fingerprint, []).append((finding.start, finding.end))
    extra.sort(key=lambda f: (f.fingerprint, f.start, -f.end))
    stretches: list[tuple[_F, _F]] = []  # (span so far, longest hit)
    for finding in extra:
        if stretches:
            current, longest = stretches[-1]
            if finding.fingerprint == current.fingerprint and finding.start < current.end:
                if finding.end - finding.start > longest.end - longest.start:
                    longest = finding
                stretches[-1] = (replace(current, end=max(current.end, finding.end)), longest)
                continue
        stretches.append((finding, finding))
    for current, longest in stretches:
        merged = replace(current, transform=longest.transform)
        spans = covered.get(merged.fingerprint, ())
        if not any(start <= merged.start and merged.end <= end for start, end in spans):
            yield merged


def redact_spans(text: str, findings: Iterable[_Finding], marker: str = REDACTION) -> str:
    """``text`` with each finding's span (overlapping spans merged) replaced by its marker."""
    spans = sorted((f.start, f.end, f.fingerprint) for f in findings if f.end > f.start)
    if not spans:
        return text
    parts: list[str] = []
    at = 0
    current_start, current_end, current_fp = spans[0]
    for start, end, fp in spans[1:]:
        if start < current_end:
            current_end = max(current_end, end)
            continue
        parts += [text[at:current_start], marker.format(fingerprint=current_fp)]
        at = current_end
        current_start, current_end, current_fp = start, end, fp
    parts += [text[at:current_start], marker.format(fingerprint=current_fp), text[current_end:]]
    return "".join(parts)
