"""What Node's package tools run besides a script's text is read too: local bins and script
orchestrators (``npx``, ``npm exec``, ``run-s``, ``concurrently``, ``turbo``, ``lerna``,
``wireit``); ordinary Node work stays allowed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from node_support import (
    LEAKY_BIN,
    LEAKY_CODE,
    MONOREPO,
    node_workspace,
    scripts,
)
from policy_support import DESTROYS, SECRET, UNREADABLE, safety_in, write_files


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return node_workspace(tmp_path)


# -- 1. local bins -----------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("npx evil", SECRET),
        ("npx --yes evil --flag", SECRET),
        ("npx evil@latest", SECRET),  # a version given: the local bin of that name
        ("npx -p evil evil", SECRET),
        ("npm exec evil", SECRET),
        ("npm exec -- evil", SECRET),
        ("npm x evil", SECRET),
        ("npm --loglevel silent exec evil", SECRET),
        ("pnpm exec evil", SECRET),
        ("pnpm dlx evil", SECRET),
        ("pnpx evil", SECRET),
        ("yarn evil", SECRET),  # no script `evil`: yarn runs the bin
        ("yarn exec evil", SECRET),
        ("yarn run evil", SECRET),
        ("pnpm evil", SECRET),
        ("bunx evil", SECRET),
        ("bun x evil", SECRET),
        ("npx wipe", DESTROYS),  # a shell-script bin
        ("npx -c 'cat .env'", SECRET),  # a script run with the local bins on its PATH
        ("npm exec --call='rm -rf app'", DESTROYS),
        ("pnpm exec rm -rf app", DESTROYS),  # `pnpm exec` runs any program
        ("yarn exec cat .env", SECRET),
        ("npx ./tools/leak.js", SECRET),  # a file run by its path
        ("bun run tools/leak.js", SECRET),
        ("npx own-cli", SECRET),  # the package's own `bin`
        ("npx .", SECRET),  # the package in a folder: its bins
    ],
)
def test_local_bins_are_read_as_programs(
    root: Path, command: str, expected: tuple[str, str]
) -> None:
    write_files(
        root,
        {
            "package.json": {"name": "web", "bin": {"own-cli": "cli/own.js"}, "scripts": {}},
            "cli/own.js": LEAKY_BIN,
            "tools/leak.js": LEAKY_CODE,
        },
    )
    assert safety_in(command, root) == expected


@pytest.mark.parametrize(
    ("script", "expected"),
    [
        ("evil .", SECRET),
        ("tsc -p . && evil", SECRET),
        ("cross-env NODE_ENV=production evil --fix", SECRET),
        ("wipe", DESTROYS),
        ("echo done", SECRET),  # a bin named `echo` comes first on npm's PATH
    ],
)
def test_a_script_naming_a_local_bin_runs_it(
    root: Path, script: str, expected: tuple[str, str]
) -> None:
    write_files(root, scripts(lint=script))
    write_files(root, {"node_modules/.bin/echo": "-> ../evil/bin.js"} if "echo" in script else {})
    assert safety_in("npm run lint", root) == expected


def test_a_bin_written_earlier_in_the_command(root: Path) -> None:
    write_files(root, scripts(lint="eslint ."))
    command = "printf '#!/bin/sh\\ncat .env\\n' > node_modules/.bin/eslint && npm run lint"
    assert safety_in(command, root) == SECRET


def test_a_bin_in_a_parent_folder_and_a_string_bin(root: Path) -> None:
    write_files(root, {"sub/package.json": {"scripts": {"go": "evil"}}})
    assert safety_in("npm --prefix sub run go", root) == SECRET
    write_files(root, {"pkg/package.json": {"name": "@org/tool", "bin": "main.js"}})
    write_files(root, {"pkg/main.js": LEAKY_BIN})
    assert safety_in("npm exec --prefix pkg tool", root) == SECRET


# -- 2. orchestrators --------------------------------------------------------------------------
ORCHESTRATED = {
    "package.json": {
        "name": "web",
        "scripts": {
            "build:js": "tsc",
            "build:css": "echo css",
            "build:leak": "cat .env",
            "lint:a": "echo a",
            "lint:deep:wipe": "rm -rf app",
            "ok": "echo ok",
            "also": "echo also",
            "prefine": "cat .env",
            "fine": "echo fine",
        },
    }
}


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("run-s ok build:leak", SECRET),
        ("run-p ok build:leak", SECRET),
        ("npm-run-all ok build:leak --parallel", SECRET),
        ('npm-run-all -s "build:*"', SECRET),  # a glob over script names
        ("npm-run-all -p 'lint:**'", DESTROYS),  # `**` across `:` parts
        ("npx run-s fine", SECRET),  # `npm run fine` runs `prefine` first
        ('concurrently "npm:build:leak" "echo hi"', SECRET),
        ('concurrently -n a,b "npm run build:leak" "echo hi"', SECRET),
        ('concurrently "yarn:build:*"', SECRET),
        ('concurrently --kill-others "cat .env"', SECRET),
        ("concurrently --teardown 'rm -rf app' 'echo hi'", DESTROYS),
        ("nx run web:build", UNREADABLE),
    ],
)
def test_orchestrators_run_the_scripts_they_name(
    root: Path, command: str, expected: tuple[str, str]
) -> None:
    write_files(root, ORCHESTRATED)
    assert safety_in(command, root) == expected
    # and from inside a script, as they are used
    manifest = json.loads((root / "package.json").read_text(encoding="utf-8"))
    manifest["scripts"]["go"] = command
    write_files(root, {"package.json": manifest})
    assert safety_in("npm run go", root) == expected


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("turbo run build", SECRET),  # `prep` is a task `build` depends on
        ("turbo build --filter=b", SECRET),
        ("npx turbo run test", DESTROYS),
        ("lerna run test", DESTROYS),
        ("lerna run prep --stream", SECRET),
        ("lerna exec -- cat .env", SECRET),
        ("npm run test --workspaces", DESTROYS),
        ("pnpm -r test", DESTROYS),
        ("npm run prep -w b", SECRET),  # a workspace by its package name
        ("npm run prep -w packages/a -w packages/b", SECRET),
        ("yarn workspace b prep", SECRET),
        ("yarn workspaces run test", DESTROYS),
        ("yarn workspaces foreach -A run prep", SECRET),
        ("npm run x -w nowhere", UNREADABLE),
    ],
)
def test_monorepo_runners_run_each_package_script(
    root: Path, command: str, expected: tuple[str, str]
) -> None:
    write_files(root, MONOREPO)
    assert safety_in(command, root) == expected


def test_a_runner_without_workspaces_is_unreadable(root: Path) -> None:
    write_files(root, scripts(build="echo"))
    assert safety_in("turbo run build", root) == UNREADABLE


@pytest.mark.parametrize(
    ("wireit", "expected"),
    [
        ({"build": {"command": "cat .env"}}, SECRET),
        (
            {
                "build": {"command": "tsc", "dependencies": ["clean"]},
                "clean": {"command": "rm -rf app"},
            },
            DESTROYS,
        ),
        ({"build": {"dependencies": ["./sub:leak"]}}, SECRET),
        ({}, UNREADABLE),
    ],
)
def test_wireit_scripts_read_their_configuration(
    root: Path, wireit: dict[str, object], expected: tuple[str, str]
) -> None:
    write_files(
        root,
        {
            "package.json": {
                "scripts": {"build": "wireit", "clean": "wireit"},
                "wireit": wireit,
            },
            "sub/package.json": {"scripts": {"leak": "cat ../.env"}},
        },
    )
    assert safety_in("npm run build", root) == expected


# -- benign look-alikes ------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("files", "command"),
    [
        ({}, "npx prettier --check ."),
        ({}, "npx cowsay hello"),  # no local bin: fetched from the registry, as before
        ({}, "pnpm exec tsc --noEmit"),
        (scripts(lint="eslint ."), "npm run lint"),
        (scripts(lint="prettier --check src"), "npm run lint"),
        (scripts(a="echo a", b="tsc -p ."), "run-s a b"),
        (scripts(**{"build:a": "echo a", "build:b": "echo b"}), "npm-run-all -p 'build:*'"),
        (scripts(a="echo a", b="echo b"), 'concurrently "npm:a" "npm run b"'),
        (
            {
                "package.json": {
                    "config": {"port": "8080"},
                    "scripts": {"start": "serve -l $npm_package_config_port"},
                }
            },
            "npm start",
        ),
        (
            {"package.json": {"version": "1.2.3", "scripts": {"v": "echo $npm_package_version"}}},
            "npm run v",
        ),
        (
            {".npmrc": "registry=https://registry.npmjs.org/\n", **scripts(build="tsc")},
            "npm run build",
        ),
        ({".npmrc": "script-shell=bash\n", **scripts(build="tsc")}, "npm run build"),
        ({".yarnrc.yml": "nodeLinker: node-modules\n", **scripts(build="tsc")}, "yarn build"),
        (scripts(build="tsc"), "NODE_OPTIONS=--max-old-space-size=4096 npm run build"),
        (
            {
                **MONOREPO,
                "package.json": {
                    "workspaces": ["packages/a"],
                    "scripts": {"build": "turbo run build"},
                },
                "turbo.json": {},
            },
            "npm run build",
        ),
        (
            {
                "package.json": {"workspaces": ["packages/*"]},
                "packages/a/package.json": {"scripts": {"postinstall": "tsc"}},
            },
            "npm install",
        ),
        (
            {
                "package.json": {
                    "scripts": {"build": "wireit"},
                    "wireit": {"build": {"command": "tsc"}},
                }
            },
            "npm run build",
        ),
    ],
)
def test_ordinary_node_work_stays_allowed(
    root: Path, files: dict[str, object], command: str
) -> None:
    write_files(root, files)
    assert safety_in(command, root) == ("allow", None)


@pytest.mark.parametrize(
    ("files", "command"),
    [
        (scripts(a="run-s a"), "npm run a"),  # a script running itself
        (scripts(a="npm run b", b="npm run a"), "npm run a"),
        (
            {
                "package.json": {
                    "scripts": {"a": "wireit"},
                    "wireit": {"a": {"dependencies": ["a"]}},
                }
            },
            "npm run a",
        ),
        (
            {
                "package.json": {"workspaces": ["**"]},
                "turbo.json": {"tasks": {"b": {"dependsOn": ["^b"]}}},
            },
            "turbo run b",
        ),
        ({"package.json": {"workspaces": {"packages": 7}}, ".npmrc": "\x00=\n[x\n=;\n"}, "npm ci"),
        ({"deno.jsonc": "{/* unterminated", "package.json": "[1, 2]"}, "deno task x"),
        (
            {
                "package.json": {
                    "config": {"x": {"y": [[[[[[[[[["deep"]]]]]]]]]]}},
                    "scripts": {"a": "echo $npm_package_config_x_y_0"},
                }
            },
            "npm run a",
        ),
    ],
    ids=["self", "cycle", "wireit cycle", "turbo cycle", "garbage", "bad json", "deep config"],
)
def test_hostile_node_projects_never_raise(
    root: Path, files: dict[str, object], command: str
) -> None:
    write_files(root, files)
    assert safety_in(command, root)[0] in ("allow", "warn", "deny")
