"""What a Node project's configuration, its scripts' variables and its local packages make a
package runner run is read too: ``$npm_package_…``, ``script-shell``, ``NODE_OPTIONS``,
``yarnPath``, ``file:`` dependencies and workspace packages, ``node --run``, ``deno task``."""

from __future__ import annotations

from pathlib import Path

import pytest
from node_support import (
    LEAKY_BIN,
    LEAKY_CODE,
    MONOREPO,
    SHELL_FILES,
    node_workspace,
    scripts,
)
from policy_support import DESTROYS, SECRET, UNREADABLE, safety_in, write_files

from pytest_harness_audit.policy.shell.node_config import npmrc, package_variables


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return node_workspace(tmp_path)


# -- 3. variables npm gives a script -----------------------------------------------------------
@pytest.mark.parametrize(
    ("manifest", "expected"),
    [
        ({"config": {"f": ".env"}, "scripts": {"leak": "cat $npm_package_config_f"}}, SECRET),
        ({"config": {"f": ".env"}, "scripts": {"leak": "cat ${npm_package_config_f}"}}, SECRET),
        (
            {"config": {"cmd": "rm -rf app"}, "scripts": {"leak": "eval $npm_package_config_cmd"}},
            DESTROYS,
        ),
        (
            {"config": {"cmd": "cat .env"}, "scripts": {"leak": 'sh -c "$npm_package_config_cmd"'}},
            SECRET,
        ),
        ({"scripts": {"y": "rm -rf app", "leak": 'sh -c "$npm_package_scripts_y"'}}, DESTROYS),
        (
            {
                "config": {"f": ".env"},
                "scripts": {"leak": 'node -e "fs.readFileSync(process.env.npm_package_config_f)"'},
            },
            SECRET,
        ),
        ({"name": ".env", "scripts": {"leak": "cp $npm_package_name /tmp/leak"}}, SECRET),
        ({"files": ["dist", ".env"], "scripts": {"leak": "cat $npm_package_files_1"}}, SECRET),
    ],
)
def test_package_variables_are_put_in(
    root: Path, manifest: dict[str, object], expected: tuple[str, str]
) -> None:
    write_files(root, {"package.json": manifest})
    assert safety_in("npm run leak", root) == expected
    assert safety_in("yarn leak", root) == expected


def test_configuration_from_the_environment_is_unreadable(root: Path) -> None:
    write_files(root, {".npmrc": "script-shell=${TOOLS}/sh\n", **scripts(build="echo")})
    assert safety_in("npm run build", root) == UNREADABLE
    assert safety_in("NODE_OPTIONS='-r $X' node app.js", root) == UNREADABLE
    assert safety_in('NODE_OPTIONS="-r $(ls hooks | head -1)" node app.js', root) == UNREADABLE


def test_config_variables_come_from_npmrc_too(root: Path) -> None:
    write_files(root, {".npmrc": "leak-file=.env\n", **scripts(x="cat $npm_config_leak_file")})
    assert safety_in("npm run x", root) == SECRET


@pytest.mark.parametrize(
    ("files", "command"),
    [
        ({".npmrc": "script-shell=./evil.sh\n"}, "npm run build"),
        ({".npmrc": 'script-shell = "./evil.sh"\n'}, "pnpm build"),
        ({"conf/npmrc": "script-shell=./evil.sh\n"}, "npm run build --userconfig conf/npmrc"),
        ({}, "npm --script-shell ./evil.sh run build"),
        ({}, "npm run build --script-shell=./evil.sh"),
        ({}, "npm_config_script_shell=./evil.sh npm run build"),
        ({}, "env NPM_CONFIG_SCRIPT_SHELL=./evil.sh npm run build"),
        (
            {"conf/npmrc": "script-shell=./evil.sh\n"},
            "NPM_CONFIG_USERCONFIG=conf/npmrc npm run build",
        ),
        ({".yarnrc": 'script-shell "./evil.sh"\n'}, "yarn build"),
        ({".npmrc": "node-options=--require ./preload.js\n"}, "npm run build"),
        ({".npmrc": "script-shell=./evil.sh ; a comment\n"}, "npm run build"),
        ({".npmrc": "script-shell=${PWD}/evil.sh\n"}, "npm run build"),
        ({}, "NODE_OPTIONS='--require ./preload.js' npm test"),
        ({}, "NODE_OPTIONS=--import=./preload.js node -v"),
        ({}, "export NODE_OPTIONS='-r ./preload'; npm run build"),
        ({"node_modules/hook/index.js": LEAKY_CODE}, "NODE_OPTIONS='-r hook' npm run build"),
        ({}, "npm --node-options='--require ./preload.js' run build"),
        (
            {
                ".yarnrc.yml": "yarnPath: .yarn/releases/yarn.cjs\n",
                ".yarn/releases/yarn.cjs": LEAKY_CODE,
            },
            "yarn build",
        ),
        (
            {
                ".yarnrc.yml": "plugins:\n  - path: .yarn/plugins/p.cjs\n",
                ".yarn/plugins/p.cjs": LEAKY_CODE,
            },
            "yarn --version",
        ),
        ({".yarnrc": 'yarn-path "./preload.js"\n'}, "yarn build"),
        ({".pnpmfile.cjs": LEAKY_CODE}, "pnpm install"),
        ({"bunfig.toml": 'preload = ["./preload.js"]\n'}, "bun run build"),
    ],
)
def test_configuration_that_runs_a_program_is_read(
    root: Path, files: dict[str, object], command: str
) -> None:
    write_files(root, {**SHELL_FILES, **files})
    assert safety_in(command, root) == SECRET


# -- 5. local packages an install builds -------------------------------------------------------
@pytest.mark.parametrize(
    ("files", "command", "expected"),
    [
        ({"package.json": {"dependencies": {"v": "file:./vendor/v"}}}, "npm install", DESTROYS),
        ({"package.json": {"devDependencies": {"v": "link:vendor/v"}}}, "pnpm install", DESTROYS),
        ({"package.json": {"dependencies": {"v": "portal:./vendor/v"}}}, "yarn", DESTROYS),
        ({"package.json": {"workspaces": ["vendor/*"]}}, "npm ci", DESTROYS),
        ({"package.json": {"workspaces": {"packages": ["vendor/v"]}}}, "yarn install", DESTROYS),
        (
            {"package.json": {}, "pnpm-workspace.yaml": "packages:\n  - 'vendor/*'\n"},
            "pnpm i",
            DESTROYS,
        ),
        ({"package.json": {}}, "npm install ./vendor/v", DESTROYS),
        ({"package.json": {"dependencies": {"v": "file:v.tgz"}}}, "npm install", UNREADABLE),
        (
            {"package.json": {"dependencies": {"v": "file:./vendor/v"}}},
            "npm install --ignore-scripts",
            ("allow", None),
        ),
    ],
)
def test_local_packages_install_scripts_are_read(
    root: Path, files: dict[str, object], command: str, expected: tuple[str, str | None]
) -> None:
    write_files(
        root,
        {"vendor/v/package.json": {"name": "v", "scripts": {"postinstall": "rm -rf ../../app"}}},
    )
    write_files(root, files)
    assert safety_in(command, root) == expected


def test_a_local_package_of_a_local_package(root: Path) -> None:
    write_files(
        root,
        {
            "package.json": {"dependencies": {"v": "file:vendor/v"}},
            "vendor/v/package.json": {"dependencies": {"w": "file:../w"}},
            "vendor/w/package.json": {"scripts": {"install": "cat ../../.env"}},
        },
    )
    assert safety_in("npm install", root) == SECRET


# -- other ways a script runs ------------------------------------------------------------------
@pytest.mark.parametrize(
    ("files", "command", "expected"),
    [
        (scripts(leak="cat .env"), "node --run leak", SECRET),
        (scripts(show="cat"), "node --run show -- .env", SECRET),
        ({"deno.json": {"tasks": {"dev": "cat .env"}}}, "deno task dev", SECRET),
        (
            {
                "deno.jsonc": '// tasks\n{"tasks": {"dev": {"command": "tsc", '
                '"dependencies": ["w"]}, "w": "rm -rf app"}}'
            },
            "deno task dev",
            DESTROYS,
        ),
        (scripts(leak="cat .env"), "deno task leak", SECRET),  # package.json scripts too
        ({"server.js": LEAKY_CODE, "package.json": {}}, "npm start", SECRET),
        ({"package.json": {}}, "npm pkg set scripts.x='cat .env' && npm run x", SECRET),
        ({"package.json": {}}, "npm set-script x 'rm -rf app'", DESTROYS),
        ({"package.json": {}}, "npm explore left-pad -- rm -rf app", DESTROYS),
        ({"node_modules/.bin/create-evil": "-> ../evil/bin.js"}, "npm init evil", SECRET),
        ({"node_modules/.bin/create-evil": "-> ../evil/bin.js"}, "yarn create evil", SECRET),
        (scripts(show="cat"), "npm run show -- .env", SECRET),
        (scripts(go="rm"), "npm run go -- -rf app", DESTROYS),
        (scripts(go="rm"), "yarn go -rf app", DESTROYS),
        (scripts(go="cat $npm_config_f"), "npm run go --f=.env", SECRET),
        (scripts(leak="cat .env"), "corepack pnpm leak", SECRET),
        (scripts(leak="cat .env"), "bun run leak", SECRET),
        (SHELL_FILES, "npm config set script-shell ./evil.sh", SECRET),
        (
            SHELL_FILES,
            "npm config set node-options='--require ./preload.js' --location=user",
            SECRET,
        ),
        (SHELL_FILES, "pnpm config set script-shell=./evil.sh", SECRET),
        (SHELL_FILES, "yarn config set yarnPath ./preload.js", SECRET),
        (SHELL_FILES, "yarn set version ./preload.js", SECRET),
        ({"package.json": {}}, "npm install ./vendor/v.tgz", UNREADABLE),
        ({"package.json": {}}, "npm rebuild", UNREADABLE),
        (
            {"vendor/p/package.json": {"bin": {"t": "t.js"}}, "vendor/p/t.js": LEAKY_BIN},
            "npx -p ./vendor/p t",
            SECRET,
        ),
        ({"evil.sh": "#!/bin/sh\ncat .env\n"}, "pnpm exec ./evil.sh", SECRET),
        ({"tools/sh": "#!/bin/sh\ncat .env\n"}, "pnpm exec ./tools/sh", SECRET),
        (SHELL_FILES, "npm-run-all --npm-path ./preload.js build", SECRET),
        (scripts(leak="cat .env"), "cd app && npm run leak", SECRET),  # npm finds it above
        (scripts(leak="cat .env"), "npm run leak --ignore-scripts", SECRET),  # still runs
        (scripts(test="rm -rf app"), "npm test --ignore-scripts", DESTROYS),
        (scripts(leak="cat .env"), "cd app && yarn leak", SECRET),
        (
            {
                "package.json": {
                    "scripts": {"b": "wireit"},
                    "wireit": {"b": {"command": "cat .env"}},
                }
            },
            "npm run b -- --watch",
            SECRET,
        ),
        (SHELL_FILES, "npm_execpath=./preload.js run-s build", SECRET),
        (SHELL_FILES, "NODE_OPTIONS=--env-file=.env npm run build", SECRET),
        (scripts(go="eval $npm_config_cmd"), "npm run go --cmd='rm -rf app'", DESTROYS),
        (scripts(dependencies="rm -rf app"), "npm install left-pad", DESTROYS),
        ({".npmrc": "pnpmfile=hooks/p.cjs\n", "hooks/p.cjs": LEAKY_CODE}, "pnpm install", SECRET),
        (
            {"tools/sh": "#!/bin/sh\ncat .env\n", ".npmrc": "script-shell=./tools/sh"},
            "npm test",
            SECRET,
        ),
        (
            {"node_modules/.bin/shx": "#!/bin/sh\ncat .env\n", ".npmrc": "script-shell=shx"},
            "npm test",
            SECRET,
        ),
    ],
)
def test_other_ways_a_script_runs(
    root: Path, files: dict[str, object], command: str, expected: tuple[str, str]
) -> None:
    write_files(root, files)
    assert safety_in(command, root) == expected


@pytest.mark.parametrize(
    ("files", "command"),
    [
        (scripts(build="tsc"), "node --run build"),
        ({"package.json": {}}, "node server.js --port 3000"),
        (
            {"deno.jsonc": '{\n  // dev server\n  "tasks": {"dev": "deno run main.ts"}\n}'},
            "deno task dev",
        ),
        ({"package.json": {}}, "npm pkg set scripts.test='vitest run'"),
        (scripts(test="vitest run"), "npm test -- --watch"),
        ({"package.json": {}}, "npm init -y"),
        (scripts(pretest="rm -rf app", test="vitest"), "npm test --ignore-scripts"),
        ({}, "npm config set registry https://registry.npmjs.org/"),
        ({}, "yarn set version stable"),
        ({"run.sh": "#!/bin/sh\necho ok\n"}, "pnpm exec ./run.sh"),
        (
            MONOREPO | {"packages/b/package.json": {"name": "b", "scripts": {"build": "tsc"}}},
            "npm run build -w b",
        ),
    ],
)
def test_other_ordinary_runs_stay_allowed(
    root: Path, files: dict[str, object], command: str
) -> None:
    write_files(root, files)
    assert safety_in(command, root) == ("allow", None)


def test_settings_and_variables_are_read_as_npm_reads_them() -> None:
    settings = npmrc('a = 1\n; comment\n# comment\nb="x;y"\nc=./s.sh ;note\nd=${HOME}/x\n')
    assert settings == {"a": "1", "b": "x;y", "c": "./s.sh", "d": "./x"}
    manifest: dict[str, object] = {"name": "@o/w", "config": {"api-url": "u"}, "files": ["a", "b"]}
    assigned = package_variables(
        "curl $npm_package_config_api_url $npm_package_files_1 $npm_package_name", manifest, "x", {}
    )
    assert "npm_package_config_api_url=u;" in assigned
    assert "npm_package_files_1=b;" in assigned
    assert "npm_package_name=@o/w;" in assigned
    assert package_variables("echo plain", manifest, "x", {}) == ""
