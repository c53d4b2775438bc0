"""Paths named inside program text that is not shell: inline code (``python -c "open('.env')"``)
and commands that could not be read. A heuristic by design: code is not parsed, so every
path-looking token counts (absolute, ``./``, ``../``, ``~/``, a dotfile, ``a/b``, ``name.ext``).
"""

from __future__ import annotations

import re

# A token naming a file: absolute, ./ ../ ~/ ~user/ $VAR/ ${VAR}/ relative, or a dotfile / a
# relative path with a slash. Quotes and shell punctuation are not part of it; `@` starts one
# too (`curl -d @/p/.env`).
_PATH_CHAR = r"""[^\s'"`;|&<>()$]"""
_PATH = re.compile(
    r"""(?:^|[\s=<>|&;(`'"@])("""
    rf"""(?:~[\w.-]*|\.{{1,2}}|\$\{{?[A-Za-z_]\w*\}}?)?/{_PATH_CHAR}*"""
    rf"""|(?>\.[^\s'"`;|&<>()$/]+(?:/{_PATH_CHAR}*)?)(?!\()"""  # not a method: `.env('X')`
    rf"""|[A-Za-z0-9_][^\s'"`;|&<>()$=]*/{_PATH_CHAR}*"""
    # a bare file name with an extension (`cat credentials.json`)
    r"""|[A-Za-z0-9_][\w-]*(?:\.[\w-]+)*\.[A-Za-z][A-Za-z0-9]{0,7}(?=$|[\s'"`;|&<>)])"""
    r")"
)
_SYSTEM_PREFIXES = ("/dev/", "/proc/", "/sys/")


def code_paths(text: str) -> list[str]:
    """Paths named inside ``text`` (absolute, ``./``, ``../``, ``~/``, dotfiles, ``a/b``)."""
    found = []
    for token in _PATH.findall(text):
        token = token.rstrip(".,:")
        if len(token) > 1 and not token.startswith(_SYSTEM_PREFIXES) and "://" not in token:
            found.append(token)
    return found
