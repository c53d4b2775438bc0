"""The program text a Perl, Ruby or PHP command runs, read with its language known.

Every ``-e`` of ``perl -e A -e B`` (``ruby`` too; PHP's ``-r``/``-B``/``-R``/``-E``) is code,
bundled (``perl -lne CODE``) or attached (``perl -e'CODE'``); without one, the script file
operand's text or the standard input is. The shell commands this text runs in the language's
own syntax (:mod:`.quoted_shellouts`) are read as scripts (through the values of its variables,
:mod:`.code_values`; a command not known makes the literals that could be it read as commands,
and one whose name is not known at all, unreadable); the code after the first option is read as
inline code too (its files, its calls).
"""

from __future__ import annotations

from typing import Final

from pytest_harness_audit.policy.shell.context import Context as Runner
from pytest_harness_audit.policy.shell.quoted_shellouts import language_of, quoted_shell_outs
from pytest_harness_audit.policy.shell.shellouts import guessed_runs

#: Per language: options whose value is code, options taking the next word as their value,
#: and option letters that take the rest of their word (perl ``-Mstrict``, ``-i.bak``).
_CODE: Final = {"perl": "eE", "ruby": "e", "php": "rBRE"}
_VALUED: Final = {
    "perl": frozenset(),
    "ruby": frozenset({"-I", "-r", "-C", "-E", "--encoding", "--require"}),
    "php": frozenset({"-d", "-c", "-f", "-z", "-t", "-S", "--define", "--file"}),
}
_REST: Final = {"perl": "IMmxidDCF", "ruby": "IrCEFiKxTWU0l", "php": "dcfzt"}
_DIGITS: Final = {"perl": "l0", "ruby": ""}


def interpreter_code(name: str, args: list[str], runner: Runner) -> None:
    """Read what the ``perl``/``ruby``/``php`` command ``args`` runs (module doc)."""
    language = language_of(name)
    if language is None:
        return
    codes, operand = _codes(language, args)
    if not codes:
        text = runner.workspace_text(operand) if operand is not None else runner.stdin_text
        codes = [text] if text is not None else []
    elif len(codes) > 1:
        for code in codes[1:]:
            runner.read_text(code, code=True)  # the first is read by the interpreter's reading
    for code in codes:
        unresolved: list[bool] = []
        for command in quoted_shell_outs(code, language, unresolved):
            runner.script(command)
        if unresolved:  # `system $c`: a value built from literals, or not known at all
            guessed_runs(code, any(unresolved), runner)


def _codes(language: str, args: list[str]) -> tuple[list[str], str | None]:
    """The code options' values and the script file operand (``None``: none)."""
    codes: list[str] = []
    index = 0
    while index < len(args):
        word = args[index]
        index += 1
        if word == "--" or word == "-" or not word.startswith("-"):
            operand = args[index] if word == "--" and index < len(args) else word
            return codes, None if operand in ("-", "--") or codes else operand
        if language == "php" and word in ("-f", "--file") and index < len(args):
            return codes, None if codes else args[index]  # `php -f x.php`: the script
        if word.startswith("--") or word in _VALUED[language]:
            index += word in _VALUED[language] and "=" not in word
            continue
        position = 1
        while position < len(word):
            letter = word[position]
            position += 1
            if letter in _CODE[language]:
                if position < len(word):
                    codes.append(word[position:])
                elif index < len(args):
                    codes.append(args[index])
                    index += 1
                break
            if letter in _DIGITS.get(language, ""):  # perl `-l012`, `-0777`, `-0x1F`
                digits = (
                    "0123456789abcdefABCDEF" if word[position : position + 1] == "x" else "01234567"
                )
                position += word[position : position + 1] == "x"
                while position < len(word) and word[position] in digits:
                    position += 1
            elif letter in _REST[language]:
                break
    return codes, None


__all__ = ["interpreter_code"]
