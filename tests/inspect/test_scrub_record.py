"""Scrubbing a record's fields: each distinct text scanned once, the result byte for byte what
scrubbing each field alone with the full scan gives."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_harness_audit.inspect import Inspector, _matcher, _substitution
from pytest_harness_audit.inspect.outputs import joined_scanner, scan_value
from pytest_harness_audit.inspect.secrets import ScanResult, SecretRegistry, fingerprint
from pytest_harness_audit.session.harness import Harness
from tests.inspect import scrub_corpus as corpus

EXPECTED: dict[str, str] = json.loads(corpus.EXPECTED.read_text())
CASES = corpus.cases()


def _registry() -> SecretRegistry:
    registry = SecretRegistry()
    for label, value in corpus.SECRETS.items():
        registry.add(value, label)
    return registry


REGISTRY = _registry()


@pytest.fixture(scope="module")
def inspector(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Inspector]:
    root = tmp_path_factory.mktemp("scrub")
    with Inspector(root, secrets=REGISTRY, learn=False, live=False) as inspector:
        yield inspector


def _full_scan(registry: SecretRegistry, leaf: str | bytes, budget: int) -> ScanResult:
    """The scan as it was: every chunk's tails worked out, as a stream's scan does; then the
    same pass over the scanned text for values written through a substitution or a codebook
    that a one-shot scan makes (:meth:`SecretRegistry.scan`)."""
    result = registry._scan(leaf, {}, budget, carry_out=True)
    if len(result.text) > _substitution.SHAPE_SCAN:
        return result
    return registry._with_runs(result, "", shapes=True)


def _old_scrub(registry: SecretRegistry, value: Any) -> Any:
    """The oracle: a field scrubbed alone (``scan_output``), each leaf by the full scan, its
    leaves read joined too."""
    scan = scan_value(
        value,
        lambda leaf, where, budget: _full_scan(registry, leaf, budget),
        whole=joined_scanner(registry),
    )
    return scan.redacted if scan.findings else value


def _old_record(registry: SecretRegistry, fields: Sequence[Any]) -> str:
    params, target, error, targets = fields
    scrubbed = (
        _old_scrub(registry, params),
        _old_scrub(registry, target),
        _old_scrub(registry, error),
        tuple(_old_scrub(registry, list(targets))),
    )
    return repr(scrubbed)


def _new_record(inspector: Inspector, fields: Sequence[Any]) -> str:
    params, target, error, targets = fields
    new = inspector.scrubbed((params, target, error, list(targets)))
    return repr((new[0], new[1], new[2], tuple(new[3])))


def test_the_corpus_covers_every_form_and_redacts() -> None:
    assert len(EXPECTED) == len(CASES)
    redacted = [name for name, text in EXPECTED.items() if "[secret:" in text]
    assert len(redacted) > 0.8 * len(CASES)
    for name, text in EXPECTED.items():
        if "/plain/" in name:
            assert "[secret:" in text, name


@pytest.mark.parametrize(("name", "fields"), CASES[::23], ids=[name for name, _ in CASES[::23]])
def test_a_sample_of_the_corpus_is_scrubbed_as_before(
    inspector: Inspector, name: str, fields: corpus.Fields
) -> None:
    assert _new_record(inspector, fields) == EXPECTED[name]


# A value one leaf holds, read on past the join into the next leaf by the joined reading,
# once redacted those neighbours too: a mapping's keys became one marker and an entry was lost.
_NEIGHBOURS = [
    "API_KEY/utf16-le base64/bytes",
    "PEM/utf16-le base64/bytes",
    "PEM/first half/command",
    "PEM/first half/key",
    "PEM/first half/bytes",
]


@pytest.mark.parametrize("name", _NEIGHBOURS)
def test_a_value_one_leaf_holds_leaves_its_neighbours_alone(
    inspector: Inspector, name: str
) -> None:
    fields = dict(CASES)[name]
    assert _new_record(inspector, fields) == EXPECTED[name]


@pytest.mark.slow
def test_the_whole_corpus_is_scrubbed_as_before(inspector: Inspector) -> None:
    wrong = [name for name, fields in CASES if _new_record(inspector, fields) != EXPECTED[name]]
    assert wrong == []


@pytest.mark.slow
def test_the_oracle_gives_the_stored_expectations() -> None:
    wrong = [name for name, fields in CASES if _old_record(REGISTRY, fields) != EXPECTED[name]]
    assert wrong == []


_FORMS = [text for value in corpus.SECRETS.values() for text in corpus.forms(value).values()]
_FILLER = st.text(
    st.sampled_from([*"abcxyz019 -_./%+\\&#;:=\n\x00", "é", "ｓ", "\u200b", "ﷺ", "¼"]),
    max_size=12,
)
_TEXT = st.lists(st.one_of(st.sampled_from(_FORMS), _FILLER), min_size=1, max_size=3).map("".join)


@st.composite
def _fields(draw: st.DrawFn) -> tuple[Any, Any, Any, tuple[Any, ...]]:
    """A record's four fields, the same texts often in several of them."""
    pool = draw(st.lists(_TEXT, min_size=1, max_size=4))
    text = st.sampled_from(pool)
    leaf = st.one_of(text, text.map(lambda t: t.encode("utf-8", "surrogatepass")), st.none())
    value = st.recursive(
        leaf,
        lambda inner: st.one_of(
            st.lists(inner, max_size=3),
            st.lists(inner, max_size=3).map(tuple),
            st.dictionaries(text, inner, max_size=3),
        ),
        max_leaves=6,
    )
    params = draw(st.dictionaries(text, value, max_size=3))
    target = draw(st.one_of(st.none(), text))
    error = draw(st.one_of(st.none(), text))
    targets = tuple(draw(st.lists(text, max_size=3)))
    return params, target, error, targets


_QUICK = settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
_MANY = settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _same_record(inspector: Inspector, fields: corpus.Fields) -> None:
    assert _new_record(inspector, fields) == _old_record(REGISTRY, fields)


@_QUICK
@given(fields=_fields())
def test_scrubbing_a_record_at_once_is_scrubbing_each_field_alone(
    inspector: Inspector, fields: corpus.Fields
) -> None:
    _same_record(inspector, fields)


@pytest.mark.slow
@_MANY
@given(fields=_fields())
def test_scrubbing_a_record_at_once_many_examples(
    inspector: Inspector, fields: corpus.Fields
) -> None:
    _same_record(inspector, fields)


_SCANNED = st.lists(st.one_of(st.sampled_from(_FORMS), _FILLER), min_size=1, max_size=6).map(
    "".join
)


def _same_scan(text: str, chunk: int, budget: int) -> None:
    """Chunks small enough that a text spans several, budgets small enough to cut its middle:
    the one-shot scan (no tails worked out past its last chunk) finds what the full one does."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_matcher, "CHUNK", chunk)
        for size in (budget, 1 << 20):
            assert REGISTRY.scan(text, budget=size) == _full_scan(REGISTRY, text, size)


@_QUICK
@given(text=_SCANNED, chunk=st.integers(8, 96), budget=st.integers(16, 400))
def test_a_one_shot_scan_finds_what_the_full_scan_finds(text: str, chunk: int, budget: int) -> None:
    _same_scan(text, chunk, budget)


@pytest.mark.slow
@_MANY
@given(text=_SCANNED, chunk=st.integers(8, 96), budget=st.integers(16, 400))
def test_a_one_shot_scan_many_examples(text: str, chunk: int, budget: int) -> None:
    _same_scan(text, chunk, budget)


class _CountingRegistry(SecretRegistry):
    def __init__(self) -> None:
        super().__init__()
        self.scanned: list[str | bytes] = []

    def scan(self, data: str | bytes, *, budget: int = 1 << 22) -> ScanResult:
        self.scanned.append(data)
        return super().scan(data, budget=budget)


def test_each_distinct_text_of_a_record_is_scanned_once(tmp_path: Path) -> None:
    registry = _CountingRegistry()
    registry.add(corpus.KEY, "API_KEY")
    path = f"notes/{corpus.KEY}.txt"
    with Inspector(tmp_path, secrets=registry, learn=False, live=False) as inspector:
        params, target, error, targets = inspector.scrubbed(
            ({"file_path": path}, path, None, [path, "README.md", path])
        )
    mark = f"notes/[secret:{fingerprint(corpus.KEY)}].txt"
    assert (params, target, error, targets) == (
        {"file_path": mark},
        mark,
        None,
        [mark, "README.md", mark],
    )
    assert sorted(map(str, registry.scanned)) == sorted(["file_path", path, "README.md"])


def test_a_secret_added_meanwhile_is_scanned_for(tmp_path: Path) -> None:
    """A value added while a record is scrubbed: later fields are scanned anew, not reused."""

    class Learning(SecretRegistry):
        def scan(self, data: str | bytes, *, budget: int = 1 << 22) -> ScanResult:
            result = super().scan(data, budget=budget)
            self.add(corpus.HOOK, "WEBHOOK")  # e.g. another thread learning a read file
            return result

    registry = Learning()
    with Inspector(tmp_path, secrets=registry, learn=False, live=False) as inspector:
        first, second = inspector.scrubbed((corpus.HOOK, corpus.HOOK))
    assert first == corpus.HOOK  # scanned before the value was known
    assert second == f"[secret:{fingerprint(corpus.HOOK)}]"


@pytest.mark.slow
def test_a_record_in_the_chain_holds_no_secret_in_any_field(tmp_path: Path) -> None:
    harness = Harness.create(tmp_path, template="python-service", policy="safety")
    key = "sk-test-4f9a1c2e7b3d8a6f0e5c9b2a1d7e3f8c"  # the template's API_KEY
    result = harness.call("Read", file_path=f"notes/{key}.md")
    mark = f"[secret:{fingerprint(key)}]"
    chain = (harness.storage_dir / "audit" / f"{harness.session_id}.jsonl").read_text()
    assert key not in chain and mark in chain
    assert result.record["target"] == f"notes/{mark}.md"
    harness.close()
