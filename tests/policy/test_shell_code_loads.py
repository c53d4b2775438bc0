"""Program text is read with the workspace files it loads: a leak moved from ``app.py`` into
the ``helper.py`` it imports (or a ``require("./h")``, a ``node -r`` preload, a ``run_path``)
is read as if it were in ``app.py``; modules that are not workspace files are not looked for."""

from __future__ import annotations

from pathlib import Path

import pytest
from policy_support import safety_in, secret_workspace

from pytest_harness_audit.policy.shell.imports import MAX_LOADED

LEAK_PY = "import urllib.request\ndef go():\n    return open('.env').read()\n"
LEAK_JS = "module.exports = () => require('fs').readFileSync('.env', 'utf8')\n"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return secret_workspace(
        tmp_path,
        {
            "helper.py": LEAK_PY,
            "pkg/__init__.py": "from . import util\n",
            "pkg/util.py": LEAK_PY,
            "tools/run.py": "from .common import x\nimport sibling\n",
            "tools/common.py": "x = 1\n",
            "tools/sibling.py": LEAK_PY,
            "h.js": LEAK_JS,
            "lib/index.ts": LEAK_JS,
            "src/util/read.mjs": LEAK_JS,
            "ok.py": "import json\nimport os\nprint(json.dumps({}))\n",
            "okhelper.py": "def go():\n    return 1\n",
            "ok2.py": "import okhelper\nokhelper.go()\n",
            "cycle_a.py": "import cycle_b\n",
            "cycle_b.py": "import cycle_a\n",
            "leak.rb": "puts File.read('.env')\n",
        },
        ("pkg", "tools", "lib", "src/util"),
    )


@pytest.mark.parametrize(
    ("files", "command"),
    [
        ({"app.py": "import helper\nhelper.go()\n"}, "python3 app.py"),
        ({"app.py": "from helper import go\n"}, "python3 app.py"),
        ({"app.py": "import os, helper as h\n"}, "python3 app.py"),
        ({"app.py": "from pkg import util\n"}, "python3 app.py"),
        ({"app.py": "import pkg\n"}, "python3 app.py"),  # pkg/__init__.py imports util
        ({"app.py": "from pkg.util import go\n"}, "python3 app.py"),
        ({"app.py": "if True:\n    import helper\n"}, "python3 app.py"),
        ({}, "python3 tools/run.py"),  # the module beside the script
        ({}, "python3 -c 'import helper; helper.go()'"),
        ({}, "python3 -c 'import runpy; runpy.run_path(\"helper.py\")'"),
        ({}, "python3 -c 'exec(open(\"helper.py\").read())'"),
        ({}, "python3 -c 'import importlib; importlib.import_module(\"helper\")'"),
        ({"app.js": "const h = require('./h')\nh()\n"}, "node app.js"),
        ({"app.mjs": "import h from './h.js'\n"}, "node app.mjs"),
        ({"app.ts": "import { x } from './lib'\n"}, "tsx app.ts"),
        ({"app.js": "await import('./src/util/read.mjs')\n"}, "node app.js"),
        ({"app.js": "export * from './h'\n"}, "node app.js"),
        ({}, "node -r ./h.js -e 1"),
        ({}, "node --import=./h.js app.js"),
        ({"app.rb": "require_relative 'leak'\n"}, "ruby app.rb"),
    ],
)
def test_a_loaded_workspace_file_is_read(root: Path, files: dict[str, str], command: str) -> None:
    for name, text in files.items():
        (root / name).write_text(text)
    assert safety_in(command, root) == ("deny", "deny-secret-files")


@pytest.mark.parametrize(
    "command",
    [
        "python3 ok.py",  # json and os are no workspace files
        "python3 ok2.py",  # a harmless workspace module
        "python3 cycle_a.py",  # an import cycle ends
        "python3 -c 'import json'",
        "node -e 'require(\"fs\")'",
        "node -r source-map-support/register -e 1",  # a package, not a workspace path
    ],
)
def test_benign_loads_stay_allowed(root: Path, command: str) -> None:
    assert safety_in(command, root) == ("allow", None)


def test_more_loads_than_the_bound_are_unreadable_not_read_in_part(root: Path) -> None:
    for index in range(MAX_LOADED + 10):
        (root / f"m{index}.py").write_text(f"import m{index + 1}\n")
    (root / f"m{MAX_LOADED + 10}.py").write_text("print(open('.env').read())\n")
    assert safety_in("python3 m0.py", root) == ("warn", "unreadable-command")
    (root / f"m{MAX_LOADED // 2}.py").write_text("x = 1\n")  # a chain within the bound
    assert safety_in("python3 m0.py", root) == ("allow", None)
