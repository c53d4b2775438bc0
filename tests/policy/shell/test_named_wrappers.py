"""Programs that run the rest of their words as a command: known by name, or found by what
follows their own words.

Each of these deleted ``app/`` while the ``safety`` preset allowed it: ``chronic``, ``fakeroot``,
``proot``, ``tini``, ``gosu`` … run their operands; ``cgexec -g cpu:x``, ``retry --``,
``gdb --args`` or ``xterm -e`` hand a command after options of their own. The look-alikes are
programs whose own subcommand is named ``rm`` (``brew rm``), or a word ``rm`` that is an
option's value. Tool runners (``uvx``, ``uv tool run``, ``pipx run``) and a program's second
name (``pytest-3``) run the program as typed.
"""

from __future__ import annotations

import functools

import pytest

from pytest_harness_audit.policy import Policy

DESTROYS = ("deny", "deny-destructive-commands")
SECRET = ("deny", "deny-secret-files")
ALLOWED = ("allow", None)


@functools.cache
def _policies() -> tuple[Policy, Policy]:
    fast = Policy.preset("safety")
    full = Policy.preset("safety")
    full.prefilter_enabled = False
    return fast, full


def decide(command: str) -> tuple[str, str | None]:
    """``(decision, rule)`` of ``safety`` for the Bash ``command``, equal on both paths."""
    fast, full = _policies()
    quick = fast.evaluate("Bash", {"command": command})
    slow = full.evaluate("Bash", {"command": command})
    assert (quick.decision, quick.rule_id) == (slow.decision, slow.rule_id)
    return quick.decision, quick.rule_id


@pytest.mark.parametrize(
    "wrapper",
    [
        "chronic",
        "chronic -e",
        "fakeroot",
        "fakeroot -s state.db",
        "fakechroot",
        "proot -b /tmp",
        "catchsegv",
        "dumb-init",
        "dumb-init -r 15:2",
        "tini --",
        "tini -p SIGTERM --",
        "gosu root",
        "su-exec app",
        "s6-setuidgid app",
        "setpriv --reuid=0",
        "setpriv --reuid 0 --regid 0",
        "with-contenv",
        "toybox",
        "ccache",
        "distcc",
        "systemd-inhibit --why=build",
        "numactl -C 0",
        "numactl --physcpubind=0",
        "cgexec -g cpu:x",
        "mpirun -n 1",
        "mpiexec -np 2",
        "cpulimit -l 50 --",
        "trickle -d 10",
        "nq",
        "tsp -L job",
        "sem -j 2",
    ],
)
def test_a_wrapper_known_by_name_runs_its_command(wrapper: str) -> None:
    assert decide(f"{wrapper} rm -rf app") == DESTROYS


@pytest.mark.parametrize(
    "command",
    [
        "retry -- rm -rf app",
        "watchexec -- rm -rf app",
        "chamber exec app -- rm -rf app",
        "pueue add -- rm -rf app",
        "gdb -batch -ex run --args rm -rf app",
        "xterm -e rm -rf app",
        "konsole -e rm -rf app",
        "gnome-terminal -- rm -rf app",
        "somewrapper --flag value rm -rf app",
        "somewrapper run /bin/rm -rf app",
        "somewrapper run find app -delete",
        "somewrapper run shred -u app/main.py",
    ],
)
def test_a_command_after_an_unknown_program_s_own_words_is_read(command: str) -> None:
    assert decide(command) == DESTROYS


def test_a_copy_of_a_credential_file_among_the_operands_is_a_read() -> None:
    assert decide("somewrapper exec cp .env /tmp/x") == SECRET


@pytest.mark.parametrize(
    "command",
    [
        "brew rm x",
        "mc rm --recursive --force play/bucket",
        "npm rm lodash",
        "git rm -r --cached build",
        "dvc remove data.dvc",
        "ccache -M 5G",
        "ccache gcc -c x.c",
        "fakeroot dpkg-deb --build pkg",
        "tini -- python app.py",
        "gosu app python manage.py migrate",
        "numactl -C 0 python bench.py",
        "xterm -e vim notes.txt",
        "mpirun -n 4 ./a.out",
        "chronic make test",
        "cpulimit -l 50 -- make",
        "tool --exclude rm -rf x",
        "man rm",
        "tldr rm",
        "helm upgrade x . --set a=rm",
    ],
)
def test_look_alikes_stay_allowed(command: str) -> None:
    assert decide(command) == ALLOWED


@pytest.mark.parametrize(
    "command",
    [
        "uvx pytest --basetemp=app",
        "uvx --from pytest pytest --basetemp=app",
        "uvx --from=pytest pytest@8.0 --basetemp=app",
        "uv tool run pytest --basetemp=app",
        "pipx run pytest --basetemp=app",
        "pipx run --spec pytest pytest --basetemp=app",
        "pytest-3 --basetemp=app",
        "py.test-3 -q --basetemp app",
        "uvx -p 3.12 rm -rf app",
    ],
)
def test_a_tool_runner_or_a_second_name_runs_the_program_as_typed(command: str) -> None:
    assert decide(command) == DESTROYS


@pytest.mark.parametrize(
    "command",
    [
        "uvx ruff check .",
        "uvx --with rm pytest -q",
        "pipx run cowsay hi",
        "pipx install ruff",
        "uv tool install ruff",
        "pytest-3 -q",
    ],
)
def test_tool_runner_look_alikes_stay_allowed(command: str) -> None:
    assert decide(command) == ALLOWED
