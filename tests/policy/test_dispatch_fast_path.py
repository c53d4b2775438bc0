"""The per-tool dispatch of a compiled policy and its shortcuts, against the slow ways.

* A call no pattern can match is decided from outcomes worked out per tool (``static`` tools,
  prefilter-cleared calls, rate-limited rules before them): the same evaluation as the full path.
* A one-form call is cleared by :meth:`Prefilter.clears`, which must agree with ``may_match``.
* A regex ``^(?!P…)`` of plain prefixes is matched as a prefix test, without the fallback
  engine's timer: it must agree with that engine on every target.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import regex
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_harness_audit.policy import Policy, SlidingWindowCounter
from pytest_harness_audit.policy.evaluation import Decided, Evaluation
from pytest_harness_audit.policy.patterns import TargetMatcher, excluded_prefixes
from pytest_harness_audit.policy.prefilter import Prefilter, pattern_requirement, requirement

PREFIX_TEXT = st.text(alphabet="/ab.-_:~éſK", max_size=6)
TARGET = st.one_of(
    st.text(alphabet="/ab.-_:~éſK\n", max_size=12),
    st.builds(lambda p, s: p + s, PREFIX_TEXT, st.text(alphabet="/ab.\n", max_size=4)),
)


def full_outcome(evaluation: Evaluation) -> tuple[Any, ...]:
    """Every public field of an evaluation."""
    return (
        evaluation.decision,
        evaluation.enforced,
        evaluation.blocked,
        evaluation.rule_id,
        evaluation.rule_name,
        evaluation.priority,
        evaluation.reason,
        evaluation.constraints,
        evaluation.category,
        evaluation.target,
        evaluation.targets,
        evaluation.is_default,
        evaluation.to_dict(),
    )


def _prefix_lookahead(prefixes: list[str], targets: list[str]) -> None:
    pattern = "^(?!" + "|".join(re.escape(p) for p in prefixes) + ")"
    matcher = TargetMatcher(pattern, is_regex=True)
    compiled = regex.compile(pattern, regex.V0)
    if all(p.isascii() for p in prefixes):
        assert matcher.excluded is not None, pattern
    for target in [*targets, *prefixes, *(p[:-1] for p in prefixes)]:
        assert matcher.matches(target) == (compiled.search(target) is not None), (pattern, target)


@pytest.mark.parametrize(
    "pattern",
    [
        "(?i)^(?!/p/)",  # case-insensitive: `/P/` is inside
        "^(?!/p/).",  # something after the look-ahead
        "^(?!/p/)$",
        "^(?!/p/$)",  # an anchor inside
        "^(?!/p/|x)|y",  # an alternative outside the look-ahead
        "^(?![[:alpha:]])",  # a POSIX class the fallback engine knows and Python's parser not
        "^(?![ab])",
        r"^(?!\d)",  # Unicode digits on one engine
        "^(?!a*)",
        "^(?!a{2})",
        "^(?!(?i:a))",
        "^(?!(?:a|b))",
        "^(?=/p/)",
        "^(?!é)",
        "^(?!/p/)(?!/q/)",
    ],
)
def test_other_lookaheads_keep_the_fallback_engine(pattern: str) -> None:
    assert excluded_prefixes(pattern) is None
    read, plain = pattern_requirement(pattern, is_regex=True), requirement(pattern, is_regex=True)
    assert (read is None) == (plain is None)
    if read is not None and plain is not None:
        assert (read.groups, read.whole, read.excluded) == (plain.groups, plain.whole, None)
    matcher = TargetMatcher(pattern, is_regex=True)
    if matcher.bounded_only:
        compiled = regex.compile(pattern, regex.V0)
        for target in ["/p/a", "/P/a", "/q/a", "x", "y", "aa", "ab", "", "1", "\u0661", "é"]:
            assert matcher.matches(target) == (compiled.search(target) is not None), target


@pytest.mark.parametrize(
    ("pattern", "prefixes"),
    [
        ("^(?!/srv/app/)", ("/srv/app/",)),
        ("^(?!/a/|/b/)", ("/a/", "/b/")),
        ("^(?!/srv/(app|lib)/)", ("/srv/app/", "/srv/lib/")),
        (r"^(?!/p\.x/)", ("/p.x/",)),
        ("^(?!)", ("",)),  # an empty look-ahead: matches nothing
    ],
)
def test_plain_prefix_lookaheads_are_read(pattern: str, prefixes: tuple[str, ...]) -> None:
    assert excluded_prefixes(pattern) == prefixes
    needed = pattern_requirement(pattern, is_regex=True)
    assert needed is not None and needed.excluded == prefixes


LITERAL_SETS = st.lists(
    st.sampled_from([".env", "secret", "/.ssh/", "tokens", ".json", "id_rsa", "/", "a"]),
    max_size=3,
)


@st.composite
def prefilters(draw: st.DrawFn) -> Prefilter:
    found = []
    for _ in range(draw(st.integers(0, 4))):
        kind = draw(st.integers(0, 3))
        if kind == 0:
            found.append(
                pattern_requirement(
                    draw(st.sampled_from(["^(?!/p/)", "^(?!/a|/b)"])), is_regex=True
                )
            )
        elif kind == 1:
            found.append(requirement(draw(st.sampled_from(["/p/a", "x.txt", "/"])), is_regex=False))
        else:
            glob = "**/*" + "*".join(draw(LITERAL_SETS)) + "*"
            found.append(requirement(glob, is_regex=False))
    return Prefilter([each for each in found if each is not None])


def _clearing(prefilter: Prefilter, text: str) -> None:
    assert prefilter.clears(text) == (not prefilter.may_match([text], text))


WRITE_RULES = {
    "defaultPolicy": "allow",
    "rules": [
        {
            "id": "outside",
            "name": "Outside",
            "decision": "deny",
            "priority": 2,
            "match": {
                "categories": ["file_write"],
                "targetPatterns": ["^(?!/srv/app/)"],
                "targetPatternsAreRegex": True,
            },
        },
        {
            "id": "sql",
            "name": "SQL",
            "decision": "warn",
            "priority": 3,
            "match": {"categories": ["file_write"], "targetPatterns": ["**/*.sql"]},
        },
        {
            "id": "tests",
            "name": "Tests",
            "decision": "allow",
            "priority": 1,
            "match": {"categories": ["file_write"], "targetPatterns": ["/srv/app/tests/**"]},
        },
    ],
}


@pytest.mark.parametrize(
    ("path", "rule"),
    [
        ("/srv/app/src/a.py", None),  # benign: inside
        ("/srv/app/db/1.sql", "sql"),
        ("/srv/app/tests/x.sql", "tests"),
        ("/srv/app/../../etc/passwd", "outside"),  # normalisation leaves the project
        ("/srv/app/./../secrets", "outside"),
        ("/srv/application/a.py", "outside"),  # a look-alike prefix
        ("/srv/app", "outside"),  # the folder itself: no trailing slash
        ("/SRV/APP/a.py", "outside"),  # another case
        ("/srv/app//a.py", None),
        ("srv/app/a.py", "outside"),  # relative
        ("/srv/app/é.py", None),  # not ASCII: the full path
        ("/srv/app/\u212a.py", None),
        ("", "outside"),
    ],
)
def test_writes_outside_a_folder_are_decided_as_on_the_full_path(
    path: str, rule: str | None
) -> None:
    fast, full = Policy.from_dict(WRITE_RULES), Policy.from_dict(WRITE_RULES)
    full.prefilter_enabled = False
    fast.prefilter_after = 0  # the prefilter from the first call
    for params in ({"file_path": path}, {"file_path": path, "content": "x"}):
        got, want = fast.evaluate("Write", params), full.evaluate("Write", params)
        assert full_outcome(got) == full_outcome(want)
        assert got.rule_id == rule, path


def test_a_symlink_out_of_the_folder_is_outside(tmp_path: Path) -> None:
    root = tmp_path / "srv" / "app"
    root.mkdir(parents=True)
    (tmp_path / "elsewhere").mkdir()
    (root / "link").symlink_to(tmp_path / "elsewhere")
    document = {
        "defaultPolicy": "allow",
        "rules": [
            {
                "id": "outside",
                "name": "Outside",
                "decision": "deny",
                "priority": 1,
                "match": {
                    "categories": ["file_write"],
                    "targetPatterns": [f"^(?!{re.escape(str(root))}/)"],
                    "targetPatternsAreRegex": True,
                },
            }
        ],
    }
    fast, full = Policy.from_dict(document), Policy.from_dict(document)
    full.prefilter_enabled = False
    fast.prefilter_after = 0  # the prefilter from the first call
    for name, rule in ((f"{root}/link/x", "outside"), (f"{root}/a.txt", None)):
        got = fast.evaluate("Write", {"file_path": name}, root=str(root))
        assert full_outcome(got) == full_outcome(
            full.evaluate("Write", {"file_path": name}, root=str(root))
        )
        if rule is not None:
            assert got.rule_id == rule, name


RATE_RULES = {
    "defaultPolicy": "allow",
    "rules": [
        {
            "id": "burst",
            "name": "Burst",
            "decision": "deny",
            "priority": 1,
            "match": {"tools": ["Read"], "rateLimit": {"maxCount": 2, "windowMs": 60_000}},
        },
        {
            "id": "creds",
            "name": "Creds",
            "decision": "deny",
            "priority": 2,
            "match": {"categories": ["credential_access"]},
        },
        {
            "id": "reads",
            "name": "Reads",
            "decision": "warn",
            "priority": 3,
            "match": {"categories": ["file_read"]},
        },
        {
            "id": "env",
            "name": "Env",
            "decision": "deny",
            "priority": 4,
            "match": {"targetPatterns": ["**/.env"]},
        },
    ],
}


@pytest.mark.parametrize("enforce", [True, False])
def test_rate_limits_and_credentials_on_cleared_and_static_calls(enforce: bool) -> None:
    document = {**RATE_RULES, "enforce": enforce}
    fast, full = Policy.from_dict(document), Policy.from_dict(document)
    full.prefilter_enabled = False
    fast.prefilter_after = 0  # the prefilter from the first call
    fast_counter, full_counter = SlidingWindowCounter(), SlidingWindowCounter()
    calls = [
        ("Read", {"file_path": "/p/a.py"}),
        ("Read", {"file_path": "/p/.aws/credentials"}),
        ("Read", {"file_path": "/p/.env"}),
        ("TodoWrite", {"todos": []}),
        ("Read", {"file_path": "/p/b.py"}),
        ("Read", {"file_path": "/p/c.py"}),
        ("WebSearch", {"query": "x"}),
        ("Read", {"file_path": "/p/.env"}),
    ]
    decided = []
    for tool, params in calls:
        got = fast.evaluate(tool, params, rate_counter=fast_counter)
        want = full.evaluate(tool, params, rate_counter=full_counter)
        assert full_outcome(got) == full_outcome(want), (tool, params)
        assert isinstance(got, Decided)
        decided.append(got.rule_id)
        # without a counter a rate-limited rule never fires
        assert full_outcome(fast.evaluate(tool, params)) == full_outcome(
            full.evaluate(tool, params)
        )
    assert decided[:2] == ["reads", "creds"] and decided[3] is None and decided[-1] == "burst"


def _rules_with_prefixes() -> Any:
    prefix_patterns = st.sampled_from(
        ["^(?!/p/)", "^(?!/p/|/q/)", "^(?!/p)", "^(?!/p/a/)", "(?i)^(?!/p/)", "^(?!/p/)."]
    )
    other = st.sampled_from(["**/.env", "**/*.sql", "/p/tests/**", "exact.txt", "**/*secret*"])
    return st.lists(
        st.fixed_dictionaries(
            {
                "decision": st.sampled_from(["allow", "deny", "warn"]),
                "priority": st.integers(0, 3),
                "regex": st.booleans(),
                "patterns": st.lists(prefix_patterns, min_size=1, max_size=2),
                "globs": st.lists(other, max_size=2),
                "categories": st.sampled_from([None, ["file_write"], ["credential_access"]]),
            }
        ),
        max_size=5,
    )


PATH = st.one_of(
    st.sampled_from(
        ["/p/a.py", "/p/.env", "/q/x.sql", "/p/../etc/x", "/P/a", "/p", "/pa", "exact.txt", ""]
    ),
    st.text(alphabet="/pqa.envsqlé", max_size=10),
)


def _prefix_rules(specs: list[dict[str, Any]], calls: list[tuple[str, dict[str, Any]]]) -> None:
    rules = []
    for index, spec in enumerate(specs):
        match: dict[str, Any] = {}
        if spec["regex"] or not spec["globs"]:
            match["targetPatterns"] = spec["patterns"]
            match["targetPatternsAreRegex"] = True
        else:
            match["targetPatterns"] = spec["globs"]
        if spec["categories"] is not None:
            match["categories"] = spec["categories"]
        rules.append(
            {
                "id": f"r{index}",
                "name": f"R{index}",
                "decision": spec["decision"],
                "priority": spec["priority"],
                "match": match,
            }
        )
    document = {"defaultPolicy": "allow", "rules": rules}
    fast, full = Policy.from_dict(document), Policy.from_dict(document)
    full.prefilter_enabled = False
    fast.prefilter_after = 0  # the prefilter from the first call
    for tool, params in calls:
        assert full_outcome(fast.evaluate(tool, params)) == full_outcome(
            full.evaluate(tool, params)
        ), (tool, params)


FAST = 8  # examples of a property in the default run; its slow variant tries SLOW
SLOW = 300
PROPERTIES = {
    "prefix-lookahead": lambda: given(
        prefixes=st.lists(PREFIX_TEXT, min_size=1, max_size=3), targets=st.lists(TARGET)
    )(_prefix_lookahead),
    "clearing": lambda: given(
        prefilter=prefilters(), text=st.text(alphabet="/pabx.envsecrtSECRTjoni_dK", max_size=16)
    )(_clearing),
    "prefix-rules": lambda: given(
        specs=_rules_with_prefixes(),
        calls=st.lists(
            st.tuples(
                st.sampled_from(["Write", "Edit", "Read", "mcp__fs__write_file"]),
                st.dictionaries(
                    st.sampled_from(["file_path", "path", "content", "pattern"]), PATH, max_size=3
                ),
            ),
            max_size=8,
        ),
    )(_prefix_rules),
}


def _run(name: str, examples: int) -> None:
    settings(
        max_examples=examples,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
    )(PROPERTIES[name]())()


@pytest.mark.parametrize("name", sorted(PROPERTIES))
def test_shortcut_equals_the_slow_way(name: str) -> None:
    _run(name, FAST)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(PROPERTIES))
def test_shortcut_equals_the_slow_way_many(name: str) -> None:
    _run(name, SLOW)


def test_the_public_constructor_still_makes_an_evaluation() -> None:
    made = Evaluation(
        "deny", False, "r", "R", 3, "why", ("policy:deny",), "file_read", None, {"path": "/a"}, None
    )
    assert (made.decision, made.enforced, made.blocked, made.rule_id, made.priority) == (
        "deny",
        False,
        False,
        "r",
        3,
    )
    assert made.targets == ("/a",) and made.target == "/a" and not made.is_default
    decided = Policy.preset("safety").evaluate("Read", {"file_path": "/p/a.py"})
    assert isinstance(decided, Evaluation) and decided.targets == ("/p/a.py",)
    assert "Evaluation(decision=" in repr(decided)
