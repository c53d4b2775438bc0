"""Modules found beyond the importing file's folder: Python's ``PYTHONPATH`` (and the
``sitecustomize`` it holds), folders program text puts on ``sys.path``; Node packages named by
bare name in ``node_modules`` or ``NODE_PATH``. What they load is read as program text."""

from __future__ import annotations

from pathlib import Path

import pytest
from policy_support import ALLOWED, SECRET, UNREADABLE, safety_in, secret_workspace

from pytest_harness_audit.policy.shell.imports import MAX_LOADED, MAX_PACKAGES
from pytest_harness_audit.policy.shell.pymodules import module_files, sys_path_folders

EVIL = "print(open('.env').read())\n"
JS_EVIL = "require('fs').readFileSync('.env')\n"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return secret_workspace(
        tmp_path,
        {
            "lib/libevil.py": EVIL,
            "lib/libevil.js": JS_EVIL,
            "src/pkg/__init__.py": "",
            "src/pkg/mod.py": EVIL,
            "main.py": "import libevil\n",
            "tools/run.py": (
                "import os, sys\n"
                "sys.path.insert(0, os.path.join(os.path.dirname(__file__), 'vendor'))\n"
                "import hidden\n"
            ),
            "tools/vendor/hidden.py": EVIL,
            "site/sitecustomize.py": "import os\nos.system('cat .env')\n",
            "node_modules/pkg/package.json": '{"main": "main.js"}',
            "node_modules/pkg/main.js": "module.exports = require('./inner')\n",
            "node_modules/pkg/inner.js": JS_EVIL,
            "node_modules/@scope/p/index.js": JS_EVIL,
            "node_modules/exp/package.json": (
                '{"exports": {".": {"require": "./cjs.js", "import": "./esm.mjs"}}}'
            ),
            "node_modules/exp/cjs.js": JS_EVIL,
            "node_modules/ok/index.js": "module.exports = 1\n",
            "app/app.js": "const p = require('pkg')\n",
            "app/fine.js": "const ok = require('ok')\nconst fs = require('node:fs')\n",
            "node_modules/web/index.js": (
                "const dep = require('dep')\nmodule.exports = (req) => req.secret || opts.env\n"
            ),
            "node_modules/dep/index.js": JS_EVIL,
            "node_modules/hop/index.js": "module.exports = require('./lib/inner')\n",
            "node_modules/hop/lib/inner.js": JS_EVIL,
        },
    )


@pytest.mark.parametrize(
    "command",
    [
        "PYTHONPATH=lib python -c 'import libevil'",
        "PYTHONPATH=src python3 -c 'from pkg import mod'",
        "PYTHONPATH=$(pwd)/lib python main.py",
        "export PYTHONPATH=lib; python main.py",
        "env PYTHONPATH=lib python3 main.py",
        "python -c 'import sys; sys.path.insert(0, \"lib\"); import libevil'",
        "python -c 'import sys; sys.path.append(\"lib\")\nimport libevil'",
        "python -c 'import site; site.addsitedir(\"lib\"); import libevil'",
        "python tools/run.py",
        "PYTHONPATH=site python -c 'print(1)'",
        "PYTHONPATH=site python -m http.server",
        "PYTHONPATH=site pytest -q app",
        "NODE_PATH=lib node -e \"require('libevil')\"",
        "node -e \"require('pkg')\"",
        "node -e \"require('@scope/p')\"",
        "node -e \"require('exp')\"",
        "node app/app.js",
        "node --input-type=module -e \"import p from 'pkg'\"",
        "PYTHONPATH=lib python -m libevil",
        "node -r pkg -e 1",
        "node --require=@scope/p -e 1",
        "node -e \"require('hop')\"",
    ],
)
def test_a_module_found_beyond_the_importing_folder_is_read(root: Path, command: str) -> None:
    assert safety_in(command, root) == SECRET


@pytest.mark.parametrize(
    "command",
    [
        "python main.py",
        "python -c 'import os, json'",
        "PYTHONPATH=src python -c 'print(1)'",
        "python -c 'import sys; sys.path.insert(0, \"src\"); import pkg'",
        "node -e \"require('ok'); require('fs')\"",
        "node -e \"require('node:fs')\"",
        "node app/fine.js",
        "NODE_PATH=lib node -e \"require('lodash')\"",
        "python -m json.tool x.json",
        "node -r ok -e 1",
        # an installed package: its property accesses are no files, its dependencies not read
        "node -e \"require('web')\"",
    ],
)
def test_modules_that_do_nothing_harmful_are_allowed(root: Path, command: str) -> None:
    assert safety_in(command, root) == ALLOWED


def test_python_import_locations() -> None:
    assert module_files("a.b", ["", "lib"]) == [
        "a/__init__.py",
        "a/b.py",
        "a/b/__init__.py",
        "lib/a/__init__.py",
        "lib/a/b.py",
        "lib/a/b/__init__.py",
    ]
    assert module_files("not a module", ["lib"]) == []
    code = "sys.path.insert(0, os.path.join(here, 'vendor'))\nsys.path.append('/abs')\n"
    assert sys_path_folders(code, "tools") == ["vendor", "tools/vendor"]
    assert sys_path_folders("print(1)", "tools") == []


def test_the_load_bounds_hold_for_packages(tmp_path: Path) -> None:
    count = MAX_PACKAGES - 1
    files = {f"node_modules/p{i}/index.js": "module.exports = 1\n" for i in range(count)}
    files["node_modules/p_last/index.js"] = JS_EVIL
    names = [*(f"p{i}" for i in range(count)), "p_last"]
    files["many.js"] = "".join(f"require('{name}');" for name in names)
    files["more.js"] = files["many.js"] + "require('one_more');"
    chained = {f"node_modules/c/f{i}.js": f"require('./f{i + 1}')\n" for i in range(MAX_LOADED + 1)}
    chained["node_modules/c/index.js"] = "require('./f0')\n"
    chained["chain.js"] = "require('c')\n"
    root = secret_workspace(tmp_path, {**files, **chained})
    assert safety_in("node many.js", root) == SECRET
    assert safety_in("node more.js", root) == UNREADABLE
    assert safety_in("node chain.js", root) == UNREADABLE


def test_a_large_installed_package_is_left_unread_and_a_large_program_is_not(
    tmp_path: Path,
) -> None:
    padding = "// bundled\n" * 7000  # over the 64 KiB a file is read up to
    workspace = secret_workspace(
        tmp_path,
        {
            "app.js": "const big = require('big'); const small = require('small');\n",
            "node_modules/big/package.json": '{"name": "big", "main": "index.js"}',
            "node_modules/big/index.js": "module.exports = 1;\n" + padding,
            "node_modules/small/index.js": "module.exports = 2;\n",
            "big.js": "module.exports = 3;\n" + padding,
        },
    )
    assert safety_in("node app.js", workspace) == ALLOWED  # lodash, react: no warning
    assert safety_in("node big.js", workspace) == UNREADABLE  # the workspace's own program
    (workspace / "node_modules/small/index.js").write_text(JS_EVIL)
    assert safety_in("node app.js", workspace) == SECRET  # a small planted package is read
