"""The summary table cuts long test ids at ``::`` or ``/`` boundaries, never inside a name."""

from __future__ import annotations

import pytest

from pytest_harness_audit.plugin.summary import SessionSummary, format_summary, short_test_id

LONG = "example_suites/immune_escalation/test_containment.py::test_a_human_lifts_the_quarantine"


@pytest.mark.parametrize(
    ("nodeid", "width", "shown"),
    [
        ("tests/test_a.py::test_b", 70, "tests/test_a.py::test_b"),
        (LONG, 70, "…/test_containment.py::test_a_human_lifts_the_quarantine"),
        (LONG, 60, "…/test_containment.py::test_a_human_lifts_the_quarantine"),
        (LONG, 50, "…::test_a_human_lifts_the_quarantine"),
        # the name alone is wider than the column: it is still whole
        (LONG, 20, "…::test_a_human_lifts_the_quarantine"),
        ("a/b/test_c.py::TestClass::test_d", 31, "…/test_c.py::TestClass::test_d"),
        ("a/b/test_c.py::TestClass::test_d", 25, "…::TestClass::test_d"),
        ("pkg/test_c.py::TestClass::test_d", 18, "…::test_d"),
        # a parameter's "::" and "/" are part of the name
        ("pkg/test_c.py::test_d[a::b/c]", 20, "…::test_d[a::b/c]"),
    ],
)
def test_short_test_id(nodeid: str, width: int, shown: str) -> None:
    assert short_test_id(nodeid, width) == shown


def test_cut_ids_end_with_the_whole_name_and_never_start_mid_word() -> None:
    for width in range(10, len(LONG) + 2):
        shown = short_test_id(LONG, width)
        assert shown.endswith("::test_a_human_lifts_the_quarantine")
        assert shown == LONG or shown[1] in "/:"
        assert len(shown) <= max(width, len("…::test_a_human_lifts_the_quarantine"))


def test_table_column_fits_the_cut_ids() -> None:
    row = SessionSummary(
        nodeid="very/long/directory/names/that/go/on/and/on/tests/test_module.py::test_named_well",
        session_id="s",
        calls=1,
        denied=0,
        warned=0,
        chain_valid=True,
        records=1,
        verdict="PASS",
        storage="x",
        head="ab" * 32,
    )
    header, line, _ = format_summary([row])
    assert line.startswith("…/")
    assert "::test_named_well  " in line
    test_column = line.split("  ")[0]
    assert test_column == "…/test_module.py::test_named_well" or test_column.startswith("…/")
    assert len(header.split("  calls")[0]) == len(test_column)
