"""The files program text writes by a literal name: a write, as ``> FILE`` is.

``perl -e 'open(F, ">.git/hooks/pre-commit"); print F …'`` plants a hook as ``cp`` would. A call
that opens or writes a file named by one string literal is read as a write of it:

* Python ``open('P', 'w'|'a'|'x'|'+'…)`` (``mode=`` too), ``Path('P').write_text|write_bytes|
  touch|open('w')``; ``shutil.copy|copy2|copyfile|move(SRC, 'P')``, ``os.rename|replace|
  symlink|link(SRC, 'P')``;
* Perl ``open(FH, '>P')``/``'>>P'``/``'+<P'`` and ``open(FH, '>', 'P')``; ``copy|move(SRC, 'P')``;
* Ruby ``File.open('P', 'w'…)``, ``File.write|binwrite('P', …)``, ``IO.write``;
  ``FileUtils.cp|mv|ln_s|ln|install(SRC, 'P')``, ``FileUtils.touch('P')``;
* Node ``writeFileSync|appendFileSync|writeFile|appendFile|createWriteStream('P', …)``,
  ``copyFileSync|renameSync|symlinkSync|linkSync|cpSync(SRC, 'P')``, ``fs.copyFile|rename(…)``;
* PHP ``file_put_contents('P', …)``, ``fopen('P', 'w'…)``, ``copy|rename|symlink(SRC, 'P')``.

A name built at run time is no literal: the effect inspection judges what was written.
"""

from __future__ import annotations

from typing import Final

import re2

_QUOTED: Final = r"""(?:'([^'\n]+)'|"([^"\n]+)")"""
_MODE: Final = r"""(?:mode\s*=\s*)?['"][rbt]*[wax+][^'"\n]*['"]"""
_SOURCE: Final = r"""[^,()\n]+,\s*"""
#: Each pattern's path is its first group that matched.
_WRITES: Final = re2.compile(
    # a path opened for writing (Python, Ruby, PHP `open`/`fopen`/`File.open`)
    rf"""(?:\bopen|\bfopen|File\.open|Path\s*\(\s*{_QUOTED}\s*\)\.open)\s*\(\s*{_QUOTED}?\s*,?\s*"""
    rf"""{_MODE}"""
    # Perl's two-argument and three-argument `open`
    rf"""|\bopen\s*\(?\s*(?:my\s+)?[$\w]+\s*,\s*(?:'\s*(?:\+?>>?|\+<)\s*([^'\n>][^'\n]*)'"""
    rf"""|"\s*(?:\+?>>?|\+<)\s*([^"\n>][^"\n]*)")"""
    rf"""|\bopen\s*\(?\s*(?:my\s+)?[$\w]+\s*,\s*['"](?:\+?>>?|\+<)['"]\s*,\s*{_QUOTED}"""
    # a path written whole (its name first)
    rf"""|(?:writeFileSync|appendFileSync|writeFile|appendFile|createWriteStream|File\.write"""
    rf"""|File\.binwrite|IO\.write|IO\.binwrite|file_put_contents|FileUtils\.touch)\s*\(\s*"""
    rf"""{_QUOTED}"""
    rf"""|Path\s*\(\s*{_QUOTED}\s*\)\.(?:write_text|write_bytes|touch|symlink_to|hardlink_to)\b"""
    # a copy, move or link onto a path (its name second)
    rf"""|(?:shutil\.(?:copy|copy2|copyfile|move|copytree)|os\.(?:rename|replace|symlink|link)"""
    rf"""|copyFileSync|renameSync|symlinkSync|linkSync|cpSync"""
    rf"""|fs\.(?:promises\.)?(?:copyFile|rename|symlink|link|cp)|FileUtils\.(?:cp|mv|ln_s|ln|install)"""
    rf"""|(?:^|[^\w.$>])(?:copy|move|rename|symlink))\s*\(\s*{_SOURCE}{_QUOTED}"""
)
#: Most writes read from one text.
_MAX_WRITES: Final = 64


def code_writes(code: str) -> list[str]:
    """The files ``code`` writes by a literal name (module doc)."""
    if len(code) > 1 << 20:
        code = code[: 1 << 20]
    found: list[str] = []
    for match in _WRITES.finditer(code):
        path = next((group for group in match.groups() if group), None)
        if path:
            found.append(path.strip())
        if len(found) >= _MAX_WRITES:
            break
    return found


__all__ = ["code_writes"]
