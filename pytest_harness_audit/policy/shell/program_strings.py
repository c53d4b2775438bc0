"""Which strings and comments of a Python or JavaScript script file can run or name something.

:func:`.program_files.program_text` blanks the string literals and comments of a script file
that cannot: ``print('x = shutil.rmtree')`` only prints, ``# shutil.rmtree('app') was removed``
only comments. Kept are

* the strings the scanner keeps (:func:`.program_files.scanned_text`: those holding a call, an
  assignment, an import) when the code can turn a string into code or a name (``exec``,
  ``eval``, ``compile``, ``getattr``, ``__import__``, ``globals()``, a subscript by a string,
  ``new Function``, the file reading itself through ``__file__`` or ``__doc__``, an output
  stream rebound, a process started that could run what it prints …: :data:`_PY_DYNAMIC`,
  :data:`_JS_DYNAMIC`), imports a module other than the language's own (:func:`own_imports`),
  or runs after code loaded first; what such code's strings make joined is added
  (``getattr(shutil, 'rm' + 'tree')`` names ``shutil.rmtree``: :func:`joined_names`);
* otherwise a string holding what may be code, unless it is only shown: a docstring or a lone
  string statement, the text given to ``print``, to a logger, to ``sys.stdout.write``, to
  ``console.log``, or the ``help=`` of an argument parser — each only when the code neither
  defines nor rebinds that name. Comments are blanked whole.

Python text is split by the interpreter's own tokenizer (a text it cannot split, or an f-string
that reuses a quote inside its braces, which a newer interpreter reads otherwise, is left to
:func:`.program_files.scanned_text`). JavaScript's strings are found by that scanner; a string is
taken as only shown only where it cannot be misread: the text holds no template literal and no
``/`` that could start a regular expression.
"""

from __future__ import annotations

import io
import re
import sys
import tokenize
import unicodedata
from collections.abc import Callable
from typing import Final

from pytest_harness_audit.policy.literal_gate import LiteralGate
from pytest_harness_audit.policy.shell.code import joined_literals
from pytest_harness_audit.policy.shell.code_literals import built_literals
from pytest_harness_audit.policy.shell.code_names import with_literal_names
from pytest_harness_audit.policy.shell.code_values import assigned, expression

#: What turns a string into code or a name, or reads the file's own text, in Python.
_PY_DYNAMIC: Final = re.compile(
    r"(?<![.\w])(?:exec|eval|compile|execfile|getattr|setattr|delattr|__import__|globals|locals"
    r"|vars|breakpoint)\b"
    r"|\b(?:import_module|importlib|__dict__|__builtins__|builtins|runpy|methodcaller"
    r"|attrgetter|pickle|marshal|dill|ctypes|cffi|__file__|__doc__|__loader__|__main__"
    r"|getsource|linecache|InteractiveConsole|InteractiveInterpreter|FunctionType|CodeType"
    r"|exec_module|redirect_stdout|redirect_stderr|dup2|modules|subprocess|Popen|popen|system"
    r"|execl|execle|execlp|execlpe|execv|execve|execvp|execvpe|spawnl|spawnv|posix_spawn|pty"
    r"|multiprocessing|asyncio)\b"
    r"|argv\s*\[\s*0|\bstd(?:out|err)\s*=(?!=)|\bstream\s*=(?!=)|StreamHandler\s*\(\s*[^)\s]"
)
#: The same in JavaScript, and a member named by a string (``fs['rmSync']``).
_JS_DYNAMIC: Final = re.compile(
    r"\b(?:eval|Function|vm|globalThis|global|window|Reflect|Proxy|__filename|__dirname"
    r"|arguments|prototype|__proto__|defineProperty|setTimeout|setInterval|setImmediate"
    r"|readFileSync|readFile|mainModule|main|child_process|execSync|spawn|spawnSync|fork"
    r"|execFile|execFileSync|Worker)\b|\bimport\s*\(|\brequire\s*\(\s*[^'\"\s]"
    r"|\[\s*['\"`\w(]"
)
_PY_DYNAMIC_GATE: Final = LiteralGate(_PY_DYNAMIC)
_JS_DYNAMIC_GATE: Final = LiteralGate(_JS_DYNAMIC)
#: What a Python or JavaScript script imports (its top-level module names).
_PY_IMPORTS: Final = re.compile(
    r"^[ \t]*(?:from[ \t]+(\.*[\w.]*)[ \t]+import|import[ \t]+([^\n#;]+))", re.M
)
_JS_IMPORTS: Final = re.compile(
    r"""\brequire\s*\(\s*['"]([^'"]+)['"]|\bfrom\s*['"]([^'"]+)['"]|\bimport\s*['"]([^'"]+)['"]"""
)
#: Node's own modules (a file of the workspace cannot stand in for one).
_NODE_MODULES: Final = frozenset(
    {"assert", "buffer", "child_process", "crypto", "events", "fs", "fs/promises", "http",
     "https", "net", "os", "path", "process", "readline", "stream", "string_decoder", "url",
     "util", "zlib", "timers", "dns", "tty"}
)  # fmt: skip
#: What may be code inside a string or comment (as :data:`.program_files._CALL`).
_CALL: Final = re.compile(r"""[\w$\])]\s*\(|=|\bimport\b""")
#: Calls whose string arguments are only shown (by their whole dotted name, or by a logger's
#: method), and keywords of argument parsers whose strings are only shown.
_SHOWN: Final = frozenset(
    {"print", "sys.stdout.write", "sys.stderr.write", "click.echo", "click.secho", "typer.echo",
     "warnings.warn", "console.log", "console.error", "console.warn", "console.info",
     "console.debug", "process.stdout.write", "process.stderr.write"}
)  # fmt: skip
_LOG_METHODS: Final = frozenset(
    {"debug", "info", "warning", "warn", "error", "critical", "exception", "fatal"}
)
_LOGGERS: Final = re.compile(r"(?:^|\.)_{0,2}(?:log|logger|logging|LOG|LOGGER|log_)$")
_HELP_KEYWORDS: Final = frozenset({"help", "description", "epilog", "usage", "metavar", "prog"})
#: A JavaScript string, or a comment (group 1), whichever starts first.
_PIECES: Final = re.compile(
    r"""'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*"|(//[^\n]*|/\*(?s:.*?)\*/)"""
)
_LITERALS: Final = re.compile(r"""'[^'\n]*'|"[^"\n]*\"""")
#: Where an argument starts (its value read when built of literals and variables).
_ARGUMENT: Final = re.compile(r"[(,]\s*(?=[\w'\"])")
_MAX_ARGUMENTS: Final = 256
_MESSAGES: Final = re.compile(r"\w*(?:Error|Exception|Warning|Exit)$")


def dynamic(text: str, language: str) -> bool:
    """Whether ``text`` can turn a string into code or a name (module doc), or may spell a
    name otherwise than as its letters: Python reads ``ｐｒｉｎｔ`` as ``print`` (NFKC),
    JavaScript ``\\u0065val`` as ``eval``."""
    if language == "js" and "\\u" in text:
        return True
    if not text.isascii() and unicodedata.normalize("NFKC", text) != text:
        return True
    return (_PY_DYNAMIC_GATE if language == "python" else _JS_DYNAMIC_GATE).search(text) is not None


def own_imports(text: str, language: str, shadowed: Callable[[str], bool]) -> bool:
    """Whether ``text`` imports only the language's own modules (Python's standard library,
    none of them ``shadowed`` by a file of the workspace; Node's built-in modules): no other
    code can rebind ``print`` or read the script's strings."""
    if language == "js":
        names = [a or b or c for a, b, c in _JS_IMPORTS.findall(text)]
        return all(name.removeprefix("node:") in _NODE_MODULES for name in names)
    for source, listed in _PY_IMPORTS.findall(text):
        modules = [source] if source else [m.split(" as ")[0] for m in listed.split(",")]
        for module in modules:
            top = module.strip().strip("()").split(".")[0]
            if not top or top not in sys.stdlib_module_names:
                return False  # a relative import, a package of the workspace or installed
            if top not in sys.builtin_module_names and shadowed(top):
                return False
    return True


def python_text(text: str) -> str | None:
    """``text`` with the strings and comments that cannot run or name anything blanked (module
    doc; the caller has ruled out :func:`dynamic` code and imports of other modules); ``None``
    when the tokenizer cannot split it as it runs."""
    split = _python_tokens(text)
    if split is None:
        return None
    tokens, starts = split
    cuts: list[tuple[int, int]] = []
    for index, token in enumerate(tokens):
        line_start = starts[token.start[0] - 1] + token.start[1]
        if token.type == tokenize.COMMENT:
            cuts.append((line_start + 1, len(token.string) - 1))
        elif token.type == tokenize.STRING:
            quote_at = len(token.string) - len(token.string.lstrip("rRbBuUfF"))
            prefix, rest = token.string[:quote_at], token.string[quote_at:]
            quote = rest[:3] if rest[:3] in ("'''", '"""') else rest[:1]
            body = rest[len(quote) : len(rest) - len(quote)]
            formatted = "f" in prefix.lower() and "{" in body
            if formatted and ("'" in body or '"' in body):
                return None  # a quote reused inside an f-string: read otherwise by Python 3.12
            if _CALL.search(body) is None or (not formatted and _py_shown(tokens, index, text)):
                cuts.append((line_start + quote_at + len(quote), len(body)))
    return _cut(text, cuts)


def shown_blanked(text: str) -> str | None:
    """Python ``text`` with only the strings it shows blanked (given to ``print``, a logger,
    ``sys.stdout.write`` …, a docstring: :func:`_py_shown`), for the paths it names: ``print('edit
    your .env')`` opens nothing, ``open('.env')`` does (the caller has ruled out :func:`dynamic`
    code and imports of other modules); ``None`` when the tokenizer cannot split it."""
    split = _python_tokens(text)
    if split is None:
        return None
    tokens, starts = split
    cuts: list[tuple[int, int]] = []
    for index, token in enumerate(tokens):
        if token.type != tokenize.STRING:
            continue
        quote_at = len(token.string) - len(token.string.lstrip("rRbBuUfF"))
        if "f" in token.string[:quote_at].lower() or not _py_shown(tokens, index, text):
            continue  # (an f-string's braces run code)
        rest = token.string[quote_at:]
        quote = rest[:3] if rest[:3] in ("'''", '"""') else rest[:1]
        start = starts[token.start[0] - 1] + token.start[1] + quote_at + len(quote)
        cuts.append((start, len(rest) - 2 * len(quote)))
    return _cut(text, cuts)


def _python_tokens(text: str) -> tuple[list[tokenize.TokenInfo], list[int]] | None:
    """The tokens of Python ``text`` and where each of its lines starts in it; ``None`` when
    the tokenizer cannot split it as it runs."""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, SyntaxError):
        return None
    if any(token.type == tokenize.ERRORTOKEN for token in tokens):
        return None
    starts = [0]
    for line in io.StringIO(text):
        starts.append(starts[-1] + len(line))
    return tokens, starts


def _cut(text: str, cuts: list[tuple[int, int]]) -> str:
    """``text`` without the ``(start, length)`` spans ``cuts``."""
    kept: list[str] = []
    position = 0
    for start, length in sorted(cuts):
        kept.append(text[position:start])
        position = start + length
    kept.append(text[position:])
    return "".join(kept)


_SKIPPED: Final = frozenset({tokenize.NL, tokenize.COMMENT})
_STATEMENT_EDGE: Final = frozenset(
    {tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENCODING, tokenize.ENDMARKER}
)


def _py_shown(tokens: list[tokenize.TokenInfo], index: int, text: str) -> bool:
    """Whether the string token at ``index`` (with the strings next to it) is only shown."""
    before = index - 1
    while before >= 0 and (
        tokens[before].type in _SKIPPED or tokens[before].type == tokenize.STRING
    ):
        before -= 1
    after = index + 1
    while after < len(tokens) and (
        tokens[after].type in _SKIPPED or tokens[after].type == tokenize.STRING
    ):
        after += 1
    previous = tokens[before] if before >= 0 else None
    following = tokens[after] if after < len(tokens) else None
    if following is None:
        return False
    if (previous is None or previous.type in _STATEMENT_EDGE) and (
        following.type in _STATEMENT_EDGE or following.string == ";"
    ):
        return True  # a docstring, a lone string statement
    if following.string not in (",", ")") or previous is None:
        return False
    keyword = None
    if previous.string == "=" and before >= 1 and tokens[before - 1].type == tokenize.NAME:
        keyword = tokens[before - 1].string
        before -= 1
    opening = _opening(tokens, before)
    if opening is None or _keyword_in_call(tokens, opening, "file"):
        return False
    callee = _callee(tokens, opening)
    if not callee or _rebound(callee.rsplit(".", 1)[-1], text):
        return False
    if keyword is not None:
        return keyword in _HELP_KEYWORDS and callee.rsplit(".", 1)[-1] in (
            "ArgumentParser", "add_argument", "add_parser", "add_argument_group", "option",
            "argument", "command", "group", "add_subparsers",
        )  # fmt: skip
    return _shown_call(callee)


def _shown_call(callee: str) -> bool:
    """Whether a call of ``callee`` only shows its string arguments."""
    if callee in _SHOWN or _MESSAGES.fullmatch(callee.rsplit(".", 1)[-1]):
        return True
    receiver, _, method = callee.rpartition(".")
    return method in _LOG_METHODS and _LOGGERS.search(receiver) is not None


def _opening(tokens: list[tokenize.TokenInfo], index: int) -> int | None:
    """The index of the ``(`` that opens the call holding the token at ``index``."""
    depth = 0
    while index >= 0:
        string = tokens[index].string
        if string in (")", "]", "}"):
            depth += 1
        elif string in ("(", "[", "{"):
            if depth == 0:
                return index if string == "(" else None
            depth -= 1
        elif tokens[index].type in _STATEMENT_EDGE:
            return None
        index -= 1
    return None


def _keyword_in_call(tokens: list[tokenize.TokenInfo], opening: int, name: str) -> bool:
    """Whether the call opened at ``opening`` is given the keyword ``name`` (other than
    ``sys.stdout`` or ``sys.stderr``)."""
    depth = 0
    for index in range(opening, len(tokens) - 1):
        string = tokens[index].string
        if string in ("(", "[", "{"):
            depth += 1
        elif string in (")", "]", "}"):
            depth -= 1
            if depth == 0:
                return False
        elif depth == 1 and string == name and tokens[index + 1].string == "=":
            value = [token.string for token in tokens[index + 2 : index + 6]]
            return value[:3] not in (["sys", ".", "stdout"], ["sys", ".", "stderr"]) or value[
                3:
            ] not in ([","], [")"])
    return False


def _callee(tokens: list[tokenize.TokenInfo], opening: int) -> str:
    """The dotted name called at the ``(`` at ``opening`` (``""`` when it is no plain name)."""
    parts: list[str] = []
    index = opening - 1
    while index >= 0 and tokens[index].type == tokenize.NAME:
        parts.append(tokens[index].string)
        if index >= 1 and tokens[index - 1].string == ".":
            index -= 2
            continue
        break
    return ".".join(reversed(parts))


def _rebound(name: str, text: str) -> bool:
    """Whether ``text`` defines or rebinds ``name`` (``print = exec``, ``def info``, ``as``)."""
    word = re.escape(name)
    return (
        re.search(
            rf"\b{word}\s*(?::=|=(?!=)|\+=)|\b(?:def|class|function|as|alias|import)\s+{word}\b"
            rf"|\bfor\s+{word}\b|\b{word}\s*:",
            text,
        )
        is not None
    )


def joined_names(text: str, language: str) -> str:
    """What the strings of ``text`` make when joined, as added lines: the literals it joins
    (variables of one literal written in first), the value of each variable and argument built
    of literals and variables (``exec(a + b)``), and the members it names by a string
    (``getattr(x, 'n')``, ``x['n']`` → ``x.n``)."""
    folded = joined_literals(with_literal_names(text))
    named = re.sub(r"""\bgetattr\(\s*([\w.]+)\s*,\s*(['"])(\w+)\2\s*\)""", r"\1.\3", folded)
    named = re.sub(r"""([\w)\]])\s*\[\s*(['"])([A-Za-z_]\w*)\2\s*\]""", r"\1.\3", named)
    before = set(_LITERALS.findall(text))
    added = [literal[1:-1] for literal in _LITERALS.findall(named) if literal not in before]
    added.extend(literal[1:-1] for literal in built_literals(text))
    values = assigned(text, language)
    built = ["".join(value.words) for value in values.values() if value.known]

    def member(match: re.Match[str]) -> str:
        value = values.get(match.group(2))
        word = "".join(value.words) if value is not None and value.known else ""
        return f"{match.group(1)}.{word}" if word.isidentifier() else match.group()

    named = re.sub(r"([\w)\]])\s*\[\s*([A-Za-z_]\w*)\s*\]", member, named)
    for count, match in enumerate(_ARGUMENT.finditer(text)):
        if count >= _MAX_ARGUMENTS:
            break
        found = expression(text, match.end(), language, values)
        if found is None or not found[0].known:
            continue
        if len(found[0].words) > 1 or not _LITERALS.match(text, match.end()):
            built.append("".join(found[0].words))
    lines = [*added, *built, named] if named != text else [*added, *built]
    return "\n" + "\n".join(lines) if lines else ""


def js_text(text: str) -> str:
    """JavaScript ``text`` with its comments and the strings ``console.log`` only shows blanked
    (module doc; the caller has ruled out :func:`dynamic` code and imports of other modules),
    for the scanner (:func:`.program_files.scanned_text`) to blank the strings that hold no
    code besides."""
    code = _PIECES.sub("", text)
    if "`" in text or "/" in code or "<!--" in text or "-->" in text:
        return text  # a template, a regular expression, an HTML comment: may be misread
    if _rebound("console", text) or re.search(r"\bconsole\s*\.\s*\w+\s*=(?!=)", text):
        return text
    shown = re.compile(
        r"""(\bconsole\s*\.\s*(?:log|error|warn|info|debug)\s*\(\s*(?:(?:'[^'\\\n]*'|"[^"\\\n]*")"""
        r"""\s*,\s*)*)(['"])([^'"\\\n]*)\2(?=\s*[,)])"""
    )

    def comment(match: re.Match[str]) -> str:
        if match.group(1) is None:
            return match.group()
        return "//" if match.group().startswith("//") else "/**/"

    blanked = shown.sub(lambda m: f"{m.group(1)}{m.group(2)}{m.group(2)}", text)
    return _PIECES.sub(comment, blanked)


__all__ = ["dynamic", "joined_names", "js_text", "own_imports", "python_text", "shown_blanked"]
