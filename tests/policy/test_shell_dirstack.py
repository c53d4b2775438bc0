"""The directory stack and the working folders a script names (:mod:`.dirstack`,
:mod:`.tildes`, :mod:`.folder_values`): ``popd`` sets ``$OLDPWD``, ``pushd +N`` turns the
stack, ``~-``/``~+`` are ``$OLDPWD``/``$PWD``, ``$(cd ..; pwd)`` is the folder above."""

from __future__ import annotations

import pytest

from pytest_harness_audit.policy.shell import read_command
from pytest_harness_audit.policy.shell.place import Place, home_path


def _paths(command: str, root: str | None = "/w/ws") -> set[str]:
    reading = read_command(command, root)
    return {*reading.reads, *reading.writes, *reading.deletes, *reading.destroys}


def _moved(*commands: str) -> Place:
    place = Place()
    for command in commands:
        argv = command.split()
        place.change(argv, [False] * len(argv))
    return place


def test_popd_sets_oldpwd() -> None:
    place = _moved("pushd ..", "popd")
    assert (place.cwd, place.unknown) == (".", False)
    assert (place.previous, place.previous_unknown) == ("..", False)
    place.change(["cd", "-"], [False, False])
    assert place.cwd == ".."  # back where popd left
    assert place.variable("OLDPWD", "/w/ws") == "/w/ws"


@pytest.mark.parametrize(
    ("commands", "cwd"),
    [
        (("pushd ..", "pushd /srv", "popd"), ".."),
        (("pushd ..", "pushd /srv", "popd +1"), "/srv"),  # `..` dropped, the shell stays
        (("pushd ..", "pushd /srv", "popd +0"), ".."),
        (("pushd ..", "pushd /srv", "popd -0"), "/srv"),  # the first directory dropped
        (("pushd ..", "pushd /srv", "popd -n"), "/srv"),
        (("pushd ..", "pushd /srv", "popd -n", "popd"), "."),
        (("cd ..", "pushd /srv", "pushd +1"), ".."),
        (("pushd ..", "pushd /srv", "pushd +2"), "."),
        (("pushd ..", "pushd /srv", "pushd -0"), "."),
        (("pushd /srv", "pushd ..", "pushd"), "/srv"),  # a swap
        (("pushd /srv", "pushd ..", "pushd", "pushd"), "/"),  # `..` of `/srv`
        (("pushd ..", "pushd -n /srv"), ".."),  # saved, not gone to
        (("pushd ..", "pushd -n /srv", "popd"), "/srv"),
        (("pushd ..", "dirs", "dirs -v"), ".."),
        (("pushd ..", "pushd +5"), ".."),  # beyond the stack: bash refuses it
        (("builtin cd ..",), ".."),
        (("command cd ..",), ".."),
        (("command -p cd ..",), ".."),
        (("builtin -- cd ..",), ".."),
        (("builtin pushd ..", "pushd /srv", "builtin popd"), ".."),
        (("command -v cd",), "."),
    ],
)
def test_the_stack_moves_as_bash_moves_it(commands: tuple[str, ...], cwd: str) -> None:
    place = _moved(*commands)
    assert (place.cwd, place.unknown) == (cwd, False)


def test_what_the_reading_cannot_follow_is_not_known() -> None:
    assert _moved("popd").unknown  # a stack the script did not make
    assert _moved("pushd ..", "dirs -c", "popd").unknown
    assert _moved("pushd ..", "pushd /srv", "pushd -n +1", "popd").unknown  # turned, not modelled
    reading = read_command("pushd /srv; DIRSTACK[1]=..; popd; rm -rf *", "/w/ws")
    assert "../*" in reading.destroys  # the stack was changed: `popd` goes somewhere not known


@pytest.mark.parametrize(
    ("command", "path"),
    [
        ("pushd ..; popd; cd - && rm -rf *", "../*"),
        ("pushd ..; popd; rm -rf $OLDPWD/*", "/w/*"),
        ('pushd /; popd; rm -rf "$OLDPWD"', "/"),
        ("pushd ..; popd; rm -rf ~-/*", "/w/*"),
        ("cd ..; cd /srv; rm -rf ~-/*", "/w/*"),
        ("cd ..; cd /srv; rm -rf ~-", "/w"),
        ("cd .. && rm -rf ~+/*", "../*"),
        ("cd ~+/.. && rm -rf *", "../*"),
        ("builtin cd .. && rm -rf *", "../*"),
        ("command cd .. && rm -rf *", "../*"),
        ("pushd ..; pushd -n /srv; rm -rf *", "../*"),
        ('rm -rf "$(cd ..; pwd)"', ".."),
        ('rm -rf "$(cd .. && pwd)"', ".."),
        ('rm -rf "${PWD%/*}"', "/w"),
        ("rm -rf ${PWD%/*}/*", "/w/*"),
        ('rm -rf "$(dirname "$PWD")"', ".."),
        ('cd app && rm -rf "$(dirname "$PWD")"', "."),
        ('rm -rf "$(realpath ..)"', ".."),
        ('rm -rf "$(readlink -f ..)"', ".."),
        ('cd .. && cd /srv && rm -rf "${OLDPWD%/*}"/ws', "/ws"),  # `/w` less its last part
        ('pushd ..; pushd /srv; chmod -R 000 "${DIRSTACK[1]}"', "/w"),
        ("pushd ..; pushd /srv; chmod -R 000 ~1", "/w"),
        ("pushd ..; pushd /srv; chmod -R 000 ~+1/", "/w/"),
        ("pushd ..; pushd /srv; chmod -R 000 ~-1", "/w"),
        ("pushd ..; pushd /srv; chmod -R 000 ~2", "/w/ws"),
        ('pushd ..; pushd /srv; chmod -R 000 "$(dirs -l +1)"', "/w"),
        ("HOME=..; rm -rf ~/*", "../*"),
        ("HOME=..; chmod -R 000 ~", ".."),
        ('chmod -R 000 "$(cd ..; echo "$PWD")"', ".."),
        ('chmod -R 000 "$(dirname "$(pwd)")"', ".."),
        ("chmod -R 000 `cd ..; pwd`", ".."),
    ],
)
def test_a_moved_folder_is_named(command: str, path: str) -> None:
    assert path in _paths(command)


def test_a_cd_above_the_home_keeps_its_form_from_the_home() -> None:
    assert "~/../*/.local" in _paths("cd ~/.. && rm -rf */.local")
    assert "~/../*/.local" in _paths("cd $HOME/.. && rm -rf */.local")
    assert "~/../*/.local" in _paths("cd ~ && cd .. && rm -rf */.local")
    assert "~/.local" in _paths("cd ~/.local/state/.. && cd .. && rm -rf .local")
    assert (home_path("~/a/../.."), home_path("~/."), home_path("~")) == ("~/..", "~", "~")


def test_cd_minus_back_to_a_folder_of_the_home_keeps_its_form() -> None:
    assert "~/.local/state/*" in _paths("cd ~/.local/state; cd /srv; cd - && rm -rf *")
    assert "~/.local/state/*" in _paths("pushd ~/.local/state; pushd /srv; popd; rm -rf *")


@pytest.mark.parametrize(
    ("command", "paths"),
    [
        ("cd build && rm -rf *", {"*", "build/*"}),
        ("pushd app; rm *.pyc; popd", {"*.pyc", "app/*.pyc"}),
        ("cd -- app && rm -f x.log", {"x.log", "app/x.log"}),
        ("cd .. && cd ws && rm -rf build", {"build", "../ws/build"}),
        ("pushd app; popd; rm -f x.log", {"x.log"}),
        ("cat ~+x ~-y", {"~+x", "~-y"}),  # users' homes, not the working folders
        ("echo ~- ~+", set()),
        ('cat "$(pwd)/README.md"', {"./README.md"}),
        ('cat "$(dirname app/main.py)/x"', {"app/x"}),
        ("cat ~/x", {"~/x"}),  # `~` the script did not set: the user's (or the workspace's)
        ("HOME=/srv; cat ~/x", {"/srv/x"}),
        ("pushd app; cat ~1/README.md", {"/w/ws/README.md"}),
    ],
)
def test_ordinary_moves_are_placed_as_before(command: str, paths: set[str]) -> None:
    assert _paths(command) == paths
