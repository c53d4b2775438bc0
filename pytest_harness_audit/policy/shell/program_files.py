"""Script files of the workspace an interpreter runs, judged as the ``-c`` text they are.

``python3 clean.py``, ``python3 -m tools.clean`` (a module file of the workspace), ``node x.js``,
``ruby x.rb``, ``perl x.pl``: the interpreter runs the file's text as ``python3 -c TEXT`` runs
its argument. The reading already reads the paths that text names and the commands it shells
out to (:func:`.effects.inline_code`); it also records the command as ``NAME -c TEXT`` (``-e``
for the others), as it does for a program on the standard input (:mod:`.stdin_programs`), so
the rules that judge inline code (a recursive deletion, a file removed) judge the file too.

Only a file the reading can see is read: inside the workspace (or written earlier in the same
command with a known text), of at most :data:`~.expand.SCRIPT_FILE_LIMIT` bytes. In Python and
JavaScript text, the string literals and comments that hold no call (``name(``), assignment or
import are blanked: ``print("rmtree")`` names no deletion, ``exec("shutil.rmtree('app')")``
still does (so does a string the scanner misreads that holds code; :mod:`.program_strings`).
Ruby and Perl call without parentheses: only their comment lines and the literals a line only
prints are blanked (:mod:`.program_lines`).
"""

from __future__ import annotations

import os
import posixpath
import re
from collections.abc import Callable
from typing import Final

from pytest_harness_audit.policy.shell.code import code_paths
from pytest_harness_audit.policy.shell.context import Context
from pytest_harness_audit.policy.shell.import_time import main_time_code
from pytest_harness_audit.policy.shell.program_lines import line_text, names_by_text
from pytest_harness_audit.policy.shell.program_strings import (
    dynamic,
    joined_names,
    js_text,
    own_imports,
    python_text,
    shown_blanked,
)
from pytest_harness_audit.policy.shell.projects import module_file

#: Interpreters besides ``python*`` whose script file is read, with the language of its text.
_LANGUAGES: Final = {
    "node": "js",
    "nodejs": "js",
    "bun": "js",
    "deno": "js",
    "perl": "perl",
    "ruby": "ruby",
}
#: Options that give the program in the words (no script file runs): ``python3 -c``,
#: ``node -e``/``-p``, ``perl -E``, ``ruby -ne`` …
_PROGRAM_FLAGS: Final = {
    "python": re.compile(r"-[A-Za-z]*c|--command|-"),
    "other": re.compile(r"-[A-Za-z]*[eE]|--eval|-p|--print|-"),
    "lines": re.compile(r"-[A-Za-z0-9]*[eE]"),
}
#: Options whose value is the next word (``python3 -W ignore x.py``, ``node -r m x.js``).
_VALUED: Final = {
    "python": frozenset({"-W", "-X", "--check-hash-based-pycs"}),
    "other": frozenset({"-r", "--require", "--import", "--loader", "-M", "-I", "--title", "-C"}),
}
#: Most commands a reading records (as :data:`.reading.MAX_COMMANDS`).
_MAX_COMMANDS: Final = 512
#: What starts a string literal or a comment worth looking at.
_SPECIAL: Final = {
    "python": re.compile(r"""'''|\"\"\"|'|"|#"""),
    "js": re.compile(r"""['"`]|//|/\*"""),
}
#: The programs whose text the inline-code rules judge (the interpreters read here, ``pypy``).
_INTERPRETER: Final = re.compile(r"python[0-9.]*|pypy[0-9.]*|node|nodejs|deno|bun|perl|ruby")
#: What may be code read as a string or a comment (a quote the text reuses inside an f-string,
#: a regex literal): a call (a name or a closing bracket, then an opening parenthesis), an
#: assignment, an import.
_CALL: Final = re.compile(r"""[\w$\])]\s*\(|=|\bimport\b""")


def file_program(name: str, args: list[str], ctx: Context) -> None:
    """Record the script file ``name args`` runs as ``name -c TEXT`` (module doc); nothing
    when it runs none, or its text cannot be known."""
    language = "python" if name.startswith("python") else _LANGUAGES.get(name)
    if language is None or len(ctx.reading.commands) >= _MAX_COMMANDS:
        return
    path = _script(args, language == "python", ctx)
    if path is None:
        _inline_joins(name, args, language, ctx)
        return
    text = ctx.workspace_text(path)
    if text:
        flag = "-c" if language == "python" else "-e"
        shadowed = _shadowing(path, ctx)
        preloaded = _preloaded(args, path, language, ctx)
        if language == "python" and not preloaded and own_imports(text, language, shadowed):
            # only its own modules: no other code can call a function it does not name, so
            # what runs is what running it as `__main__` reaches (:mod:`.import_time`)
            run = main_time_code(text)  # (text this Python cannot parse: judged whole)
            if run == "":
                return
            text = text if run is None else run
        program = program_text(text, language, shadowed, preloaded)
        ctx.reading.commands.append([name, flag, program])


#: Variables that make an interpreter load other code first, by language.
_PRELOADS: Final = {
    "python": ("PYTHONPATH", "PYTHONHOME"),
    "js": ("NODE_OPTIONS", "NODE_PATH"),
    "ruby": ("RUBYOPT", "RUBYLIB"),
    "perl": ("PERL5OPT", "PERL5LIB", "PERLLIB"),
}


def _preloaded(args: list[str], path: str, language: str, ctx: Context) -> bool:
    """Whether other code may run before the script ``path`` (an option before it that loads a
    module or adds a folder, ``node -r x.js``, ``ruby -I. -rx``, ``perl -Mx``; a variable of
    :data:`_PRELOADS` the command sees)."""
    before = args[: args.index(path)] if path in args else args
    if language != "python" and any(
        word.startswith(("-r", "-I", "-M", "-m", "--require", "--import", "--loader"))
        or word.startswith("--experimental-loader")
        for word in before
    ):
        return True
    return any(ctx.variable(variable) for variable in _PRELOADS[language])


def _inline_joins(name: str, args: list[str], language: str, ctx: Context) -> None:
    """``python3 -c TEXT``, ``node -e TEXT``, ``ruby -e TEXT``, ``perl -e TEXT`` whose code can
    turn strings into code or names (``getattr(shutil, 'rm' + 'tree')``, ``exec(a + b)``,
    ``FileUtils.send("rm_" + "r", d)``): recorded again with what its strings make when joined,
    for the rules that judge inline code."""
    lines = language in ("ruby", "perl")
    program = _PROGRAM_FLAGS["python" if language == "python" else "lines" if lines else "other"]
    for index, word in enumerate(args[:-1]):
        if word != "-" and program.fullmatch(word):
            text = args[index + 1]
            named = names_by_text(text, language) if lines else dynamic(text, language)
            if named and (joined := joined_names(text, language)):
                ctx.reading.commands.append([name, word, text + joined])
            return
        if not word.startswith("-"):
            return


#: Calls that only show their strings (a cheap test before the tokenizer reads the text).
_SHOWING: Final = re.compile(r"print|log|warn|write|echo|error|info|debug|critical|fatal")


def python_paths(code: str, ctx: Context) -> list[str]:
    """The paths Python program text ``code`` names (:func:`.code.code_paths`), those in the
    strings it only shows left out (:func:`.program_strings.shown_blanked`) when it imports only
    the language's own modules and cannot turn a string into code."""
    found = code_paths(code)
    if not any(_in_a_string(path, code) for path in found):
        return found  # no path a string holds: nothing to leave out (the tokenizer is dear)
    if _SHOWING.search(code) is None or dynamic(code, "python"):
        return found
    if not own_imports(code, "python", _shadowing("", ctx)):
        return found
    blanked = shown_blanked(code)
    return found if blanked is None else code_paths(blanked)


def _in_a_string(path: str, code: str) -> bool:
    """Whether ``path`` may be written inside a string literal of ``code`` (after a quote on
    its line)."""
    start = code.find(path)
    while start >= 0:
        line_start = code.rfind("\n", 0, start) + 1
        if "'" in code[line_start:start] or '"' in code[line_start:start]:
            return True
        start = code.find(path, start + 1)
    return False


def _shadowing(path: str, ctx: Context) -> Callable[[str], bool]:
    """Whether a module name is shadowed by a file or folder beside the script ``path`` or in
    the folder the command runs in (Python looks there first); unknown folders shadow all."""
    names: set[str] = set()
    for folder in {posixpath.dirname(path) or ".", "."}:
        real = ctx.real_path(folder)
        try:
            names.update(entry.split(".")[0] for entry in os.listdir(real or ""))
        except OSError:
            return lambda module: True
    return names.__contains__


def program_commands(commands: list[list[str]]) -> list[list[str]]:
    """The commands of ``commands`` that run an interpreter (``python3 -c TEXT``, ``node -e``,
    a script file's text recorded as such): the commands of a shell script file are kept apart
    from the call's (:attr:`.reading.Reading.ran`), but program text can only be judged by its
    text, so these join the call's commands."""
    return [
        argv
        for argv in commands
        if argv and _INTERPRETER.fullmatch(argv[0].rsplit("/", 1)[-1].lower()) is not None
    ]


def _script(args: list[str], python: bool, ctx: Context) -> str | None:
    """The script file of an interpreter's words: its first operand after the options
    (``bun run x.js``, ``deno run x.ts``: after ``run``), or ``python -m``'s workspace file."""
    kind = "python" if python else "other"
    valued, program = _VALUED[kind], _PROGRAM_FLAGS[kind]
    index = 0
    while index < len(args):
        word = args[index]
        if word.startswith("-m") and python:
            return module_file(args, ctx)
        if program.fullmatch(word):
            return None
        if word == "--":
            return args[index + 1] if index + 1 < len(args) else None
        if word == "run" and not python and index == 0:  # `bun run x.js`, `deno run -A x.ts`
            index += 1
            continue
        if not word.startswith("-"):
            return word
        index += 2 if word in valued else 1
    return None


def program_text(
    text: str,
    language: str,
    shadowed: Callable[[str], bool] = lambda module: True,
    preloaded: bool = False,
) -> str:
    """``text`` with its string literals and comments that cannot run or name anything blanked
    (:mod:`.program_strings`; ``shadowed(name)``: whether a file of the workspace stands in for
    the standard module ``name``; ``preloaded``: whether other code may run first, from an
    option or a variable such as ``node -r x.js``, ``RUBYOPT``); the quotes and comment marks
    stay."""
    if language not in ("python", "js"):
        lines = text if preloaded else line_text(text, language)
        return lines + joined_names(text, language) if names_by_text(text, language) else lines
    if preloaded or dynamic(text, language) or not own_imports(text, language, shadowed):
        return scanned_text(text, language) + joined_names(text, language)
    if language == "js":
        return scanned_text(js_text(text), language)
    read = python_text(text)
    return read if read is not None else scanned_text(text, language)


def scanned_text(text: str, language: str) -> str:
    """``text`` with its string literals and comments that hold no call blanked, as a scanner
    finds them (Python and JavaScript; the text of another language as it is)."""
    special = _SPECIAL.get(language)
    if special is None:
        return text
    kept: list[str] = []
    start = index = 0
    size = len(text)
    while (found := special.search(text, index)) is not None:
        token = found.group()
        begin = found.end()
        if token in ("#", "//"):
            end = text.find("\n", begin)
            end, close = (size if end < 0 else end), 0
        elif token == "/*":
            end = text.find("*/", begin)
            end, close = (size, 0) if end < 0 else (end, 2)
        else:
            end, close = _string_end(text, begin, token), len(token)
        body = text[begin:end]
        if _CALL.search(body) is None:
            kept.append(text[start:begin])  # the opening kept, the body blanked
            start = end
        index = min(size, end + close)
    kept.append(text[start:])
    return "".join(kept)


def _string_end(text: str, index: int, quote: str) -> int:
    """Where the string literal whose body starts at ``index`` ends (its closing quote, or the
    end of the line for an unclosed one-line string, or of the text)."""
    size = len(text)
    line = len(quote) == 1 and quote != "`"
    while index < size:
        character = text[index]
        if character == "\\":
            index += 2
            continue
        if text.startswith(quote, index) or (line and character == "\n"):
            return index
        index += 1
    return size


__all__ = ["file_program", "program_commands", "program_text", "python_paths", "scanned_text"]
