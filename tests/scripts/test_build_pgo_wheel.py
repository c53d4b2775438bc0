"""scripts/build_pgo_wheel.py: build instrumented, train on the policy tests, build with the
profile, in one fixed build folder (the steps it runs, each command recorded, not run)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "build_pgo_wheel.py"


@pytest.fixture
def script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("build_pgo_wheel", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _recording(
    script: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> list[tuple[list[str], dict[str, str]]]:
    steps: list[tuple[list[str], dict[str, str]]] = []

    def run(command: list[Any], **env: str) -> None:
        words = [str(part) for part in command]
        steps.append((words, env))
        if "build" in words and "--outdir" in words:  # a wheel, where the backend would put it
            outdir = Path(words[words.index("--outdir") + 1])
            outdir.mkdir(parents=True, exist_ok=True)
            (outdir / "pkg-0-cp311-linux.whl").write_bytes(b"")

    monkeypatch.setattr(script, "run", run)
    return steps


def test_three_steps_in_one_build_folder(
    script: ModuleType, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    steps = _recording(script, monkeypatch)
    outdir = tmp_path / "out"
    outdir.mkdir()
    (outdir / "stale-0-py3-none-any.whl").write_bytes(b"")
    assert script.main(["--outdir", str(outdir), "--keep", str(tmp_path / "work")]) == 0
    builds = [(words, env) for words, env in steps if "build" in words]
    assert len(builds) == 2
    (first, generate), (second, use) = builds
    profiles = tmp_path / "work" / "profiles"
    assert f"-fprofile-generate={profiles}" in generate["CFLAGS"].split()
    assert f"-fprofile-generate={profiles}" in generate["LDFLAGS"].split()
    assert f"-fprofile-use={profiles}" in use["CFLAGS"].split()
    assert "-fprofile-generate" not in use["CFLAGS"]
    # the same folder both times: the profile is found by the objects' paths
    assert generate["HATCH_MYPYC_BUILD_DIR"] == use["HATCH_MYPYC_BUILD_DIR"]
    assert (
        generate["HATCH_BUILD_HOOK_ENABLE_MYPYC"] == use["HATCH_BUILD_HOOK_ENABLE_MYPYC"] == "true"
    )
    assert first[first.index("--outdir") + 1] != str(outdir)
    assert second[second.index("--outdir") + 1] == str(outdir)
    # training: between the builds, the policy and audit tests on the instrumented wheel, compiled
    training = steps[steps.index(builds[0]) + 1 : steps.index(builds[1])]
    installed = next(words for words, _ in training if "install" in words)
    assert any(word.endswith(".whl") for word in installed)
    (tests, env) = next((words, env) for words, env in training if "tests/policy" in words)
    assert Path(tests[0]).name == "pytest" and env["HARNESS_AUDIT_EXPECT_COMPILED"] == "1"
    assert "tests/audit" in tests  # the compiled append path is trained too
    assert [p.name for p in outdir.glob("*.whl")] == ["pkg-0-cp311-linux.whl"]


def test_the_work_folder_is_removed_unless_kept(
    script: ModuleType, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    steps = _recording(script, monkeypatch)
    assert script.main(["--outdir", str(tmp_path / "out")]) == 0
    work = Path(steps[0][1]["HATCH_MYPYC_BUILD_DIR"]).parent
    assert not work.exists()


def test_a_failed_step_stops_with_one_line(script: ModuleType, tmp_path: Path) -> None:
    with pytest.raises(SystemExit) as stopped:
        script.run([sys.executable, "-c", "raise SystemExit(3)"])
    message = str(stopped.value)
    assert "failed (3)" in message and "raise SystemExit(3)" in message
    assert "\n" not in message
