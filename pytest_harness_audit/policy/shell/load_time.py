"""What loading a workspace JavaScript, Ruby or Perl module runs, judged as code.

``node -r ./x.js -e 1``, ``node -e "require('./x')"``, ``ruby -r ./x.rb -e1``, ``perl -I. -Mx
-e1`` (and ``RUBYOPT``/``PERL5OPT``) run the module's top level when it is loaded. The reading
follows such modules for the paths they name (:mod:`.imports`); here the module's text is also
recorded as the command ``node -e TEXT`` (``ruby -e``, ``perl -e``), so the rules that judge
program text (a recursive deletion, a file removed) judge what loading it runs, as
:mod:`.import_time` does for Python.

What is left out is only what cannot run at load: the body of a named function the module never
names again (``function clean(d) { fs.rmSync(d, {recursive: true}) }`` exported for others to
call, a Ruby ``def``, a Perl ``sub``). Everything else is kept, and the whole text is kept when
the reading cannot be sure of where a body ends or of what the module calls: code that turns
strings into names (``eval``, ``send``, ``this[name]``), a JavaScript template literal, a body
with a ``/`` (a regular expression could hide a brace), a Ruby body holding another block
(``end``) or a ``;``, a Perl body holding a brace, and the subs Perl itself calls (``import``
when ``use``/``-M`` loads the module, ``BEGIN``, ``END``…). Text cut out wrongly can only be
less than a body, never top-level code.
"""

from __future__ import annotations

import re
from typing import Final

#: Interpreters by the language of a module's file name.
INTERPRETERS: Final = {"js": "node", "ruby": "ruby", "perl": "perl"}
_LANGUAGE: Final = re.compile(r"\.(?:(m?[jt]sx?|c[jt]s)|(rb)|(pm|pl))$")
#: Most definitions looked at in one module.
_MAX_DEFINITIONS: Final = 256
_JS_FUNCTION: Final = re.compile(
    r"(?m)^[ \t]*(?:export[ \t]+(?:default[ \t]+)?)?(?:async[ \t]+)?function\*?[ \t]*([\w$]+)"
    r"[ \t]*\([^()]*\)[ \t]*\{"
    r"|^[ \t]*(?:export[ \t]+)?(?:const|let|var)[ \t]+([\w$]+)[ \t]*=[ \t]*(?:async[ \t]+)?"
    r"(?:function\*?[ \t]*[\w$]*[ \t]*\([^()]*\)|\([^()]*\)[ \t]*=>|[\w$]+[ \t]*=>)[ \t]*\{"
)
_JS_DYNAMIC: Final = re.compile(
    r"\beval\b|\bFunction\b|\[|\bthis\b|\barguments\b|`|\\u|\bvm\b|runIn\w*Context|\bScript\b"
    r"|compileFunction"
)
#: What may follow a function expression's body to call it at once (``function () {…}()``,
#: ``.call(``, a template tag), the body's end and blanks skipped.
_CONTINUED: Final = re.compile(r"\s*[^\s\w$}'\";]")
#: An export of names, no call (``module.exports = {clean}``, ``exports.clean = clean``,
#: ``export {clean}``).
_JS_EXPORTS: Final = re.compile(
    r"(?m)^[ \t]*(?:(?:module\.)?exports(?:\.[\w$]+)?[ \t]*=[ \t]*(?:[\w$]+|\{[\w$\s,:]*\})"
    r"|export[ \t]*\{[\w$\s,]*\})[ \t]*;?[ \t]*$"
)
_RUBY_DEF: Final = re.compile(
    r"(?m)^([ \t]*)def[ \t]+(?:self\.)?(\w+[?!]?)[ \t]*(?:\([^()\n]*\))?[ \t]*$"
)
_RUBY_DYNAMIC: Final = re.compile(
    r"\b(?:send|public_send|__send__|method|eval|instance_eval|class_eval|module_eval|"
    r"define_method|instance_method|at_exit|respond_to\?|method_missing|to_sym|intern|"
    r"to_proc|instance_exec|ObjectSpace|binding|Method|UnboundMethod)\b"
)
_PERL_SUB: Final = re.compile(r"(?m)^[ \t]*sub[ \t]+(\w+)[ \t]*\{")
_PERL_DYNAMIC: Final = re.compile(
    r"\beval\b|->\s*(?:can\b|\$)|&\s*[\$\{]|\*\{|__PACKAGE__|\bAUTOLOAD\b|\$\w+\s*->\s*\("
    r"|\$SIG\b|%SIG\b|\boverload\b|\$::\{|%main::|%::|\bcan\s*\(|\bsort\s+\$"
)
#: Subs Perl calls by itself besides those of all capitals (``BEGIN``, ``DESTROY``, ``TIEHASH``,
#: ``VERSION``…): ``use``/``-M`` call ``import``.
_PERL_CALLED: Final = frozenset({"import", "unimport", "can", "isa", "DOES"})
#: Functions a language calls by itself when its objects are used (``"#{x}"`` calls ``to_s``,
#: ``await`` of a module calls its ``then``).
_IMPLICIT: Final = {
    "js": frozenset({"then", "toString", "valueOf", "toJSON", "constructor"}),
    "ruby": frozenset(
        {"initialize", "method_missing", "respond_to_missing?", "respond_to?", "to_s", "to_str",
         "inspect", "to_a", "to_ary", "to_h", "to_hash", "to_i", "to_int", "to_proc", "each",
         "call", "coerce", "hash", "eql?", "included", "extended", "inherited", "prepended",
         "method_added", "singleton_method_added", "const_missing", "initialize_copy",
         "marshal_load", "_dump", "_load"}
    ),
}  # fmt: skip
_PERL_EXPORTS: Final = re.compile(
    r"(?m)^[ \t]*(?:our[ \t]+)?@EXPORT(?:_OK)?[ \t]*=[ \t]*qw[ \t]*\([\w\s]*\)[ \t]*;"
)
#: A ``use`` of a module with a list of the names it imports (``use File::Path qw(rmtree);``):
#: the names are only imported, none is called.
_PERL_USE_NAMES: Final = re.compile(
    r"(?m)^([ \t]*use[ \t]+[\w:]+)[ \t]+qw[ \t]*\([\w \t:]*\)[ \t]*;"
)


def module_language(path: str) -> str | None:
    """The language of a module file by its name (``js``, ``ruby``, ``perl``), else ``None``."""
    found = _LANGUAGE.search(path.lower())
    if found is None:
        return None
    return "js" if found.group(1) else "ruby" if found.group(2) else "perl"


def load_time_code(text: str, language: str) -> str:
    """The text of a ``language`` module without the bodies of the named functions nothing in
    it calls (module doc); the whole text when that cannot be known for sure."""
    if language == "js":
        return _js(text)
    if language == "ruby":
        return _ruby(text)
    return _perl(text)


def _js(text: str) -> str:
    """JavaScript: ``function NAME(…) {…}`` and ``const NAME = (…) => {…}`` never named again."""
    masked = _code_only(text)
    if "/" in masked or _JS_DYNAMIC.search(masked) is not None:
        return text  # a regular expression (or a division) may hide a brace from the scan
    spans: list[tuple[int, int, str]] = []
    for found in list(_JS_FUNCTION.finditer(masked))[:_MAX_DEFINITIONS]:
        start, open_at = found.start(), found.end() - 1
        end = _brace_end(masked, open_at)
        name = found.group(1) or found.group(2)
        if end is None or name in _IMPLICIT["js"] or _CONTINUED.match(masked, end + 1):
            continue  # `var x = function () {…}()`: called where it is defined
        spans.append((start, end + 1, name))
    # `module.exports = clean; module.exports()`: an export used besides, not left out
    used = len(re.findall(r"\bexports\b", masked)) > len(_JS_EXPORTS.findall(masked))
    return _without(text, masked, spans, None if used else _JS_EXPORTS)


def _ruby(text: str) -> str:
    """Ruby: a ``def NAME`` whose body holds no other block, closed by an ``end`` in line with
    it, never named again."""
    if _RUBY_DYNAMIC.search(text) is not None:
        return text
    spans: list[tuple[int, int, str]] = []
    for found in list(_RUBY_DEF.finditer(text))[:_MAX_DEFINITIONS]:
        closing = re.compile(rf"(?m)^{re.escape(found.group(1))}end[ \t]*$")
        end = closing.search(text, found.end())
        if end is None:
            continue
        body = text[found.end() : end.start()]
        if re.search(r"\bend\b|;|<<|=begin", body) or found.group(2) in _IMPLICIT["ruby"]:
            continue
        if re.match(r"\s*&?\.", text[end.end() :]):
            continue  # `end\n.then { … }`: a call on what `def` returns (its name)
        spans.append((found.start(), end.end(), found.group(2)))
    return _without(text, text, spans, None)


def _perl(text: str) -> str:
    """Perl: a ``sub NAME { … }`` whose body holds no brace, never named again."""
    if _PERL_DYNAMIC.search(text) is not None:
        return text
    text = _PERL_USE_NAMES.sub(r"\1;", text)
    spans: list[tuple[int, int, str]] = []
    for found in list(_PERL_SUB.finditer(text))[:_MAX_DEFINITIONS]:
        if found.group(1) in _PERL_CALLED or found.group(1).isupper():
            continue
        end = text.find("}", found.end())
        if end < 0 or "{" in text[found.end() : end] or "<<" in text[found.end() : end]:
            continue
        spans.append((found.start(), end + 1, found.group(1)))
    return _without(text, text, spans, _PERL_EXPORTS)


def _without(
    text: str, masked: str, spans: list[tuple[int, int, str]], exports: re.Pattern[str] | None
) -> str:
    """``text`` without the ``spans`` whose name the rest of it (the export lists left out)
    never uses; spans that overlap one cut out are kept."""
    if not spans:
        return text
    rest = masked
    for start, end, _ in spans:
        rest = rest[:start] + " " * (end - start) + rest[end:]
    if exports is not None:
        rest = exports.sub(lambda found: " " * len(found.group()), rest)
    kept: list[str] = []
    at = 0
    for start, end, name in sorted(spans):
        if start < at or re.search(rf"(?<![\w$]){re.escape(name)}(?![\w$])", rest):
            continue
        kept.append(text[at:start])
        at = end
    kept.append(text[at:])
    return "".join(kept)


def _code_only(text: str) -> str:
    """``text`` with the bodies of its JavaScript strings (their quotes kept) and its comments
    (their marks too) blanked, a one-line string ending at its line's end: a brace, a name or a
    ``/`` in them is not counted."""
    out = list(text)
    index, size = 0, len(text)
    while index < size:
        character = text[index]
        if character in "'\"":
            first, end = index + 1, index + 1
            while end < size and text[end] not in (character, "\n"):
                end += 2 if text[end] == "\\" else 1
        elif text.startswith("//", index):
            first, end = index, text.find("\n", index)
            end = size if end < 0 else end
        elif text.startswith("/*", index):
            first, end = index, text.find("*/", index + 2)
            end = size if end < 0 else end + 2
        else:
            index += 1
            continue
        for blank in range(first, min(end, size)):
            if out[blank] != "\n":
                out[blank] = " "
        index = end + 1 if character in "'\"" else end
    return "".join(out)


def _brace_end(masked: str, open_at: int) -> int | None:
    """Where the brace opened at ``open_at`` of code-only text closes, ``None`` if never."""
    depth = 0
    for index in range(open_at, len(masked)):
        character = masked[index]
        if character == "{":
            depth += 1
        elif character == "}":
            depth -= 1
            if depth == 0:
                return index
    return None


__all__ = ["INTERPRETERS", "load_time_code", "module_language"]
