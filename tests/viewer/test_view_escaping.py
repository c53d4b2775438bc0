"""What an agent writes reaches the page as text: markup, attribute breakers and template
syntax are escaped; benign text with the same characters still reads as written."""

from __future__ import annotations

from pathlib import Path

import pytest
from viewer_support import Dom

from pytest_harness_audit.readers.viewer import SessionRef, build_view, render_html
from pytest_harness_audit.session.harness import Harness

ATTACKS = {
    "file_path": '"><img src=x onerror=alert(1)>.txt',
    "template": "{{ 7*7 }}{% for x in range(3) %}x{% endfor %}",
    "pre_breakout": "</pre></details><script>alert(2)</script>",
    "style_breakout": "</style><script>alert(3)</script>",
    "svg_breakout": "</title></svg><svg onload=alert(4)>",
}
BENIGN = "if a < b && c > d: print('it\"s fine')"


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> str:
    base = tmp_path_factory.mktemp("escaping")
    harness = Harness.create(base, template="python-service", storage_dir=base / "store")
    harness.call("Read", file_path=ATTACKS["file_path"])
    for key in ("template", "pre_breakout", "style_breakout", "svg_breakout"):
        harness.call("Grep", pattern=ATTACKS[key], path="app")
    harness.call("Grep", pattern=BENIGN, path="app")
    harness.close()
    run = build_view([SessionRef(str(base / "store"), harness.session_id)], title="<i>t</i>")
    return render_html(run)


def test_no_agent_markup_becomes_an_element(page: str) -> None:
    dom = Dom(page)
    tags = {e.tag for e in dom.elements}
    assert "script" not in tags and "img" not in tags
    assert not any(k.startswith("on") for e in dom.elements for k in e.attrs)
    assert page.count("<svg") == len(dom.find("svg"))
    assert page.count("</style>") == 1
    assert "<i>t</i>" not in page


def test_template_syntax_in_a_param_is_not_evaluated(page: str) -> None:
    details = Dom(page).find("details")[1].text
    (pattern,) = [line for line in details.splitlines() if '"pattern"' in line]
    # shown as written: neither evaluated (49) nor looped (xxx)
    assert pattern.strip() == '"pattern": "{{ 7*7 }}{% for x in range(3) %}x{% endfor %}"'
    assert "{{ 7*7 }}" in page


def test_benign_text_with_the_same_characters_reads_as_written(page: str) -> None:
    dom = Dom(page)
    texts = " ".join(d.text for d in dom.find("details"))
    assert BENIGN.replace('"', '\\"') in texts  # JSON-quoted inside the parameters
    for value in ATTACKS.values():
        assert value.replace('"', '\\"') in texts
    # the strip's tooltip keeps the attribute whole
    titles = [a.attrs["title"] for a in dom.find("a") if "title" in a.attrs]
    assert any(ATTACKS["file_path"] in t for t in titles)


def test_the_plot_note_when_no_policy_was_recorded(tmp_path: Path) -> None:
    harness = Harness.create(tmp_path, template="python-service", storage_dir=tmp_path / "store")
    harness.call("Read", file_path="README.md")
    harness.close()
    (tmp_path / "store" / "policies" / f"{harness.session_id}.json").unlink()
    (session,) = build_view([SessionRef(str(tmp_path / "store"), harness.session_id)]).sessions
    assert session.score is None
    assert session.immune_note == "no recorded policy: the session was not written by a gate"
    assert session.policy == "(not recorded)"


def test_the_plot_note_when_the_ladder_is_off(tmp_path: Path) -> None:
    harness = Harness.create(
        tmp_path, template="python-service", storage_dir=tmp_path / "store", policy="permissive"
    )
    harness.call("Read", file_path="README.md")
    harness.close()
    run = build_view([SessionRef(str(tmp_path / "store"), harness.session_id)])
    assert run.sessions[0].immune_note == "the immune ladder is off in this session's policy"
    dom = Dom(render_html(run))
    assert not dom.find("svg")
    assert [p.text for p in dom.find("p", cls="immune-note")] == [
        "the immune ladder is off in this session's policy"
    ]
