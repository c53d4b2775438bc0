"""What a reviewer reads is what the plugin made, or the run fails saying so: a snapshot file
changed while the tests ran is not compared with, the ``--harness-audit-otel`` file is written
whole at the end of the run, and a ``--harness-audit-html`` page that cannot be written fails
the run. The test bodies here change the files directly: they stand for an agent's calls,
which can reach any path no rule protects."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import pytest

from pytest_harness_audit.readers.report import PathScrubber

pytest_plugins = ["pytester"]

RUN = ("-p", "no:cacheprovider", "-p", "no:randomly")
CHANGED = "the snapshot file changed during the test run (not by --snapshot-update)"

SNAPSHOT_SUITE = """\
import os
from pathlib import Path

import pytest

SNAPS = Path(__file__).parent / "__snapshots__" / "test_snap"


def plant(name, text):
    (SNAPS / name).write_text(text, encoding="utf-8")


def test_0_other_agent():
    if os.environ.get("PLANT") == "other-first":
        plant("test_agent.audit.yaml", "forged\\n")


@pytest.mark.harness_workspace("python-service")
def test_agent(harness, audit_snapshot):
    harness.call("Glob", pattern="*")
    if os.environ.get("AGENT_V2"):
        harness.call("Grep", pattern="def", path="app")
    if os.environ.get("PLANT") == "before":
        plant("test_agent.audit.yaml", harness.report().render())
    assert harness.report() == audit_snapshot
    if os.environ.get("PLANT") == "after":
        plant("test_agent.audit.yaml", "forged\\n")


@pytest.mark.harness_workspace("python-service")
@pytest.mark.harness_snapshot
def test_marked(harness):
    harness.call("Glob", pattern="*")
    if os.environ.get("AGENT_V2"):
        harness.call("Grep", pattern="def", path="app")
    if os.environ.get("PLANT") == "marked":
        plant("test_marked.audit.yaml", harness.report().render())
    if os.environ.get("PLANT") == "other-last":
        plant("test_agent.audit.yaml", "forged\\n")
"""


def snapshot_file(pytester: pytest.Pytester, name: str = "test_agent") -> Path:
    return pytester.path / "__snapshots__" / "test_snap" / f"{name}.audit.yaml"


@pytest.fixture
def recorded(pytester: pytest.Pytester) -> pytest.Pytester:
    """A suite whose snapshots were recorded by ``--snapshot-update`` (the committed ones)."""
    pytester.makepyfile(test_snap=SNAPSHOT_SUITE)
    pytester.runpytest(*RUN, "--snapshot-update").assert_outcomes(passed=3)
    assert snapshot_file(pytester).is_file() and snapshot_file(pytester, "test_marked").is_file()
    return pytester


def test_an_agent_planting_its_own_report_in_the_snapshot_fails_the_test(
    recorded: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    committed = snapshot_file(recorded).read_text(encoding="utf-8")
    monkeypatch.setenv("AGENT_V2", "1")
    monkeypatch.setenv("PLANT", "before")
    result = recorded.runpytest(*RUN, "-k", "test_agent")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([f"E   AssertionError: {snapshot_file(recorded)}: {CHANGED}*"])
    assert "forged" not in committed and snapshot_file(recorded).read_text() != committed


def test_a_snapshot_changed_after_the_comparison_fails_the_test(
    recorded: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PLANT", "after")
    result = recorded.runpytest(*RUN, "-k", "test_agent")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([f"*{snapshot_file(recorded)}: {CHANGED}*"])


def test_the_marker_refuses_a_changed_snapshot_too(
    recorded: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENT_V2", "1")
    monkeypatch.setenv("PLANT", "marked")
    result = recorded.runpytest(*RUN, "-k", "test_marked")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([f"*{snapshot_file(recorded, 'test_marked')}: {CHANGED}*"])


@pytest.mark.parametrize("when", ["other-first", "other-last"])
def test_an_agent_changing_another_tests_snapshot_fails_the_run(
    recorded: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, when: str
) -> None:
    monkeypatch.setenv("PLANT", when)
    result = recorded.runpytest(*RUN)
    # planted first: test_agent's comparison is refused, and test_marked (same folder) fails too
    failed = ["test_agent", "test_marked"] if when == "other-first" else ["test_marked"]
    result.assert_outcomes(passed=3 - len(failed), failed=len(failed))
    result.stdout.fnmatch_lines([f"FAILED test_snap.py::{name} - *" for name in failed])
    result.stdout.fnmatch_lines([f"E   AssertionError: {snapshot_file(recorded)}: {CHANGED}*"])


def test_the_normal_flows_pass_fail_and_update(
    recorded: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    recorded.runpytest(*RUN).assert_outcomes(passed=3)
    monkeypatch.setenv("AGENT_V2", "1")
    changed = recorded.runpytest(*RUN)
    changed.assert_outcomes(passed=1, failed=2)
    assert CHANGED not in changed.stdout.str()
    changed.stdout.fnmatch_lines(["*snapshot diff (every changed line)*"])
    recorded.runpytest(*RUN, "--snapshot-update").assert_outcomes(passed=3)
    recorded.runpytest(*RUN).assert_outcomes(passed=3)
    assert "Grep" in snapshot_file(recorded).read_text(encoding="utf-8")


def test_a_snapshot_written_by_update_new_only_is_not_a_change(
    recorded: pytest.Pytester,
) -> None:
    snapshot_file(recorded).unlink()
    result = recorded.runpytest(*RUN, "--snapshot-update-new-only")
    result.assert_outcomes(passed=3)
    assert snapshot_file(recorded).is_file()
    recorded.runpytest(*RUN).assert_outcomes(passed=3)


def test_under_snapshot_update_the_file_must_hold_what_the_plugin_wrote(
    recorded: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENT_V2", "1")
    monkeypatch.setenv("PLANT", "after")
    forged = recorded.runpytest(*RUN, "--snapshot-update", "-k", "test_agent")
    forged.assert_outcomes(failed=1)
    forged.stdout.fnmatch_lines([f"E   AssertionError: {snapshot_file(recorded)}: {CHANGED}*"])
    monkeypatch.setenv("PLANT", "before")  # the agent's text is the report: nothing to refuse
    recorded.runpytest(*RUN, "--snapshot-update", "-k", "test_agent").assert_outcomes(passed=1)
    monkeypatch.delenv("PLANT")
    recorded.runpytest(*RUN, "-k", "test_agent").assert_outcomes(passed=1)
    assert "Grep" in snapshot_file(recorded).read_text(encoding="utf-8")


OTEL_SUITE = """\
import json
from pathlib import Path

import pytest

SPANS = Path(__file__).parent / "out" / "spans.jsonl"


@pytest.mark.harness_workspace("python-service")
@pytest.mark.expect_verdict("FAIL")
def test_1_denied(harness):
    harness.call("Read", file_path=".env")


@pytest.mark.harness_workspace("python-service")
def test_2_rewrites(harness):
    harness.call("Glob", pattern="*")
    lines = [json.loads(line) for line in SPANS.read_text().splitlines()]
    for span in lines:
        attributes = span.get("attributes", {})
        for key, value in list(attributes.items()):
            if value == "deny":
                attributes[key] = "allow"
            if value == "blocked":
                attributes[key] = "success"
        span.pop("status", None)
    SPANS.write_text("".join(json.dumps(span) + "\\n" for span in lines))
"""


def read_spans(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_a_span_file_rewritten_mid_run_is_written_again_whole(pytester: pytest.Pytester) -> None:
    pytest.importorskip("opentelemetry.sdk", reason="needs the otel extra")
    pytester.makepyfile(test_otel=OTEL_SUITE)
    path = pytester.path / "out" / "spans.jsonl"
    path.parent.mkdir()
    path.write_text('{"name": "from an earlier run"}\n', encoding="utf-8")
    result = pytester.runpytest(*RUN, "--harness-audit-otel=out/spans.jsonl")
    result.assert_outcomes(passed=2)
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(
        [f"harness-audit: the OpenTelemetry span file {path} was changed during the run*"]
    )
    spans = read_spans(path)
    assert spans[0] == {"name": "from an earlier run"}
    read = [s for s in spans if s["name"] == "execute_tool Read"]
    assert len(read) == 1
    attributes = read[0]["attributes"]
    assert isinstance(attributes, dict)
    assert attributes["harness_audit.decision"] == "deny"
    assert attributes["harness_audit.status"] == "blocked"
    assert [s["name"] for s in spans].count("invoke_agent") == 2
    assert not list(path.parent.glob(".*.tmp"))


@pytest.mark.slow  # a whole pytest run in a process of its own
def test_under_xdist_the_controller_writes_every_workers_spans(pytester: pytest.Pytester) -> None:
    pytest.importorskip("opentelemetry.sdk", reason="needs the otel extra")
    pytest.importorskip("xdist")
    pytester.makepyfile(test_otel=OTEL_SUITE)
    pytester.makepyfile(
        test_more="def test_more(harness):\n    harness.call('Glob', pattern='*')\n"
    )
    (pytester.path / "out").mkdir()
    result = pytester.runpytest(
        *RUN, "-p", "xdist", "-n", "2", "--dist", "loadfile", "--harness-audit-otel=out/spans.jsonl"
    )
    result.assert_outcomes(passed=3)
    result.stdout.fnmatch_lines(["harness-audit: the OpenTelemetry span file * was changed*"])
    spans = read_spans(pytester.path / "out" / "spans.jsonl")
    assert [s["name"] for s in spans].count("invoke_agent") == 3
    decisions = [s["attributes"] for s in spans if s["name"] == "execute_tool Read"]
    assert [a["harness_audit.decision"] for a in decisions if isinstance(a, dict)] == ["deny"]


def test_an_untouched_span_file_is_as_documented_and_no_note(pytester: pytest.Pytester) -> None:
    pytest.importorskip("opentelemetry.sdk", reason="needs the otel extra")
    pytester.makepyfile(test_otel=OTEL_SUITE.split("@pytest.mark.harness_workspace")[0])
    pytester.makepyfile(
        test_plain="""
def test_one(harness):
    harness.call("Glob", pattern="*")
"""
    )
    result = pytester.runpytest(*RUN, "--harness-audit-otel=spans.json")
    result.assert_outcomes(passed=1)
    assert "changed during the run" not in result.stdout.str()
    spans = read_spans(pytester.path / "spans.json")
    assert [s["name"] for s in spans] == ["invoke_agent", "execute_tool Glob"]


def test_a_span_file_that_cannot_be_written_at_the_end_fails_the_run(
    pytester: pytest.Pytester,
) -> None:
    pytest.importorskip("opentelemetry.sdk", reason="needs the otel extra")
    pytester.makepyfile(
        test_block="""
import shutil
from pathlib import Path

def test_a(harness):
    harness.call("Glob", pattern="*")

def test_b(harness):
    harness.call("Glob", pattern="*")
    out = Path(__file__).parent / "out"
    shutil.rmtree(out)
    out.write_text("a file where the folder was")
"""
    )
    result = pytester.runpytest(*RUN, "--harness-audit-otel=out/spans.jsonl")
    result.assert_outcomes(passed=2, warnings=1)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        [f"harness-audit: cannot write the OpenTelemetry span file {pytester.path}/out/*"]
    )
    assert (pytester.path / "out").read_text() == "a file where the folder was"


def test_a_span_file_planted_or_swapped_for_a_fifo_is_reported_or_replaced(tmp_path: Path) -> None:
    pytest.importorskip("opentelemetry.sdk", reason="needs the otel extra")
    from pytest_harness_audit.readers.otel import SpanFile

    planted = SpanFile(tmp_path / "planted.jsonl")
    planted.start()
    (tmp_path / "planted.jsonl").write_text('{"name": "forged"}\n')
    note, problem = planted.finish()
    assert note is None and problem is not None
    assert problem.endswith("planted.jsonl is not the plugin's: the run exported no span")

    swapped = SpanFile(tmp_path / "swapped.jsonl")
    swapped.start()
    swapped.written.append('{"name": "invoke_agent"}\n')
    os.mkfifo(tmp_path / "swapped.jsonl")  # reading it would block: it is not read
    note, problem = swapped.finish()
    assert problem is None and note is not None and "was changed during the run" in note
    assert (tmp_path / "swapped.jsonl").read_text() == '{"name": "invoke_agent"}\n'


HTML_SUITE = """\
from pathlib import Path

def test_one(harness):
    harness.call("Glob", pattern="*")
    page = Path(__file__).parent / "out" / "view.html"
    page.parent.mkdir(exist_ok=True)
    if (Path(__file__).parent / "mode").read_text() == "folder":
        page.mkdir()
        (page / "index.html").write_text("<h1>0 FAIL</h1>")
    else:
        page.symlink_to(Path(__file__).parent / "elsewhere.html")
"""


def test_a_page_that_cannot_be_written_fails_the_run_and_removes_nothing(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(test_html=HTML_SUITE)
    (pytester.path / "mode").write_text("folder")
    result = pytester.runpytest(*RUN, "--harness-audit-html=out/view.html")
    result.assert_outcomes(passed=1)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    page = pytester.path / "out" / "view.html"
    result.stdout.fnmatch_lines(
        [
            f"harness-audit: no session view written: cannot write the session view to {page}: "
            f"*; what is at {page} is not this run's view"
        ]
    )
    assert "Traceback" not in result.stdout.str()
    assert (page / "index.html").read_text() == "<h1>0 FAIL</h1>"


def test_a_page_planted_as_a_link_is_replaced_not_written_through(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(test_html=HTML_SUITE)
    (pytester.path / "mode").write_text("link")
    elsewhere = pytester.path / "elsewhere.html"
    elsewhere.write_text("someone else's file")
    result = pytester.runpytest(*RUN, "--harness-audit-html=out/view.html")
    result.assert_outcomes(passed=1)
    assert result.ret == pytest.ExitCode.OK
    page = pytester.path / "out" / "view.html"
    assert not page.is_symlink() and "session-row" in page.read_text(encoding="utf-8")
    assert elsewhere.read_text() == "someone else's file"
    assert os.stat(page).st_mode & 0o644 == 0o644


def test_a_page_written_normally_passes(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_ok="def test_one(harness):\n    harness.call('Glob', pattern='*')\n")
    result = pytester.runpytest(*RUN, "--harness-audit-html=view.html")
    result.assert_outcomes(passed=1)
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(["harness-audit: session view written to *view.html (1 session*"])


@pytest.mark.parametrize(
    ("text", "scrubbed"),
    [
        ("/var/tmp/leak", "/var/tmp/leak"),
        ("/home/u/tmp/x", "/home/u/tmp/x"),
        ("cat /var/tmp/a /tmp/b", "cat /var/tmp/a <tmp>"),
        ("/tmp", "<tmp>"),
        ("x=/tmp/a '/tmp/b'", "x=<tmp> '<tmp>'"),
        ("/tmpfoo/x", "/tmpfoo/x"),
        ("/opt/ws/app/main.py", "app/main.py"),
    ],
)
def test_the_scrubber_replaces_the_temporary_directory_only_as_a_whole_path(
    monkeypatch: pytest.MonkeyPatch, text: str, scrubbed: str
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", "/tmp")
    monkeypatch.setenv("HOME", "/nonexistent-home")
    assert PathScrubber("/opt/ws")(text) == scrubbed
