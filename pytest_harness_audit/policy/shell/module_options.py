"""Modules an interpreter loads before its program because of its options or its environment.

``node -r ./x.js``/``--import`` (:func:`.imports.node_preloads`, ``NODE_OPTIONS``:
:mod:`.node_config`); ``ruby -r ./x`` or ``-I. -rx`` and ``RUBYOPT=-r./x`` (bare names looked up
in the ``-I`` folders and ``RUBYLIB``); ``perl -I. -Mx`` (or ``-mx``) and ``PERL5OPT=-Mx`` (a
``Foo::Bar`` module is ``Foo/Bar.pm`` of the ``-I`` folders, ``PERL5LIB`` and ``PERLLIB``).
Each workspace file found is loaded code (:meth:`.Context.load_code`): read for what it names
and for what loading it runs (:mod:`.load_time`). A module of the system's or of an installed
package (``-rjson``, ``-MTest::More``) is no workspace file and loads nothing here.
"""

from __future__ import annotations

import posixpath
import shlex
from typing import Final, Protocol

from pytest_harness_audit.policy.shell.imports import Loader, node_preloads

#: Each language's options variable and folder list variables.
_VARIABLES: Final = {
    "ruby": ("RUBYOPT", ("RUBYLIB",)),
    "perl": ("PERL5OPT", ("PERL5LIB", "PERLLIB")),
}
#: Options whose value is a module to load, and the one whose value is a folder.
_MODULE_OPTIONS: Final = {"ruby": ("-r",), "perl": ("-M", "-m")}
_FOLDER_OPTION: Final = "-I"
#: Most module options of one command looked at.
_MAX_MODULES: Final = 32


class Context(Loader, Protocol):
    """What the reading of module options needs of the command's context."""

    def variable(self, name: str) -> str | None:
        """The value of a variable the command sees, when known."""
        ...

    def load_code(self, path: str) -> None:
        """Read a workspace file program text loads, once per command."""
        ...


def preloads(language: str, args: list[str], ctx: Context) -> None:
    """Read the workspace modules the interpreter of ``language`` given ``args`` loads before
    its program (module doc)."""
    node_preloads(args, ctx)
    if language not in _VARIABLES:
        return
    option_variable, folder_variables = _VARIABLES[language]
    words = _option_words(ctx.variable(option_variable) or "") + _leading_options(args)
    modules, folders = _modules_and_folders(language, words)
    for variable in folder_variables:
        folders.extend(entry for entry in (ctx.variable(variable) or "").split(":") if entry)
    if language == "perl":
        folders.append(".")  # a perl before 5.26, or `PERL_USE_UNSAFE_INC=1`, looks there last
    for module in modules[:_MAX_MODULES]:
        for path in _candidates(language, module, folders):
            if ctx.workspace_text(path) is not None:
                ctx.load_code(path)
                break


def _option_words(value: str) -> list[str]:
    """The words of an options variable (``-r./x -w``); Perl takes them without their ``-``."""
    try:
        words = shlex.split(value)
    except ValueError:
        words = value.split()
    return [word if word.startswith("-") else f"-{word}" for word in words]


def _leading_options(args: list[str]) -> list[str]:
    """The options before the program (``-e``'s text or the script file are not options)."""
    words: list[str] = []
    index = 0
    while index < len(args):
        word = args[index]
        if not word.startswith("-") or word in ("-", "--") or word[1:2] in ("e", "E"):
            break
        words.append(word)
        if word in ("-r", "-I", "-M", "-m") and index + 1 < len(args):
            words.append(args[index + 1])
            index += 1
        index += 1
    return words


def _modules_and_folders(language: str, words: list[str]) -> tuple[list[str], list[str]]:
    """The modules (``-rx``, ``-Mx``) and the folders (``-Idir``) of option ``words``."""
    modules: list[str] = []
    folders: list[str] = []
    index = 0
    while index < len(words):
        word = words[index]
        index += 1
        for option in (*_MODULE_OPTIONS[language], _FOLDER_OPTION):
            if not word.startswith(option):
                continue
            value = word[len(option) :]
            if not value and index < len(words):
                value = words[index]
                index += 1
            if option == _FOLDER_OPTION:
                folders.append(value)
            elif value:
                modules.append(value)
            break
    return modules, folders


def _candidates(language: str, module: str, folders: list[str]) -> list[str]:
    """The files a module option may load: a path as given (and with ``.rb``), or the module's
    file in each folder."""
    if language == "perl":
        name = module.lstrip("-").split("=", 1)[0].split(" ", 1)[0]
        relative = name.replace("::", "/").replace("'", "/") + ".pm"
        return [posixpath.normpath(posixpath.join(folder, relative)) for folder in folders]
    if module.startswith(("./", "../", "/")):
        return [module, f"{module}.rb"]
    return [
        posixpath.normpath(posixpath.join(folder, each))
        for folder in folders
        for each in (f"{module}.rb", module)
    ]


__all__ = ["preloads"]
