"""Paths named inside program text that is not shell: inline code (``python -c "open('.env')"``)
and commands that could not be read. A heuristic by design: code is not parsed, so every
path-looking token counts (absolute, ``./``, ``../``, ``~/``, a dotfile, ``a/b``, ``name.ext``).
A call of a dotenv loader (``load_dotenv()``, ``require('dotenv').config()``, ``import
'dotenv/config'``, ``process.loadEnvFile()``, ``Dotenv.load``, ``godotenv.Load()``) reads
``.env`` though the code never names it. String literals joined (``'.e' + 'nv'``, Perl's and
PHP's ``".e"."nv"``; variables of one literal written in first, :mod:`.code_names`) or
otherwise (:mod:`.code_literals`), paths built by path calls of literals
(``os.path.join('..', 'audit')``: :mod:`.code_joins`) and
characters given by code (``chr(46)``, ``String.fromCharCode(46)``) are put together first. A
glob (``glob.glob('.e*')``, ``Dir.glob(".e*")``, Perl's ``glob``) names the sensitive files it
could match, as in the shell.
"""

from __future__ import annotations

import re
from typing import Final

from pytest_harness_audit.policy.sensitive import glob_candidates
from pytest_harness_audit.policy.shell.code_joins import joined_paths
from pytest_harness_audit.policy.shell.code_literals import built_literals
from pytest_harness_audit.policy.shell.code_names import with_literal_names
from pytest_harness_audit.policy.shell.fieldtext import posix_brackets

# A token naming a file: absolute, ./ ../ ~/ ~user/ $VAR/ ${VAR}/ relative, or a dotfile / a
# relative path with a slash. Quotes and shell punctuation are not part of it; `@` starts one
# too (`curl -d @/p/.env`), and so do Tcl's `[` and `{` (`[open .env]`, `{.env}`).
_PATH_CHAR: Final = r"""[^\s'"`;|&<>()$]"""
_PATH: Final = re.compile(
    r"""(?:^|[\s=<>|&;(`'"@\[{])("""
    rf"""(?:~[\w.-]*|\.{{1,2}}|\$\{{?[A-Za-z_]\w*\}}?)?/{_PATH_CHAR}*"""
    rf"""|(?>\.[^\s'"`;|&<>()$/]+(?:/{_PATH_CHAR}*)?)(?!\()"""  # not a method: `.env('X')`
    rf"""|[A-Za-z0-9_][^\s'"`;|&<>()$=]*/{_PATH_CHAR}*"""
    # a bare file name with an extension (`cat credentials.json`)
    r"""|[A-Za-z0-9_][\w-]*(?:\.[\w-]+)*\.[A-Za-z][A-Za-z0-9]{0,7}(?=$|[\s'"`;|&<>)])"""
    r")"
)
_SYSTEM_PREFIXES: Final = ("/dev/", "/proc/", "/sys/")
_DOTENV_LOADER: Final = re.compile(
    r"""\b(?:load_dotenv|dotenv_values|find_dotenv|loadEnvFile|read_env|AutoConfig)\s*\("""
    r"""|\bdotenv(?:x)?['"]?\)?\.(?:config|load|parse)\b|\bDotenv\.(?:load|overload|parse)\b"""
    r"""|\bgodotenv\.(?:Load|Overload|Read)\b|['"](?:@dotenvx/)?dotenv(?:x|-flow)?/(?:config|load)"""
    r"""|\bfrom\s+decouple\s+import\b|@std/dotenv|/std[@\w.]*/dotenv/"""
)
#: A quoted literal, read from the left (so a closing quote never opens one).
_QUOTED: Final = re.compile(r"""'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*["]""")
#: What glues two literals into one: `+`, Perl's and PHP's `.`, Lua's `..`, SQL's `||`.
_GLUE: Final = re.compile(r"\s*(?:\+|\.\.?|\|\|)\s*")
#: Two quoted literals with a glue other than `+` between them.
_GLUED: Final = re.compile(r"""['"]\s*(?:\.\.?|\|\|)\s*['"]""")
#: Most characters of one literal joined, and most literals joined into one.
_MAX_PART: Final = 64
_MAX_PARTS: Final = 16
_LITERAL: Final = re.compile(r"""'([^'\n]{1,256})'""")
#: A character given by its code point (`chr(46)`, `String.fromCharCode(46, 101)`).
_CHAR_CODE: Final = re.compile(
    r"""\b(?:chr|String\.fromCharCode)\(\s*(\d{1,7}(?:\s*,\s*\d{1,7}){0,63})\s*\)"""
)


def code_paths(text: str) -> list[str]:
    """Paths named inside ``text`` (absolute, ``./``, ``../``, ``~/``, dotfiles, ``a/b``)."""
    # every loader the regex knows names `env`, `Env`, `AutoConfig` or `decouple`: the regex
    # (slow: no literal it can look for first) runs only on text holding one of them
    loads = "env" in text or "Env" in text or "AutoConfig" in text or "decouple" in text
    found = [".env"] if loads and _DOTENV_LOADER.search(text) else []
    named = folded = with_literal_names(text)  # `a='.e'; b='nv'; open(a+b)`: the literals in
    if "+" in named or "harCode(" in named or "chr(" in named or _GLUED.search(named):
        built = _built_names(text) + (_built_names(named) if named != text else [])
        text = "\n".join([text, *built])
        folded = _folded(named)  # `os.path.join('..', 'au' + 'dit')`: joined, then a path
    text = "\n".join([text, *built_literals(text)])  # `".e" "nv"`, `'vne.'[::-1]`
    joined = joined_paths(text) + (joined_paths(folded) if folded != named else [])
    text = "\n".join([text, *joined])  # `os.path.join('..', 'audit')`
    for token in _PATH.findall(text):
        token = _closed(token.rstrip(".,:"))
        if len(token) > 1 and not token.startswith(_SYSTEM_PREFIXES) and "://" not in token:
            found.append(token)
            if "*" in token or "?" in token or "[" in token:
                found.extend(glob_candidates(posix_brackets(token)))
    return found


def _closed(token: str) -> str:
    """``token`` without the closing brackets and braces it never opened: Tcl's ``[open .env]``,
    ``{.env}``."""
    while token[-1:] in ("]", "}") and token.count(token[-1]) > token.count("[{"[token[-1] == "}"]):
        token = token[:-1].rstrip(".,:")
    return token


def _built_names(text: str) -> list[str]:
    """The literals ``text`` builds by joining or from character codes that are one word (a
    path built so, ``'.e' + 'nv'``; a built command line is no path)."""
    folded = _folded(text)
    if folded == text:
        return []
    before = set(_LITERAL.findall(text))
    return [f"'{word}'" for word in _LITERAL.findall(folded) if word not in before and word.strip()
            and not any(c.isspace() for c in word)][:64]  # fmt: skip


def joined_literals(text: str) -> str:
    """``text`` with character codes and joined literals written as one literal
    (``"os.ki" + "ll"`` → ``'os.kill'``), for readers of what program text does."""
    return _folded(text)


def _folded(text: str) -> str:
    """``text`` with character codes turned into quoted characters and joined literals into
    one (``chr(46) + 'env'``, ``".e"."nv"`` → ``'.env'``)."""

    def characters(match: re.Match[str]) -> str:
        codes = [int(code) for code in match.group(1).split(",")]
        chars = "".join(chr(code) for code in codes if code < 0x110000)
        return repr(chars) if "'" not in chars and "\\" not in chars else match.group()

    return _joined(_CHAR_CODE.sub(characters, text))


def _joined(text: str) -> str:
    """``text`` with each run of glued literals (``'.' + 'e' + "nv"``) written as one."""
    pieces: list[str] = []
    position = 0
    run: list[str] = []
    run_start = run_end = 0

    def close_run() -> None:
        nonlocal position
        word = "".join(run)
        if len(run) > 1 and "'" not in word:
            pieces.append(text[position:run_start])
            pieces.append(f"'{word}'")
            position = run_end

    for match in _QUOTED.finditer(text):
        content = match.group()[1:-1]
        joinable = len(content) <= _MAX_PART and "\\" not in content
        glued = bool(run) and _GLUE.fullmatch(text, run_end, match.start()) is not None
        if joinable and glued and len(run) < _MAX_PARTS:
            run.append(content)
            run_end = match.end()
            continue
        close_run()
        run = [content] if joinable else []
        run_start, run_end = match.start(), match.end()
    close_run()
    pieces.append(text[position:])
    return "".join(pieces)
