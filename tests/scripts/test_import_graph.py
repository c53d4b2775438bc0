"""scripts/import_graph.py: circles (TYPE_CHECKING and local imports count) and size limits."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "import_graph.py"


@pytest.fixture(scope="module")
def import_graph() -> ModuleType:
    spec = importlib.util.spec_from_file_location("import_graph", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["import_graph"] = module
    spec.loader.exec_module(module)
    return module


def _package(root: Path, files: dict[str, str]) -> Path:
    package = root / "pkg"
    for name, text in files.items():
        path = package / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return package


def test_a_type_checking_import_closes_a_circle(
    import_graph: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    package = _package(
        tmp_path,
        {
            "__init__.py": "",
            "low.py": "from typing import TYPE_CHECKING\n"
            "if TYPE_CHECKING:\n    from pkg.high import High\n",
            "high.py": "from pkg import low\n",
            "alone.py": "import os\n",
        },
    )
    assert import_graph.main(["--package", str(package)]) == 1
    out = capsys.readouterr().out
    assert "import circles: 1" in out
    assert "pkg.high, pkg.low" in out


def test_function_level_and_relative_imports_count(
    import_graph: ModuleType, tmp_path: Path
) -> None:
    package = _package(
        tmp_path,
        {
            "__init__.py": "",
            "sub/__init__.py": "",
            "sub/a.py": "def f():\n    from . import b\n",
            "sub/b.py": "from ..sub.a import f\n",
        },
    )
    graph = import_graph.build_graph(import_graph.discover(package))
    assert graph["pkg.sub.a"] == {"pkg.sub.b"}
    assert graph["pkg.sub.b"] == {"pkg.sub.a"}
    assert import_graph.circles(graph) == [["pkg.sub.a", "pkg.sub.b"]]


def test_a_module_importing_itself_is_a_circle(import_graph: ModuleType, tmp_path: Path) -> None:
    package = _package(tmp_path, {"__init__.py": "", "me.py": "import pkg.me\n"})
    graph = import_graph.build_graph(import_graph.discover(package))
    assert import_graph.circles(graph) == [["pkg.me"]]


def test_a_clean_package_passes(
    import_graph: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    package = _package(
        tmp_path,
        {"__init__.py": "from pkg.a import x\n", "a.py": "x = 1\n", "b.py": "import pkg\n"},
    )
    assert import_graph.main(["--package", str(package)]) == 0
    assert "import circles: 0" in capsys.readouterr().out


def test_long_modules_and_classes_are_reported(
    import_graph: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    body = "\n".join(f"    x{i} = {i}" for i in range(12))
    package = _package(tmp_path, {"__init__.py": "", "big.py": f"class Big:\n{body}\n"})
    assert import_graph.main(["--package", str(package), "--max-class-lines", "10"]) == 1
    out = capsys.readouterr().out
    assert "classes over 10 lines: 1" in out
    assert "pkg.big.Big: 13 lines" in out
    assert import_graph.main(["--package", str(package), "--max-module-lines", "5"]) == 1
    assert "pkg.big: 13 lines" in capsys.readouterr().out
