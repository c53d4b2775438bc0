"""The classes a reading makes by the thousand have their own ``__init__`` (which the compiled
build compiles; the one ``dataclass`` generates runs as plain Python there), and keep their
dataclass meaning: fresh lists per instance, the same fields, equality and defaults."""

from __future__ import annotations

import dataclasses

import pytest

from pytest_harness_audit.policy.shell.expand import Field
from pytest_harness_audit.policy.shell.nodes import MAX_TOKENS, Budget, Command, Lit, Param, Sub
from pytest_harness_audit.policy.shell.place import MAX_ANCESTORS, Place
from pytest_harness_audit.policy.shell.reading import Reading, read_command
from pytest_harness_audit.policy.shell.script_input import Entered

HOT = [Lit, Command, Budget, Place, Reading, Field, Param, Sub, Entered]


@pytest.mark.parametrize("cls", HOT)
def test_an_own_init(cls: type) -> None:
    init = cls.__init__
    # plain Python: a function of the module, not of the text dataclass generates (`<string>`)
    code = getattr(init, "__code__", None)
    assert code is None or code.co_filename.endswith(".py"), (cls, code)


def test_fresh_lists_and_defaults() -> None:
    one, two = Command(), Command()
    assert one.words is not two.words and one.redirects is not two.redirects
    assert (one.stdin, one.piped, one.in_substitution, one.pipe, one.body) == (
        None,
        False,
        False,
        None,
        None,
    )
    first, second = Reading(), Reading()
    for name in ("commands", "reads", "writes", "deletes", "destroys", "notes", "code", "marks"):
        assert getattr(first, name) is not getattr(second, name), name
        assert not getattr(first, name)
    assert first.unreadable is None
    assert Place().stack is not Place().stack
    assert (Place().depth, Place().cwd, Place().unknown, Place().previous) == (
        MAX_ANCESTORS,
        ".",
        False,
        "",  # no `cd` before: where `cd -` goes is not known
    )
    assert Budget().tokens == MAX_TOKENS and Budget(3).tokens == 3
    assert Field("a") == Field("a", False) != Field("a", True)


def test_dataclass_meaning_is_kept() -> None:
    assert [f.name for f in dataclasses.fields(Lit)] == ["text", "quoted"]
    assert Lit("a", True) == Lit("a", True) != Lit("a", False)
    # `pipe` and `body` are not compared; the words are
    assert Command(words=[[Lit("ls", False)]], pipe=Command()) == Command([[Lit("ls", False)]])
    assert Command([[Lit("ls", False)]]) != Command([[Lit("cat", False)]])
    assert read_command("cat a.txt") == read_command("cat a.txt")
    assert read_command("cat a.txt") != read_command("cat b.txt")
    assert "marks" not in repr(Reading())


def test_the_expansion_nodes_keep_their_fields_and_defaults() -> None:
    assert [f.name for f in dataclasses.fields(Param)] == [
        "name",
        "quoted",
        "default",
        "opaque",
        "op",
        "alternate",
        "assigns",
        "nonempty",
    ]
    param = Param("X", True)
    assert (
        param.default,
        param.opaque,
        param.op,
        param.alternate,
        param.assigns,
        param.nonempty,
    ) == (None, False, None, None, False, False)
    assert Param("X", True, alternate=[], nonempty=True) != Param("X", True, alternate=[])
    assert Param("X", True, op=":1") == Param("X", True, None, False, ":1") != param
    sub = Sub([], False)
    assert (sub.arithmetic, sub.process, sub.expression) == (False, "", None)
    assert Sub([], False, process="<") != sub
    assert [f.name for f in dataclasses.fields(Sub)] == [
        "commands",
        "quoted",
        "arithmetic",
        "process",
        "expression",
    ]
    entered = Entered(None, None)
    assert entered.carrier is None and entered == Entered(None, None, None)
