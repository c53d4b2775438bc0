"""The comment lines and printed literals of a Ruby or Perl script file, blanked.

Ruby and Perl call without parentheses and interpolate code into strings (``"#{…}"``,
``"@{[ … ]}"``), so :func:`.program_files.program_text` does not scan their strings. What it
blanks is read by whole lines, where a line cannot be misread:

* a comment line (``# FileUtils.rm_rf('app') was removed``), not a ``#{`` interpolation;
* a line that only prints one plain literal (``puts "rm -rf app is dangerous"``,
  ``print "unlink .env\\n";``, ``$stderr.puts '…'``, ``print STDERR "…"``): no interpolation in
  it (``#``, ``$``, ``@``, a backtick), no quote of another kind.

Nothing is blanked when the code can run text or reach its own (``eval``, ``send``,
``instance_eval``, Perl's ``do``, ``__FILE__``, ``DATA``, ``$0``), route or redefine what prints
(``$stdout =``, ``reopen``, ``select``, ``open``, ``tie``, ``%SIG``, ``def puts``, ``alias``,
``method_missing``), has a heredoc (whose lines are text), or loads a module other than a few of
the language's own (``require 'fileutils'``, ``use strict``): another file could redefine
``puts``.
"""

from __future__ import annotations

import re
from typing import Final

#: What makes a line's meaning depend on other code (module doc).
_DYNAMIC: Final = {
    "ruby": re.compile(
        r"\b(?:eval|instance_eval|class_eval|module_eval|instance_exec|class_exec|send"
        r"|public_send|__send__|method|define_method|const_get|binding|ObjectSpace|__FILE__"
        r"|__dir__|DATA|__END__|load|require_relative|alias|alias_method|method_missing|Kernel"
        r"|reopen|prepend|extend|include|refine|using|at_exit|trap|ERB|instance_variable_get)\b"
        r"|\$std(?:out|err|in)\s*=(?!=)|\$(?:0|PROGRAM_NAME|DEBUG)\b|<<[~-]?['\"`]?[A-Za-z_]|^=begin"
        r"|\bdef\s+(?:self\.)?(?:puts|print|warn|p|pp|write)\b",
        re.M,
    ),
    "perl": re.compile(
        r"\b(?:eval|do|select|open|sysopen|pipe|tie|AUTOLOAD|CORE|GLOBAL|__FILE__|__DATA__"
        r"|__END__|DATA|local|bless|goto)\b|\$0\b|%SIG|\$SIG|\*STD|<<\s*['\"~]?[A-Za-z_]|^=\w",
        re.M,
    ),
}
#: What turns a string into a name the code calls (``FileUtils.send("rm_" + "r", d)``,
#: ``File::Path->can("rm" . "tree")``, ``&{"rm" . "tree"}``): such text is judged with what its
#: strings make when joined (:func:`.program_strings.joined_names`).
_NAMED_BY_TEXT: Final = {
    "ruby": re.compile(
        r"\b(?:send|public_send|__send__|method|instance_method|eval|instance_eval|class_eval"
        r"|module_eval|instance_exec|class_exec|const_get|define_method|to_sym|intern)\b|:[\"']"
    ),
    "perl": re.compile(
        r"\beval\b|->\s*(?:can\b|\$)|&\s*[\$\{]|\*\{|\$\w+\s*->\s*\(|\bcan\s*\(|\bno\s+strict\b"
        r"|\b__PACKAGE__\b|%(?:main)?::"
    ),
}
#: A module loaded: ``require 'x'`` (Ruby), ``use X``/``require X`` (Perl).
_LOADS: Final = {
    "ruby": re.compile(r"""\brequire\b\s*\(?\s*(?:['"]([^'"]*)['"])?"""),
    "perl": re.compile(r"\b(?:use|no|require)\s+([\w:]+|v?\d[\d.]*)?"),
}
_OWN_MODULES: Final = {
    "ruby": frozenset(
        {"fileutils", "json", "yaml", "set", "pathname", "optparse", "time", "date",
         "securerandom", "digest", "tmpdir", "tempfile", "logger", "English", "shellwords",
         "uri", "csv", "benchmark", "stringio", "pp", "etc", "find"}
    ),
    "perl": frozenset(
        {"strict", "warnings", "utf8", "feature", "File::Path", "File::Basename", "File::Spec",
         "File::Copy", "File::Find", "Getopt::Long", "POSIX", "Cwd", "Data::Dumper", "constant",
         "Carp", "File::Temp", "Time::HiRes"}
    ),
}  # fmt: skip
#: A comment line (not Ruby's ``#{`` interpolation at a line's start).
_COMMENT_LINE: Final = re.compile(r"^([ \t]*#)(?!\{)[^\n]*$", re.M)
#: A line that prints one plain literal, and nothing else.
_PRINTED: Final = {
    "ruby": re.compile(
        r"""^([ \t]*(?:(?:\$std(?:out|err)|STD(?:OUT|ERR))\.)?(?:puts|print|warn|p|pp)"""
        r"""(?:[ \t]*\(|[ \t]+)[ \t]*)(?:"((?:[^"'\\#$@`\n]|\\[nte])*)"|'([^'\\\n]*)')"""
        r"""([ \t]*\)?[ \t]*;?[ \t]*)$""",
        re.M,
    ),
    "perl": re.compile(
        r"""^([ \t]*(?:print|printf|say)(?:[ \t]+STD(?:OUT|ERR)[ \t]+|[ \t]*\([ \t]*|[ \t]+))"""
        r"""(?:"((?:[^"'\\$@`\n]|\\[nte])*)"|'([^'\\\n]*)')([ \t]*\)?[ \t]*;?[ \t]*)$""",
        re.M,
    ),
}


def names_by_text(text: str, language: str) -> bool:
    """Whether Ruby or Perl ``text`` can call a name it builds from strings (a Ruby ``send``,
    ``method``, ``eval``, a symbol made of a string; Perl's ``eval``, ``->can``, ``&$name``)."""
    pattern = _NAMED_BY_TEXT.get(language)
    return pattern is not None and pattern.search(text) is not None


def line_text(text: str, language: str) -> str:
    """Ruby or Perl ``text`` with its comment lines and the literals lines only print blanked
    (module doc); ``text`` itself when a line's meaning can depend on other code."""
    dynamic = _DYNAMIC.get(language)
    if dynamic is None or dynamic.search(text):
        return text
    own = _OWN_MODULES[language]
    for match in _LOADS[language].finditer(text):
        name = match.group(1)
        if not name or (name not in own and not re.fullmatch(r"v?\d[\d.]*", name)):
            return text
    text = _COMMENT_LINE.sub(lambda m: m.group(1), text)

    def printed(match: re.Match[str]) -> str:
        quote = '"' if match.group(2) is not None else "'"
        return f"{match.group(1)}{quote}{quote}{match.group(4)}"

    return _PRINTED[language].sub(printed, text)


__all__ = ["line_text", "names_by_text"]
