"""``python -m pytest_harness_audit.bench.proxy`` runs end to end (figures are not judged here:
speed belongs to the benchmark's own output)."""

from __future__ import annotations

import re

import pytest

from pytest_harness_audit.bench import proxy as bench


@pytest.mark.slow
def test_the_http_bench_reports_added_latency_idle_and_under_half_open_sockets(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert bench.main(["--transport", "http", "--calls", "20", "--half-open", "80"]) == 0
    out = capsys.readouterr().out
    for label in ("idle", "with 80 half-open"):
        for row in ("direct", "through proxy", "added"):
            assert re.search(rf"^  {row}, {label} +-?\d+\.\d{{3}} +-?\d+\.\d{{3}}$", out, re.M), out
    held = re.search(r"80 kept open by the bench \(re-opened (\d+) times.*look: (.*)$", out, re.M)
    assert held is not None, out
    if held[2] != "n/a":  # the proxy never holds more than its cap of unproven connections
        assert max(int(n) for n in held[2].split("–")) <= 64


def test_bad_bench_options_are_one_usage_line(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        bench.main(["--half-open", "-1"])
    assert exited.value.code == 2
    assert "--half-open not negative" in capsys.readouterr().err
