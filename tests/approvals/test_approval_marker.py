"""``@pytest.mark.harness_approvals``: a table of answers for the test's harness sessions."""

from __future__ import annotations

import pytest

POLICY = """\
defaultPolicy: allow
rules:
  - id: ask-deploy
    name: Deploy files need approval
    priority: 0
    decision: ask
    match:
      tools: [Write]
      targetPatterns: ["deploy/**"]
"""


def test_the_marker_answers_by_tool_glob(pytester: pytest.Pytester) -> None:
    pytester.makefile(".yaml", policy=POLICY)
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.harness_policy("policy.yaml")
        @pytest.mark.harness_approvals({"Wri*": "approve"}, name="release")
        @pytest.mark.expect_verdict("PASS")
        def test_approved(harness):
            result = harness.call("Write", file_path="deploy/a.txt", content="x")
            assert result.ok
            assert result.record["approval"] == {"approver": "release", "outcome": "approve"}

        @pytest.mark.harness_policy("policy.yaml")
        @pytest.mark.harness_approvals({"Edit": "approve"})
        @pytest.mark.expect_verdict("WARN")
        def test_unlisted_tool_is_rejected(harness):
            assert harness.call("Write", file_path="deploy/a.txt", content="x").blocked
        """
    )
    result = pytester.runpytest("-p", "no:randomly", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2)


@pytest.mark.parametrize(
    ("marker", "line"),
    [
        ('{"Write": "yes"}', "harness_approvals['Write']: unknown answer 'yes'"),
        ('["Write"]', "harness_approvals: needs a mapping of tool glob to answer"),
        ('{"Write": "approve"}, name=""', "harness_approvals: name must be a non-empty string"),
        ('{"Write": ("modify", "x")}', "answer 'modify' needs new params as a mapping"),
    ],
)
def test_a_bad_marker_is_one_line_naming_it(
    pytester: pytest.Pytester, marker: str, line: str
) -> None:
    pytester.makepyfile(
        f"""
        import pytest

        @pytest.mark.harness_approvals({marker})
        def test_x(harness):
            pass
        """
    )
    result = pytester.runpytest("-p", "no:randomly", "-p", "no:cacheprovider")
    assert result.ret != 0
    errors = [text for text in result.stderr.lines if line in text]
    assert len(errors) == 1, result.stderr.str()
    assert "Traceback" not in result.stderr.str()
