"""Stored sessions for the viewer tests, and a small DOM reader over the written page."""

from __future__ import annotations

from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

from pytest_harness_audit.session.harness import Harness

#: A parameter an agent controls that must reach the page escaped.
HOSTILE = "<script>alert(1)</script>"


@dataclass(frozen=True)
class StoredRun:
    """A storage directory with three sessions: clean, denied and quarantined-then-lifted."""

    storage: Path
    clean: str
    denied: str
    quarantined: str

    @property
    def sessions(self) -> list[str]:
        """Every session id."""
        return [self.clean, self.denied, self.quarantined]


def make_run(base: Path) -> StoredRun:
    """Play the three sessions into ``base/store``."""
    storage = base / "store"

    def session(name: str) -> Harness:
        return Harness.create(
            base / name, template="python-service", storage_dir=storage, session_id=name
        )

    clean = session("clean")
    clean.call("Read", file_path="README.md")
    clean.call("Grep", pattern=HOSTILE, path="app")
    clean.close()
    denied = session("denied")
    denied.call("Read", file_path="README.md")
    denied.call("Bash", command="rm -rf /")
    denied.close()
    quarantined = session("quarantined")
    quarantined.run_script("retry-loop")
    quarantined.lift(reason="flaky command fixed; resuming")
    quarantined.call("Read", file_path="README.md")
    quarantined.close()
    return StoredRun(storage, "clean", "denied", "quarantined")


@dataclass
class Element:
    """One element of the page: tag, attributes, text inside it (children included)."""

    tag: str
    attrs: dict[str, str]
    text: str = ""
    parents: tuple[str, ...] = ()
    classes: set[str] = field(default_factory=set)


class Dom(HTMLParser):
    """Every element of a page, in document order, with its text and its ancestors' tags."""

    VOID = frozenset({"meta", "link", "br", "img", "input", "hr", "circle", "line", "rect"})

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.elements: list[Element] = []
        self._open: list[Element] = []
        self.feed(text)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {k: v or "" for k, v in attrs}
        element = Element(
            tag,
            values,
            parents=tuple(e.tag for e in self._open),
            classes=set(values.get("class", "").split()),
        )
        self.elements.append(element)
        if tag not in self.VOID:
            self._open.append(element)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)
        if tag not in self.VOID:
            self._open.pop()

    def handle_endtag(self, tag: str) -> None:
        for index in range(len(self._open) - 1, -1, -1):
            if self._open[index].tag == tag:
                del self._open[index:]
                return

    def handle_data(self, data: str) -> None:
        for element in self._open:
            element.text += data

    def find(self, tag: str | None = None, cls: str | None = None, **attrs: str) -> list[Element]:
        """Elements with this tag, class and attribute values (``data_x`` for ``data-x``)."""
        wanted = {k.replace("_", "-"): v for k, v in attrs.items()}
        return [
            e
            for e in self.elements
            if (tag is None or e.tag == tag)
            and (cls is None or cls in e.classes)
            and all(e.attrs.get(k) == v for k, v in wanted.items())
        ]

    def within(self, section: Element) -> list[Element]:
        """The elements inside ``section`` (by position in document order)."""
        start = self.elements.index(section)
        depth = len(section.parents)
        inside: list[Element] = []
        for element in self.elements[start + 1 :]:
            if len(element.parents) <= depth:
                break
            inside.append(element)
        return inside
