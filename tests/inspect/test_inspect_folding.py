"""Secrets written with Unicode look-alikes, and values reassembled from fragments of sends."""

from __future__ import annotations

import pytest

from pytest_harness_audit.inspect import _fold, _matcher
from pytest_harness_audit.inspect._fragments import MIN_FRAGMENT
from pytest_harness_audit.inspect.secrets import SecretRegistry, fingerprint

KEY = "sk-test-4f9a1c2e7b3d8a6f0e5c9b2a1d7e3f8c"
MARK = f"[secret:{fingerprint(KEY)}]"


@pytest.fixture
def registry() -> SecretRegistry:
    registry = SecretRegistry()
    registry.add(KEY, "API_KEY")
    return registry


def _fullwidth(text: str) -> str:
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in text)


LOOK_ALIKES = {
    "fullwidth": _fullwidth(KEY),
    "fullwidth-upper": _fullwidth(KEY.upper()),
    "zero-width-space": "\u200b".join(KEY),
    "zero-width-joiners": KEY[:10] + "\u200c\u200d" + KEY[10:20] + "\u2060" + KEY[20:],
    "byte-order-marks": "\ufeff".join(KEY),
    "soft-hyphens": "\u00ad".join(KEY),
    "hyphen-u2010": KEY.replace("-", "\u2010"),
    "minus-u2212": KEY.replace("-", "\u2212"),
    "en-dash": KEY.replace("-", "\u2013"),
    "cyrillic-a-e": KEY.replace("a", "\u0430").replace("e", "\u0435"),
    "combining-strokes": "\u0336".join(KEY),
    "direction-marks": "\u200e".join(KEY),
    "mixed": _fullwidth(KEY[:12]) + "\u200b" + KEY[12:30].replace("-", "\u2011") + KEY[30:],
}


@pytest.mark.parametrize("form", LOOK_ALIKES.values(), ids=LOOK_ALIKES.keys())
def test_a_look_alike_form_is_found_and_redacted_exactly(
    registry: SecretRegistry, form: str
) -> None:
    text = f"before «{form}» after"
    result = registry.scan(text)
    assert [f.transform for f in result.findings] == ["unicode_folded"]
    assert result.redacted() == f"before «{MARK}» after"


@pytest.mark.parametrize("form", LOOK_ALIKES.values(), ids=LOOK_ALIKES.keys())
def test_a_look_alike_split_over_two_sends(registry: SecretRegistry, form: str) -> None:
    stream = registry.stream()
    half = len(form) // 2
    assert not stream.scan(form[:half]).findings
    assert stream.scan(form[half:]).findings


def test_a_secret_learned_in_a_look_alike_form_matches_the_plain_one() -> None:
    registry = SecretRegistry()
    registry.add(_fullwidth("tok-9f8e7d6c5b4a"), "odd")
    assert registry.scan("x tok-9f8e7d6c5b4a y").findings


@pytest.mark.parametrize(
    "text",
    [
        "naïve café — résumé ｆｕｌｌｗｉｄｔｈ text",
        "sk\u2010test\u2010only and 4f9a1c2e",
        "Привет, мир: ключ не здесь",
        "\u200b" * 100,
    ],
)
def test_ordinary_unicode_text_is_no_finding(registry: SecretRegistry, text: str) -> None:
    assert not registry.scan(text).findings


def test_the_fold_is_per_character() -> None:
    text = "Ａ\u200bb‐ﬁ Ⅻ é"
    folded = _fold.fold(text)
    assert folded == "ab-fi xii e"
    assert "".join(_fold.fold(c) for c in text) == folded
    assert _matcher.normalise(text) == "ab-fixiie"
    positions = _fold.fold_positions(text)
    assert len(positions) == len(_matcher.normalise(text))
    assert [text[p] for p in positions] == ["Ａ", "b", "‐", "ﬁ", "ﬁ", "Ⅻ", "Ⅻ", "Ⅻ", "é"]


# -- fragments with other text between them ---------------------------------------------------
def test_two_parts_with_chatter_between(registry: SecretRegistry) -> None:
    stream = registry.stream()
    assert not stream.scan(f"part 1: {KEY[:20]}").findings
    result = stream.scan(f"part 2: {KEY[20:]} (join them)")
    assert [f.transform for f in result.findings] == ["fragment+split"]
    assert result.redacted() == f"part 2: {MARK} (join them)"


def test_the_second_part_first(registry: SecretRegistry) -> None:
    stream = registry.stream()
    assert not stream.scan(f"the end is {KEY[17:]}").findings
    assert stream.scan(f"and it begins {KEY[:17].upper()}, ok?").findings


def test_both_parts_in_one_text_are_both_redacted(registry: SecretRegistry) -> None:
    result = registry.stream().scan(f"a={KEY[:16]} and b={KEY[16:]}")
    assert result.redacted() == f"a={MARK} and b={MARK}"


@pytest.mark.parametrize("chatter", [6, 9, 300])
def test_parts_sends_apart_are_found_however_many(registry: SecretRegistry, chatter: int) -> None:
    stream = registry.stream()
    stream.scan(f"first {KEY[:24]}")
    for number in range(chatter):
        assert not stream.scan(f"chatter {number}: lunch at noon?").findings
    assert stream.scan(f"last {KEY[24:]}").findings


def test_a_long_stream_remembers_cuts_not_texts(registry: SecretRegistry) -> None:
    stream = registry.stream()
    for number in range(8):  # every distinct text of the stream, once
        stream.scan(f"chatter {number} {KEY[: 10 + number]}")
    distinct = len(stream._memory.seen)
    for number in range(500):
        stream.scan(f"chatter {number} {KEY[: 10 + number % 8]}")
    assert 0 < len(stream._memory.seen) == distinct


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("we test sk-test- keys", "the test suite passed"),  # a shared prefix, no complement
        (f"prefix {KEY[:20]}", f"not the rest {KEY[21:]}"),  # not the same cut
        # too short (the tail first: a head as short leaves the body, the secret, whole)
        (f"short {KEY[1 - MIN_FRAGMENT :]}", f"rest {KEY[: 1 - MIN_FRAGMENT]}"),
        (f"tail first {KEY[20:]}", "then something else entirely"),
        ("the word 'sk-test-4' and", "'f9a1c2e7' are mere words"),
    ],
)
def test_benign_pairs_of_texts(registry: SecretRegistry, first: str, second: str) -> None:
    stream = registry.stream()
    assert not stream.scan(first).findings
    assert not stream.scan(second).findings


def test_output_scans_do_not_join_fragments(registry: SecretRegistry) -> None:
    assert not registry.scan(f"a={KEY[:16]} and b={KEY[16:]}").findings


@pytest.mark.slow
def test_a_text_repeating_a_prefix_is_bounded(registry: SecretRegistry) -> None:
    stream = registry.stream()
    stream.scan((KEY[:20] + " ") * 50_000)
    assert stream.scan(KEY[20:]).findings


# -- three parts ---------------------------------------------------------------------------------
def test_three_parts_with_chatter_between(registry: SecretRegistry) -> None:
    stream = registry.stream()
    assert not stream.scan(f"key part one: {KEY[:16]}").findings
    assert not stream.scan(f"then {KEY[16:28]}").findings  # a middle after the prefix: not yet
    result = stream.scan(f"and {KEY[28:]} to finish")
    assert [f.transform for f in result.findings] == ["fragment+split"]
    assert result.redacted() == f"and {MARK} to finish"


def test_three_parts_in_reverse_order(registry: SecretRegistry) -> None:
    stream = registry.stream()
    stream.scan(f"last: {KEY[28:]}")
    stream.scan(f"middle: {KEY[16:28]}")
    assert stream.scan(f"first: {KEY[:16]}").findings


def test_three_parts_in_one_text(registry: SecretRegistry) -> None:
    result = registry.stream().scan(f"a {KEY[:16]} b {KEY[16:28]} c {KEY[28:]}")
    assert result.findings
    assert KEY[28:] not in result.redacted()


@pytest.mark.parametrize(
    "texts",
    [
        (f"x {KEY[:16]}", f"y {KEY[16:28]}", "nothing more"),  # no suffix
        (f"x {KEY[16:28]}", f"y {KEY[28:]}"),  # no prefix: a middle and a suffix
        (f"x {KEY[:16]}", f"y {KEY[17:28]}", f"z {KEY[28:]}"),  # a character missing
    ],
)
def test_parts_that_do_not_make_the_value(registry: SecretRegistry, texts: tuple[str, ...]) -> None:
    stream = registry.stream()
    assert not any(stream.scan(text).findings for text in texts)
