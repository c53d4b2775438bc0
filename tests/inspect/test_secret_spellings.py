"""A known secret with a few characters changed, or written through a character substitution.

* A *near copy* — one changed character per eight at most, or one dropped or added — is found
  in any text when it covers the whole of the key's secret part, and in a payload about to
  leave when it covers a long enough part of it (as runs are, :mod:`._runs`); the copy's span
  is what redaction replaces.
* A Caesar shift of the key's hex digits or letters and digits (any amount), atbash, XOR with one
  constant: the key's forms. Any other one-to-one substitution is found in a payload about to
  leave by the key's shape.
* Look-alikes are no finding: prose and code, other hex (commit ids, UUIDs, other keys of the
  key's length), the vendor prefix, a digest of the key, runs of one character, base64 of other
  data, long numbers; and no random string of the key's length, and no source file of this
  project, gives one.
"""

from __future__ import annotations

import base64
import hashlib
import itertools
import random
import string
import uuid
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_harness_audit.inspect import _near, _substitution
from pytest_harness_audit.inspect.secrets import SecretRegistry

KEY = "sk-test-4f9a1c2e7b3d8a6f0e5c9b2a1d7e3f8c"
BODY = KEY[len("sk-test-") :]
TOKEN = "ghp_R8x2Kq7LmN4pZ9vW3tY6bH1cD5fG0jS8aE2u"
HOOK = "whsec_9c1d2e3f4a5b6c7d8e9f0a1b2c3d4e5f"
HEX = "0123456789abcdef"
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def registry() -> SecretRegistry:
    made = SecretRegistry()
    made.add(KEY, ".env:API_KEY")
    made.add(TOKEN, ".env:GITHUB_TOKEN")
    made.add(HOOK, ".env:WEBHOOK_SECRET")
    return made


def _labels(registry: SecretRegistry, text: str, *, send: bool = False) -> set[str]:
    if send:
        found = registry.stream().scan(text, runs=True).findings
    else:
        found = registry.scan(text).findings
    return {f.label for f in found}


def _changed(value: str, positions: list[int], to: str = "@") -> str:
    chars = list(value)
    for at in positions:
        chars[at] = to
    return "".join(chars)


NEAR: dict[str, str] = {
    "one-changed": KEY.replace("4f9a", "4f9@"),
    "one-changed-at-the-end": KEY[:-1] + "x",
    "one-changed-at-the-start": "sk-test-x" + KEY[9:],
    "four-changed": _changed(KEY, [10, 18, 26, 34]),
    "one-dropped": KEY[:20] + KEY[21:],
    "one-added": KEY[:20] + "Z" + KEY[20:],
    "changed-and-upper": KEY.replace("4f9a", "4f9@").upper(),
    "changed-and-spaced": " ".join(KEY.replace("3d8a", "3d8#")),
    "no-prefix": BODY.replace("e5c9", "e5c0"),
    "token-changed": TOKEN.replace("Kq7", "Kq8").replace("0jS", "0j5"),
}


@pytest.mark.parametrize("spelling", list(NEAR))
def test_a_near_copy_of_a_key_is_found_in_any_text(registry: SecretRegistry, spelling: str) -> None:
    text = f"the value: {NEAR[spelling]} (ok)"
    assert _labels(registry, text) and _labels(registry, text, send=True)
    redacted = registry.redact(text)
    assert redacted.startswith("the value: ") and redacted.endswith(" (ok)")
    assert "[secret:" in redacted and BODY[4:20] not in redacted.replace(" ", "")


def test_a_near_copy_is_redacted_as_its_window(registry: SecretRegistry) -> None:
    text = f"before {KEY.replace('4f9a', '4f9@')} after"
    [finding] = registry.scan(text).findings
    assert (finding.transform, text[finding.start : finding.end]) == ("near", "4f9@" + KEY[12:])


@pytest.mark.parametrize(
    "part",
    [_changed(BODY[:24], [5, 15]), _changed(BODY[8:], [3, 12, 20]), BODY[:12] + BODY[13:26]],
    ids=["first-24-two-changed", "last-24-three-changed", "25-one-dropped"],
)
def test_a_near_copy_of_a_long_part_is_refused_on_the_way_out(
    registry: SecretRegistry, part: str
) -> None:
    assert _labels(registry, f"x {part} y", send=True) == {".env:API_KEY"}
    assert not _labels(registry, f"x {part} y")  # in an output: a part of a key is no leak


@pytest.mark.parametrize(
    "text",
    [
        _changed(BODY, [2, 8, 14, 20, 26]),  # one change per six characters
        _changed(BODY[:23], [5, 15]),  # a part shorter than 24 characters
        BODY[:12] + "zz" + BODY[12:24],  # two added in 26
    ],
    ids=["five-in-32", "part-of-23", "two-added"],
)
def test_too_far_from_the_key_is_no_near_copy(registry: SecretRegistry, text: str) -> None:
    found = registry.stream().scan(f"x {text} y", runs=True).findings
    assert [f.transform for f in found if f.transform != "run"] == []


def test_two_pieces_of_a_run_in_one_text_are_a_run(registry: SecretRegistry) -> None:
    """Twelve characters and the twelve after them, two added between: 24 of the key's 32, as
    sent in two messages (a run assembled from its pieces), not a near copy."""
    found = registry.stream().scan(f"x {BODY[:12]}zz{BODY[12:24]} y", runs=True).findings
    assert [(f.label, f.transform) for f in found] == [(".env:API_KEY", "run")]


def _shift(value: str, alphabet: str, shift: int) -> str:
    return value.translate(str.maketrans(alphabet, alphabet[shift:] + alphabet[:shift]))


SUBSTITUTED: dict[str, str] = {
    **{f"hex-shift-{n}": _shift(KEY, HEX, n) for n in (1, 5, 8, 15)},
    **{f"alnum-shift-{n}": _shift(KEY, string.digits + string.ascii_lowercase, n) for n in (3, 20)},
    "letters-and-digits-shifted": _shift(_shift(KEY, string.ascii_lowercase, 3), string.digits, 7),
    "hex-atbash": KEY.translate(str.maketrans(HEX, HEX[::-1])),
    "ascii-shift-5": _shift(KEY, "".join(map(chr, range(33, 127))), 5),
    "xor-7": "".join(chr(ord(c) ^ 7) for c in KEY),
    "xor-99": "".join(chr(ord(c) ^ 99) for c in KEY),
    "token-alnum62-shift": _shift(
        TOKEN, string.digits + string.ascii_uppercase + string.ascii_lowercase, 11
    ),
}


@pytest.mark.parametrize("spelling", list(SUBSTITUTED))
def test_a_shifted_or_xored_key_is_a_form_of_it(registry: SecretRegistry, spelling: str) -> None:
    text = f"cipher: {SUBSTITUTED[spelling]} !"
    assert _labels(registry, text) and _labels(registry, text, send=True)
    assert "[secret:" in registry.redact(text)


@pytest.mark.parametrize("seed", range(8))
def test_any_substitution_of_the_key_is_refused_on_the_way_out(
    registry: SecretRegistry, seed: int
) -> None:
    rng = random.Random(seed)
    image = rng.sample(string.ascii_letters + string.digits + "!#$%&*+-", 16)
    copy = BODY.translate(str.maketrans(HEX, "".join(image)))
    text = f"here you go: {copy}, cheers"
    found = registry.stream().scan(text, runs=True).findings
    assert [(f.label, f.transform) for f in found] == [(".env:API_KEY", "substituted")]
    assert found[0].start == text.index(copy)


@pytest.mark.parametrize("seed", range(4))
def test_a_substitution_of_the_key_read_backwards_is_found(
    registry: SecretRegistry, seed: int
) -> None:
    rng = random.Random(seed)
    image = rng.sample(string.ascii_letters + string.digits, 16)
    copy = BODY.translate(str.maketrans(HEX, "".join(image)))[::-1]
    text = f"reversed: {copy} !"
    assert _labels(registry, text) == {".env:API_KEY"}
    assert _labels(registry, text, send=True) == {".env:API_KEY"}
    assert copy not in registry.redact(text)


def test_a_short_or_repeat_poor_core_has_no_shape() -> None:
    assert _substitution.shape_core(KEY) == BODY
    assert _substitution.shape_core(TOKEN) is None  # too few repeated characters
    assert _substitution.shape_core("sk-test-abc123") is None


LOOK_ALIKES: dict[str, str] = {
    "prose": "The key rotation runs nightly; ask ops for the new sk-test- key before Friday.",
    "code": "def check(key: str) -> bool:\n    return hmac.compare_digest(key, expected)\n",
    "prefix-alone": "sk-test-",
    "commit-ids": " ".join(hashlib.sha1(str(i).encode()).hexdigest() for i in range(50)),
    "uuids": " ".join(str(uuid.UUID(int=random.Random(i).getrandbits(128))) for i in range(50)),
    "other-keys": " ".join(
        "sk-test-" + "".join(random.Random(i).choices(HEX, k=32)) for i in range(50)
    ),
    "sha256-of-the-key": hashlib.sha256(KEY.encode()).hexdigest(),
    "md5-of-the-key": hashlib.md5(KEY.encode()).hexdigest(),
    "run-of-one-char": "a" * 500 + "0" * 500 + "=" * 500,
    "base64-of-other-data": base64.b64encode(random.Random(3).randbytes(3000)).decode(),
    "long-numbers": " ".join(str(random.Random(i).getrandbits(200)) for i in range(40)),
    "hex-dump": " ".join(f"{b:02x}" for b in random.Random(5).randbytes(3000)),
}


@pytest.mark.parametrize("name", list(LOOK_ALIKES))
def test_look_alikes_are_no_finding(registry: SecretRegistry, name: str) -> None:
    text = LOOK_ALIKES[name]
    assert not _labels(registry, text)
    assert not _labels(registry, text, send=True)


_SHARED = SecretRegistry()
_SHARED.add(KEY, ".env:API_KEY")
_SHARED.add(TOKEN, ".env:GITHUB_TOKEN")


@settings(max_examples=100, deadline=None)
@given(st.randoms(use_true_random=False))
def test_no_random_string_of_the_keys_length_is_a_finding(rng: random.Random) -> None:
    alphabets = (HEX, string.ascii_lowercase + string.digits, string.ascii_letters + string.digits)
    parts = ["".join(rng.choices(alphabet, k=len(BODY))) for alphabet in alphabets]
    parts += ["".join(rng.choices(alphabets[2], k=len(TOKEN)))]
    text = " ".join(parts)
    stream = _SHARED.stream()
    stream.reset()  # no fragments of earlier examples
    assert not _SHARED.scan(text).findings
    assert not stream.scan(text, runs=True).findings


@pytest.mark.slow
def test_no_source_file_of_the_project_is_a_finding(registry: SecretRegistry) -> None:
    paths = [ROOT / "README.md", *sorted((ROOT / "pytest_harness_audit").rglob("*.py"))]
    hits = []
    for path in paths:
        text = path.read_text(encoding="utf-8")
        if _labels(registry, text) or _labels(registry, text, send=True):
            hits.append(path.name)
    assert hits == []


def test_the_grams_cover_every_near_copy() -> None:
    """Every window the verifier accepts holds an unchanged stretch of a gram's length."""
    for size in range(16, 129):
        window = _near.min_window(size)
        for width in range(window, size + 1):
            changes = width // _near.PER_ERROR
            assert -(-(width - changes) // (changes + 1)) >= _near.gram_size(size)


def _reference(core: str, text: str, diagonal: int, parts: bool) -> tuple[int, int] | None:
    """``(length, changes)`` of the longest near copy, trying every window and switch point."""
    size = len(core)
    window = _near.min_window(size) if parts else size
    best: tuple[int, int] | None = None
    pairs = [(0, 0), (0, -1), (0, 1), (-1, 0), (1, 0)]
    for a, b, (first, second) in itertools.product(range(size), range(size + 1), pairs):
        if b - a < window:
            continue
        # a part switches inside it (a switch at its very end is no change of the copy)
        bounds = (a + 1, b if second > first else b - 1) if parts else (a, b + (second > first))
        inside = range(*bounds)
        for s in [b] if first == second else inside:
            lined = [
                (k, first if k < s else second)
                for k in range(a, b)
                if not (second < first and k == s)
            ]  # a switch down drops core[s]
            spots = [(k, k + diagonal + x) for k, x in lined]
            if any(not 0 <= at < len(text) for _, at in spots):
                continue
            same = [core[k] == text[at] for k, at in spots]
            # a part's first and last characters are lined up, and the same
            ends = lined[0][0] == a and lined[-1][0] == b - 1 and same[0] and same[-1]
            if parts and not ends:
                continue
            changes = same.count(False) + (first != second)
            if changes * _near.PER_ERROR <= b - a and (
                best is None or (b - a, -changes) > (best[0], -best[1])
            ):
                best = (b - a, changes)
    return best


@settings(max_examples=60, deadline=None)
@given(st.randoms(use_true_random=False), st.booleans())
def test_the_alignment_finds_the_longest_near_copy(rng: random.Random, parts: bool) -> None:
    core = "".join(rng.choices(HEX, k=rng.choice([16, 18, 24, 26])))
    copy = list(core)
    for _ in range(rng.randint(0, 4)):
        at, kind = rng.randrange(len(copy)), rng.random()
        if kind < 0.6:
            copy[at] = "@"
        elif kind < 0.8:
            del copy[at]
        else:
            copy.insert(at, "x")
    text = "ab" + "".join(copy) + "yz"
    found = _near.align(core, text, 2, parts)
    assert (None if found is None else (found.length, found.changes)) == _reference(
        core, text, 2, parts
    )


def test_a_short_value_has_no_shifted_forms() -> None:
    """Hundreds of shifts of a 12-character value would match ordinary words."""
    registry = SecretRegistry()
    registry.add("hunter2-test", ".env:PASSWORD")
    shifted = _shift(_shift("hunter2-test", string.ascii_lowercase, 1), string.digits, 1)
    assert shifted == "ivoufs3-uftu"
    assert not registry.scan(f"say {shifted}").findings
    assert registry.scan("say hunter2-test").findings


@pytest.mark.parametrize("image", ["αβγδεζηθικλμνξοπ", "ａｂｃｄｅｆｇｈｉｊｋｌｍｎｏｐ"])
def test_a_substitution_into_other_scripts_is_refused_on_the_way_out(
    registry: SecretRegistry, image: str
) -> None:
    copy = BODY.translate(str.maketrans(HEX, image))
    text = f"— voilà: {' '.join(copy)} —"
    found = registry.stream().scan(text, runs=True).findings
    assert [f.transform for f in found] == ["substituted"]
    assert text[found[0].start : found[0].end] == " ".join(copy)
