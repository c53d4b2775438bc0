"""pytest's own options act on files wherever they are given — on its command line, in
``PYTEST_ADDOPTS``, in the ``addopts`` of a settings file (or ``-o addopts=``): ``--basetemp``
empties its folder, ``--cache-clear`` clears the cache folder, and report, log and debug files
are written. Each is judged as the deletion or the write it is; ordinary test runs, reports
and caches keep their verdict."""

from __future__ import annotations

from pathlib import Path

import pytest
from policy_support import ALLOWED, DESTROYS, safety_in, secret_workspace

from pytest_harness_audit.policy import Policy

SAFETY = Policy.preset("safety")
BASE = {"app/service.py": "VALUE = 1\n", "tests/test_a.py": "def test_a():\n    pass\n"}
PYTEST_CACHE = {
    ".pytest_cache/README.md": "# pytest cache directory #\n",
    ".pytest_cache/CACHEDIR.TAG": "Signature: 8a477f597d28d172789f06886806bc55\n",
    ".pytest_cache/v/cache/lastfailed": "{}\n",
}


def workspace(tmp_path: Path, extra: dict[str, str] | None = None) -> Path:
    return secret_workspace(tmp_path, {**BASE, **(extra or {})})


def decision(command: str) -> tuple[str, str | None]:
    evaluation = SAFETY.evaluate("Bash", {"command": command})
    return evaluation.decision, evaluation.rule_id


@pytest.mark.parametrize(
    "command",
    [
        "PYTEST_ADDOPTS=--basetemp=app pytest -q",
        'PYTEST_ADDOPTS="-q --basetemp app" python -m pytest',
        "export PYTEST_ADDOPTS=--basetemp=app; pytest",
        "env PYTEST_ADDOPTS=--basetemp=app pytest",
        "PYTEST_ADDOPTS=--basetemp=app uv run pytest",
        "pytest -o addopts=--basetemp=app",
        'pytest --override-ini="addopts=--basetemp app" -q',
        "pytest -oaddopts=--basetemp=app",
        "py.test -o cache_dir=app --cache-clear",
        "pytest --cache-clear -o cache_dir=src/",
        'pytest -o "addopts=-o cache_dir=app --cache-clear"',
    ],
)
def test_a_folder_emptied_by_options_given_elsewhere_is_destroyed(command: str) -> None:
    assert decision(command) == DESTROYS, command


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("pytest.ini", "[pytest]\naddopts = -q --basetemp=app\n"),
        (".pytest.ini", "[pytest]\naddopts = --basetemp app\n"),
        ("pyproject.toml", '[tool.pytest.ini_options]\naddopts = "--basetemp=app"\n'),
        ("pyproject.toml", '[tool.pytest]\naddopts = ["--basetemp", "app"]\n'),
        ("pytest.toml", '[pytest]\naddopts = ["--basetemp=app"]\n'),
        ("tox.ini", "[pytest]\naddopts =\n    -ra\n    --basetemp=app\n"),
        ("setup.cfg", "[tool:pytest]\naddopts = --basetemp=app\n"),
        ("setup.cfg", "[tool:pytest]\ncache_dir = app\naddopts = --cache-clear\n"),
        ("pytest.ini", "[pytest]\naddopts = -o cache_dir=app --cache-clear\n"),
        ("tests/pytest.ini", "[pytest]\naddopts = --basetemp=app\n"),
    ],
)
def test_a_settings_file_that_empties_a_folder_is_read(
    tmp_path: Path, name: str, text: str
) -> None:
    command = "pytest tests" if name.startswith("tests/") else "pytest -q"
    assert safety_in(command, workspace(tmp_path, {name: text})) == DESTROYS


@pytest.mark.parametrize(
    "command",
    [
        "printf '[pytest]\\naddopts = --basetemp=app\\n' > pytest.ini && pytest -q",
        "echo '[pytest]' > cfg.ini; echo 'addopts = --basetemp=app' >> cfg.ini; pytest -c cfg.ini",
        "printf '[pytest]\\naddopts = --basetemp=app\\n' > c.ini && pytest --config-file=c.ini",
        "printf '[tool:pytest]\\ncache_dir = app\\n' > setup.cfg && pytest --cache-clear",
    ],
)
def test_a_settings_file_written_in_the_command_is_read(tmp_path: Path, command: str) -> None:
    assert safety_in(command, workspace(tmp_path)) == DESTROYS, command


def test_a_settings_file_given_by_option_is_read_only_when_given(tmp_path: Path) -> None:
    root = workspace(tmp_path, {"ci/pytest-ci.ini": "[pytest]\naddopts = --basetemp=app\n"})
    assert safety_in("pytest -c ci/pytest-ci.ini", root) == DESTROYS
    assert safety_in("pytest -q", root) == ALLOWED


def test_a_cache_folder_holding_work_is_destroyed_by_a_cache_clear(tmp_path: Path) -> None:
    root = workspace(tmp_path, {"notes/todo.md": "work in progress\n"})
    assert safety_in("pytest -o cache_dir=notes --cache-clear", root) == DESTROYS
    assert safety_in("pytest -o cache_dir=notes", root) == ALLOWED  # no clear: nothing removed


@pytest.mark.parametrize(
    "option",
    [
        "--junitxml=SOUL.md",
        "--junit-xml SOUL.md",
        "--resultlog=SOUL.md",
        "--result-log=SOUL.md",
        "--report-log SOUL.md",
        "--html=SOUL.md",
        "--json-report --json-report-file=SOUL.md",
        "--benchmark-json=SOUL.md",
        "--log-file=SOUL.md",
        "--debug=SOUL.md",
        "--debug SOUL.md",
        "-o log_file=SOUL.md",
        "--cov=app --cov-report=xml:SOUL.md",
        "--cov=app --cov-report json:SOUL.md",
        "--junitx=SOUL.md",  # a start of the option (pytest before 5.0)
    ],
)
def test_a_report_written_onto_a_persona_file_is_denied(option: str) -> None:
    assert decision(f"pytest -q {option}") == DESTROYS, option


@pytest.mark.parametrize(
    "command",
    [
        "pytest --junitxml=.claude/settings.json",
        "python -m pytest --log-file=.claude/settings.json",
        "PYTEST_ADDOPTS=--junitxml=.claude/settings.json pytest",
    ],
)
def test_a_report_written_onto_host_settings_is_denied(command: str) -> None:
    assert decision(command) == ("deny", "deny-host-config-write"), command


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("pytest.ini", "[pytest]\naddopts = --junitxml=SOUL.md\n"),
        ("pytest.ini", "[pytest]\nlog_file = SOUL.md\n"),
        ("pyproject.toml", '[tool.pytest]\nlog_file = "SOUL.md"\n'),
        ("pyproject.toml", '[tool.pytest.ini_options]\naddopts = "--debug=SOUL.md"\n'),
    ],
)
def test_a_report_a_settings_file_writes_onto_a_persona_file_is_denied(
    tmp_path: Path, name: str, text: str
) -> None:
    assert safety_in("pytest -q", workspace(tmp_path, {name: text})) == DESTROYS


@pytest.mark.parametrize(
    ("tox", "command"),
    [
        ("[testenv]\ncommands = pytest {posargs}\n", "tox -- --basetemp=app"),
        ("[testenv]\ncommands = pytest {posargs:tests}\n", "tox -e py -- --junitxml=SOUL.md"),
        ("[testenv]\nsetenv =\n    PYTEST_ADDOPTS=--basetemp=app\ncommands = pytest\n", "tox"),
        ("[testenv:ci]\ncommands = pytest --junitxml=SOUL.md\n", "tox -e ci"),
    ],
)
def test_what_tox_runs_pytest_with_is_read(tmp_path: Path, tox: str, command: str) -> None:
    assert safety_in(command, workspace(tmp_path, {"tox.ini": tox})) == DESTROYS, command


# -- look-alikes -------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "command",
    [
        "pytest -q",
        "PYTEST_ADDOPTS=-q pytest",
        "PYTEST_ADDOPTS='-ra --strict-markers' python -m pytest tests",
        "pytest --junitxml=report.xml",
        "pytest --junit-xml=build/test-results/junit.xml -q",
        "pytest --cache-clear",
        "pytest -o cache_dir=.cache/pytest --cache-clear",
        "pytest -k basetemp",
        "pytest -k junitxml -q",
        "pytest -o cache_dir=app",  # a cache folder, not cleared
        "pytest --debug",  # pytestdebug.log
        "pytest --log-file=logs/test.log --log-file-level=DEBUG",
        "pytest --cov=app --cov-report=xml:coverage.xml --cov-report=html:htmlcov",
        "pytest --cov=app --cov-report=term-missing",
        "pytest --html=report.html --self-contained-html",
        "pytest -q -- --junitxml=SOUL.md",  # the tests' own arguments
        "pytest -p no:cacheprovider -q",
    ],
)
def test_an_ordinary_run_keeps_its_verdict(command: str) -> None:
    assert decision(command) == ALLOWED, command


@pytest.mark.parametrize(
    ("files", "command"),
    [
        ({"pytest.ini": "[pytest]\naddopts = -ra --strict-markers\n"}, "pytest -q"),
        ({"pyproject.toml": '[tool.pytest.ini_options]\naddopts = "-q"\n'}, "pytest"),
        ({"pytest.toml": '[pytest]\naddopts = ["-ra"]\ncache_dir = ".cache/pytest"\n'}, "pytest"),
        ({"pytest.ini": "[pytest]\nlog_file = logs/pytest.log\n"}, "pytest"),
        ({"pytest.ini": "[pytest]\naddopts = --junitxml=report.xml\n"}, "pytest"),
        # the command line's value wins over the settings file's, as in pytest
        ({"pytest.ini": "[pytest]\naddopts = --junitxml=SOUL.md\n"}, "pytest --junitxml=r.xml"),
        ({"pytest.ini": "[pytest]\naddopts = --basetemp=app\n"}, "pytest -o addopts=-q"),
        ({"setup.cfg": "[tool:pytest]\ncache_dir = app\n"}, "pytest"),
        (PYTEST_CACHE, "pytest -o cache_dir=.pytest_cache --cache-clear"),
        ({}, "pytest -o cache_dir=build/cache --cache-clear"),  # nothing there to clear
        ({"tox.ini": "[testenv]\ncommands = pytest {posargs:tests}\n"}, "tox"),
        (
            {"tox.ini": "[testenv]\nsetenv =\n    PYTHONPATH={toxinidir}\ncommands = pytest\n"},
            "tox",
        ),
    ],
)
def test_an_ordinary_settings_file_keeps_its_verdict(
    tmp_path: Path, files: dict[str, str], command: str
) -> None:
    assert safety_in(command, workspace(tmp_path, files)) == ALLOWED, command
