"""scripts/one_of_each.py: the copies of a concept are found and fail the check."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "one_of_each.py"


@pytest.fixture(scope="module")
def one_of_each() -> ModuleType:
    spec = importlib.util.spec_from_file_location("one_of_each", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["one_of_each"] = module
    spec.loader.exec_module(module)
    return module


def _run(module: ModuleType, root: Path, files: dict[str, str]) -> int:
    package = root / "pytest_harness_audit"
    for name, text in {"__init__.py": "", **files}.items():
        path = package / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return int(module.main(["--package", str(package)]))


HOMES = {
    "audit/tags.py": "def parse_tags(tags):\n"
    "    return [t for t in tags if t.startswith('policy:')]\n",
    "policy/glob.py": "def translate(p):\n    return p.replace('*', '[^/]*')\n",
    "policy/source.py": "def resolve_policy(name):\n"
    "    if name in PRESET_NAMES:\n"
    "        return Policy.preset(name)\n"
    "    return Policy.load(name)\n",
}


def test_one_of_each_passes(
    one_of_each: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = _run(
        one_of_each, tmp_path, {**HOMES, "audit/records.py": "def display_target(t): ...\n"}
    )
    out = capsys.readouterr().out
    assert code == 0, out
    assert "decision-tag parsers outside pytest_harness_audit.audit.tags: 0" in out


@pytest.mark.parametrize(
    ("extra", "shown"),
    [
        (
            {"a.py": "def display_target(t): ...\n", "b.py": "def display_target(t): ...\n"},
            "display_target defined in: 2",
        ),
        (
            {"view.py": "def denied(c):\n    return 'enforced:false' in c\n"},
            "decision-tag parsers outside pytest_harness_audit.audit.tags: 1",
        ),
        (
            {"tools/g.py": "STAR = '[^/]*'\n"},
            "glob -> regex translations outside pytest_harness_audit.policy.glob: 1",
        ),
        (
            {
                "cli.py": "def pick(a):\n"
                "    return Policy.load(a.p) if a.p else Policy.preset(a.n)\n"
            },
            "policy-source resolvers outside pytest_harness_audit.policy.source: 1",
        ),
        ({"a/clock.py": "", "b/clock.py": ""}, "clock.py files: 2"),
    ],
)
def test_a_copy_fails(
    one_of_each: ModuleType,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    extra: dict[str, str],
    shown: str,
) -> None:
    code = _run(one_of_each, tmp_path, {**HOMES, **extra})
    assert code == 1
    assert shown in capsys.readouterr().out


def test_a_preset_by_a_constant_name_is_no_resolver(
    one_of_each: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bench = "def rows(paths):\n    return [Policy.preset('safety'), *map(Policy.load, paths)]\n"
    code = _run(one_of_each, tmp_path, {**HOMES, "bench.py": bench})
    assert code == 0, capsys.readouterr().out
