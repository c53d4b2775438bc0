"""``rake``: what a run of rake runs, read from the workspace ``Rakefile`` as Ruby code.

Rake loads the Rakefile (``-f FILE``, else ``Rakefile``, ``rakefile``, ``Rakefile.rb``,
``rakefile.rb``) and the ``rakelib/*.rake`` files, so their top level runs; then the tasks named
on the command line (else ``default``), with the tasks they depend on. What runs is read as
``ruby -e TEXT`` (the rules on inline code judge a ``rm_rf``, a ``system`` call …) with the
bodies of the other tasks blanked, and each ``sh``/``ruby`` command of the text is read as a
script. ``-e``/``-E``/``-p`` code runs too, and ``rake clean`` (``rake/clean``) deletes what
``CLEAN`` includes (``clobber``: ``CLOBBER`` too).

A task is found by its ``task``/``multitask`` line (``task :clean do``, ``task clean: [:a] do``,
``task "clean" => :a do``) and its body up to the ``end`` (or ``}``) at the same indentation;
a task is matched by its last name part (``db:clean`` runs every ``clean`` task, of any
namespace). Each symbol or string on a task's line may be a task it depends on. A Rakefile
whose shape is not that (an ``end`` not found, a task invoked from code: ``Rake::Task[…]``,
``invoke``, ``send``, ``eval``, ``import``) is read whole. A command built at run time
(``sh "rm -rf #{dir}"``, ``sh cmd``) is not known: the reading says so (``unreadable``).
"""

from __future__ import annotations

import re
import shlex
from typing import Final

from pytest_harness_audit.policy.shell.context import Context as Runner
from pytest_harness_audit.policy.shell.task_words import MAX_TASKS, first_text, option

_RAKEFILES: Final = ("Rakefile", "rakefile", "Rakefile.rb", "rakefile.rb")
#: Options whose value is the next word.
_VALUED: Final = frozenset(
    {"-f", "--rakefile", "-C", "--directory", "-I", "--libdir", "-r", "--require", "-R",
     "--rakelibdir", "-e", "--execute", "-E", "--execute-continue", "-p", "--execute-print",
     "-j", "--jobs", "-m", "--multitask", "-N", "--no-search"}
)  # fmt: skip
_CODE_OPTIONS: Final = ("-e", "--execute", "-E", "--execute-continue", "-p", "--execute-print")
#: A task's line opening its body: ``task :name … do |t|`` or ``{``.
_HEADER: Final = re.compile(
    r"^([ \t]*)(?:task|multitask)\b\s*\(?(.*?)\)?\s*(do|\{)\s*(?:\|[^|\n]*\|)?\s*(?:#.*)?$"
)
#: A task's line declaring it with no body (``task default: [:test]``).
_DECLARATION: Final = re.compile(r"^[ \t]*(?:task|multitask)\b(.*)$")
#: The names on a task's line: symbols, strings, ``name:`` keys.
_NAMES: Final = re.compile(r""":([\w?!]+)|([\w?!]+):(?!:)|'([^'\n]*)'|"([^"\n]*)\"""")
#: What runs a task otherwise than by the command line and dependencies, or loads other code.
_OTHERWISE: Final = re.compile(
    r"\bRake::|\b(?:invoke|execute|enhance|reenable|send|public_send|__send__|eval"
    r"|instance_eval|class_eval|instance_exec|method|define_method|import|load|Rake)\b"
)
#: A command run by rake's ``sh`` (or ``ruby``) with literal words (``sh 'rm -rf app'``).
_SH: Final = re.compile(r"(?<![\w.:])(sh|ruby)\b[ \t]*\(?[ \t]*(?=\S)")
_LITERAL: Final = re.compile(r"""'((?:[^'\\\n]|\\.)*)'|"((?:[^"\\\n]|\\.)*)\"""")


def rake(args: list[str], runner: Runner) -> None:
    """What ``rake args`` runs (module doc)."""
    for index, word in enumerate(args[:-1]):
        if word in _CODE_OPTIONS:
            runner.script(f"ruby -e {shlex.quote(args[index + 1])}")
    for index, word in enumerate(args[:-1]):
        if word in ("-r", "--require"):  # `-r ./x.rb`: a workspace library rake loads first
            for path in (args[index + 1], f"{args[index + 1]}.rb"):
                if text := runner.workspace_text(path):
                    _run_ruby(text, runner)
    folder = option(args, ("-C", "--directory"))
    prefix = f"{folder.rstrip('/')}/" if folder else ""
    given = option(args, ("-f", "--rakefile"))
    found = first_text(tuple(prefix + p for p in ((given,) if given else _RAKEFILES)), runner)
    if found is None:
        return
    libraries = runner.workspace_files(f"{prefix}rakelib") or []
    for library in libraries[:MAX_TASKS]:
        if library.endswith(".rake") and (text := runner.workspace_text(library)):
            _run_ruby(text, runner)  # (read whole: tasks may span the files)
    named = _named(args) or ["default"]
    text = found[1]
    _run_ruby(_running_text(text, named), runner)
    if "rake/clean" in text and {"clean", "clobber"} & set(named):
        _cleaned(text, "clobber" in named, runner)


def _cleaned(text: str, clobber: bool, runner: Runner) -> None:
    """``rake clean`` (``rake/clean``) deletes the files ``CLEAN`` holds, recursively;
    ``clobber`` those of ``CLOBBER`` too."""
    lists = ("CLEAN", "CLOBBER") if clobber else ("CLEAN",)
    for found in re.finditer(rf"\b(?:{'|'.join(lists)})\b\s*(?:\.include\s*\(?|<<)\s*", text):
        words, complete = _words(text, found.end())
        if not complete:
            runner.unknown("rake clean deletes files given at run time")
        elif words:
            runner.script(f"rm -rf -- {shlex.join(words)}")


def _named(args: list[str]) -> list[str]:
    """The tasks the command line names (``clean[arg]``: ``clean``; ``db:migrate``: ``migrate``)."""
    names: list[str] = []
    index = 0
    while index < len(args):
        word = args[index]
        if word == "--":  # what follows are tasks
            names.extend(w.split("[", 1)[0].rsplit(":", 1)[-1] for w in args[index + 1 :])
            break
        if word.startswith("-"):
            index += 2 if word in _VALUED else 1
            continue
        if "=" not in word.split("[", 1)[0]:  # `rake test VAR=1`: a variable
            names.append(word.split("[", 1)[0].rsplit(":", 1)[-1])
        index += 1
    return names


def _running_text(text: str, named: list[str]) -> str:
    """``text`` with the bodies of the tasks that do not run blanked (module doc); ``text``
    whole when its shape is not known."""
    if _OTHERWISE.search(text) is not None:
        return text
    lines = text.splitlines(keepends=True)
    bodies: list[tuple[str, int, int]] = []  # (task, first body line, end line), 0-based
    depends: dict[str, list[str]] = {}
    index = 0
    while index < len(lines):
        line = lines[index]
        header = _HEADER.match(line.rstrip("\n"))
        declared = header.group(2) if header else None
        if declared is None and (plain := _DECLARATION.match(line)) is not None:
            declared = plain.group(1)
        if declared is None:
            index += 1
            continue
        names = ["".join(parts) for parts in _NAMES.findall(declared)]
        if not names:
            return text  # a task named otherwise (a variable): not read here
        task = names[0].rsplit(":", 1)[-1]
        depends.setdefault(task, []).extend(name.rsplit(":", 1)[-1] for name in names[1:])
        if header is None:
            index += 1
            continue
        end = _body_end(lines, index, header.group(1), "end" if header.group(3) == "do" else "}")
        if end is None:
            return text
        bodies.append((task, index + 1, end))
        index = end + 1
    running = _closure(named, depends)
    if running is None:
        return text
    for task, first, end in bodies:
        if task not in running:
            for number in range(first, end):
                lines[number] = "\n"
    return "".join(lines)


def _body_end(lines: list[str], header: int, indent: str, closing: str) -> int | None:
    """The line closing the body opened at ``header`` (at the same indentation), every line
    between indented deeper; ``None`` when there is none such."""
    for number in range(header + 1, len(lines)):
        line = lines[number]
        if not line.strip():
            continue
        if not line.startswith(indent):
            return None
        rest = line[len(indent) :]
        if rest[:1] not in (" ", "\t"):
            word = rest.strip()
            return number if word == closing or word.startswith(f"{closing} ") else None
    return None


def _closure(named: list[str], depends: dict[str, list[str]]) -> set[str] | None:
    """The tasks ``named`` run, with what they depend on; ``None`` past the bound."""
    seen: set[str] = set()
    pending = list(named)
    while pending:
        task = pending.pop()
        if task in seen:
            continue
        if len(seen) >= MAX_TASKS:
            return None
        seen.add(task)
        pending.extend(depends.get(task, []))
    return seen


def _run_ruby(text: str, runner: Runner) -> None:
    """Ruby code rake runs: read as ``ruby -e TEXT``, its ``sh`` commands as scripts."""
    runner.script(f"ruby -e {shlex.quote(text)}")
    for found in _SH.finditer(text):
        line_start = text.rfind("\n", 0, found.start()) + 1
        if "#" in text[line_start : found.start()]:
            continue  # in a comment (or a string: read whole as Ruby above)
        words, complete = _words(text, found.end())
        if not complete:
            runner.unknown(f"a rake task runs a command built at run time: {found.group()}")
            continue
        command = words[0] if len(words) == 1 else shlex.join(words)
        runner.script(command if found.group(1) == "sh" else f"ruby {command}")


def _words(text: str, position: int) -> tuple[list[str], bool]:
    """The literal words of a call's arguments from ``position``, and whether they are all
    literals (no variable, no ``#{…}``)."""
    words: list[str] = []
    while (literal := _LITERAL.match(text, position)) is not None:
        single, double = literal.group(1), literal.group(2)
        if double is not None and "#{" in double:
            return words, False
        words.append(single if single is not None else str(double))
        position = literal.end()
        comma = re.match(r"[ \t]*,[ \t]*", text[position:])
        if comma is None:
            return words, True
        position += comma.end()
    return words, False


__all__ = ["rake"]
