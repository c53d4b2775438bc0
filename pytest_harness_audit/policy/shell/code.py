"""Paths named inside program text that is not shell: inline code (``python -c "open('.env')"``)
and commands that could not be read. A heuristic by design: code is not parsed, so every
path-looking token counts (absolute, ``./``, ``../``, ``~/``, a dotfile, ``a/b``, ``name.ext``).
A call of a dotenv loader (``load_dotenv()``, ``require('dotenv').config()``, ``import
'dotenv/config'``, ``process.loadEnvFile()``, ``Dotenv.load``, ``godotenv.Load()``) reads
``.env`` though the code never names it. String literals joined by ``+`` (``'.e' + 'nv'``),
paths built by path calls of literals (``os.path.join('..', 'audit')``: :mod:`.code_joins`) and
characters given by code (``chr(46)``, ``String.fromCharCode(46)``) are put together first. A
glob (``glob.glob('.e*')``, ``Dir.glob(".e*")``, Perl's ``glob``) names the sensitive files it
could match, as in the shell.
"""

from __future__ import annotations

import re
from typing import Final

from pytest_harness_audit.policy.sensitive import glob_candidates
from pytest_harness_audit.policy.shell.code_joins import joined_paths
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
#: A quoted literal glued to the next by `+` (`'.e' + 'nv'`, `".e"+"nv"`).
_JOINED: Final = re.compile(r"""(['"])([^'"\\\n]{0,64})\1\s*\+\s*(['"])([^'"\\\n]{0,64})\3""")
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
    if "+" in text or "harCode(" in text or "chr(" in text:
        text = "\n".join([text, *_built_names(text)])
    text = "\n".join([text, *joined_paths(text)])  # `os.path.join('..', 'audit')`
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


def _folded(text: str) -> str:
    """``text`` with character codes turned into quoted characters and ``+``-joined literals
    into one (``chr(46) + 'env'`` → ``'.env'``)."""

    def characters(match: re.Match[str]) -> str:
        codes = [int(code) for code in match.group(1).split(",")]
        chars = "".join(chr(code) for code in codes if code < 0x110000)
        return repr(chars) if "'" not in chars and "\\" not in chars else match.group()

    text = _CHAR_CODE.sub(characters, text)
    for _ in range(16):  # `'.' + 'e' + 'nv'`: pairs joined until none is left
        joined = _JOINED.sub(lambda m: f"'{m.group(2)}{m.group(4)}'", text)
        if joined == text:
            break
        text = joined
    return text
