"""Signals program text sends: inline code (``python3 -c``, ``perl -e``, ``node -e``, ``ruby -e``,
``php -r``), a script file an interpreter runs, program text on its standard input.

The shell reading keeps every such text (``Reading.code``); the commands the text runs
(``os.system("pkill …")``, ``subprocess.run(["pkill", …])``) it already reads as commands. What
it does not read are the language's own senders (``os.kill``, ``os.killpg``,
``signal.pidfd_send_signal``, Node's ``process.kill``, Ruby's ``Process.kill``, Perl's ``kill``,
PHP's ``posix_kill``, psutil's methods), judged here as :mod:`.process_guard` judges
``kill``: a signal (not ``0``, not ``CONT``) sent

* to the parent (``os.getppid()``, ``process.ppid``, ``Process.ppid``, ``getppid``,
  ``posix_getppid()``, psutil's ``parent()``/``parents()``), to the own process group
  (``os.killpg(0, …)``, ``os.getpgrp()``, ``-os.getpid()``, ``-$$``, Perl's negative signal
  of ``0``) or to every process (``-1``), is refused;
* to a literal id, when that live process (or group) is the deciding process, an ancestor or a
  process running the package;
* to an id the code works out, when the code (or the call) looks processes up in a way that can
  find the harness's (``/proc``, ``psutil.process_iter()``/``pids()``, a ``pgrep``/``ps`` it
  runs): psutil's selection by name is judged by the string literals of the code — none (every
  process), or one that names or is part of a harness process's name or command line
  (``"harness"``, ``"python"``), reaches the harness; ``"uvicorn"`` does not.
* to an id the code holds, when the code finds its parent or its group (``os.getppid()``) and
  that id can carry it (``p = os.getppid(); os.kill(p, 9)``, a parameter, a name never bound:
  :mod:`.code_carriers`); a child it started or an id it read (``os.kill(child.pid, 15)``
  beside ``print(os.getppid())``) is no parent.

A signal to the interpreter itself (``os.getpid()``, ``$$``), to a child the code started
(``child.kill()``, ``process.kill(c.pid)``, ``os.killpg(os.getpgid(p.pid), …)``), a liveness
check (``os.kill(pid, 0)``) and a handler installed (``signal.signal(…)``) are let through. A
heuristic: code is not parsed; the calls are found by their shapes.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Final

from pytest_harness_audit.gate.code_carriers import parent_carriers
from pytest_harness_audit.gate.harness_forms import HarnessForms, protected_group, protected_pid
from pytest_harness_audit.policy.shell.code import joined_literals
from pytest_harness_audit.policy.shell.powershell_dotnet import split_commas

#: The cheap test before any regex: a sender's name.
SENDER_WORDS: Final = re.compile(r"kill|terminate|suspend|send_signal")  # and pidfd_send_signal
#: ``RECEIVER.kill(`` / ``kill(`` / ``killpg(`` / ``posix_kill(``, and Perl's and Ruby's
#: ``kill LIST`` without parentheses.
_CALL: Final = re.compile(
    r"(?:\b(?P<receiver>[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*)\s*\.\s*)?"
    r"\b(?P<name>killpg|kill|posix_kill|pidfd_send_signal|terminate|suspend|send_signal)\b"
    r"(?:\s*(?P<paren>\()|[ \t]+(?=[-\w$'\":]))"
)
#: Where a statement without parentheses ends.
_STATEMENT_END: Final = re.compile(r"[;\n}]|\s(?:or|and|if|unless)\s")
#: Signals that neither stop nor end a process (a check, ``CONT``).
_HARMLESS: Final = re.compile(
    r"""(?i)^[-+]?(?:0|18|['":]?(?:sig)?(?:cont|zero)['"]?|(?:\w+\.)*sigcont)$"""
)
#: A process id that is the parent (the host), a group or every process.
_PARENT: Final = re.compile(r"(?i)ppid|\bparents?\s*\(|getpgrp|posix_getpgrp")
#: ``getpgid(X)`` whose ``X`` is the code's own process (its group is the caller's).
_OWN_GROUP: Final = re.compile(
    r"getpgid\s*\(\s*(?:0|(?:os\.)?getpid\(\s*\)|\$\$|process\.pid|Process\.pid)?\s*\)"
)
#: The code's own process id.
_SELF: Final = re.compile(
    r"^(?:(?:os\.)?getpid\(\s*\)|\$\$|process\.pid|Process\.pid|\$PROCESS_ID|\$PID|"
    r"posix_getpid\(\s*\)|getmypid\(\s*\))$"
)
_NUMBER: Final = re.compile(r"^[-+]?\s*\d+$")
#: Look-ups that can find any process, the harness's among them.
_LOOKUP: Final = re.compile(r"/proc\b|process_iter|\bpids\s*\(|ps-list|find-process|Sys::Proc")
#: A sender named but not called where it is named (``f = os.kill``, ``getattr(os, "kill")``,
#: ``subprocess.run(["kill", …])`` of an argument the reading cannot know).
_REFERENCE: Final = re.compile(
    r"""\b(?:os|process|Process|posix)\s*\.\s*(?:kill|killpg)\b(?!\s*\()"""
    r"""|['"](?:kill|killpg|pkill|killall|skill)['"]\s*,|getattr\s*\([^)]*['"]kill(?:pg)?['"]"""
)
_READ_FILE: Final = re.compile(
    r"""(?:\bopen|read_text|readFileSync|File\.read|IO\.read|file_get_contents|Path)\s*\(\s*"""
    r"""['"]([^'"\n]{1,256})['"]"""
)
_LITERAL: Final = re.compile(r"""'([^'\\\n]{0,200})'|"([^"\\\n]{0,200})\"""")
#: Literals a psutil selection writes that name an attribute, not a process.
_ATTRIBUTES: Final = frozenset(
    {"name", "cmdline", "pid", "ppid", "exe", "username", "status", "info", "cwd", "comm",
     "stat", "create_time", "utf-8", "utf8", "/proc", "/proc/", "r", "rb", "w"}
)  # fmt: skip
_MAX_CODE: Final = 1 << 16
_MAX_ARGS: Final = 512


def code_signal(
    codes: Sequence[str],
    forms: Callable[[], HarnessForms],
    looked_up: bool,
    pid_file: Callable[[str], bool] = lambda path: False,
) -> str | None:
    """The first sender in the program texts ``codes`` that reaches a harness process (module
    doc), else ``None``; ``forms`` gives the harness's process forms, ``looked_up`` whether the
    call's commands look up processes in a way that can find the harness's, ``pid_file(path)``
    whether the id a file holds now is a harness process's (``os.kill(int(open(F).read()), 9)``:
    the file read as the code would)."""
    for text in codes:
        text = text[:_MAX_CODE]
        joined = joined_literals(text)  # `exec("os.ki" + "ll(…)")`
        if not SENDER_WORDS.search(joined):
            continue
        for code in (text, joined) if joined != text else (text,):
            bare = _LITERAL.sub("''", code)
            # the code finds its parent or group itself: an id it holds may be that
            relative = bool(_PARENT.search(bare) or _OWN_GROUP.search(bare))
            found_all = looked_up or bool(_LOOKUP.search(code))
            lookup = found_all or relative
            # an id the code holds reaches the parent when it can carry the parent's id
            carries = parent_carriers(bare) if relative and not found_all else None
            for match in _CALL.finditer(code):
                found = _judged(code, match, lookup, forms, pid_file, carries)
                if found is not None:
                    return found
            reference = _REFERENCE.search(code)
            if reference is not None and lookup:
                return reference.group().strip(" ,")
    return None


def _judged(
    code: str,
    match: re.Match[str],
    lookup: bool,
    forms: Callable[[], HarnessForms],
    pid_file: Callable[[str], bool],
    carries: Callable[[str], bool] | None = None,
) -> str | None:
    """The sender ``match`` as shown, when its signal reaches a harness process; ``carries``
    (code that finds its parent but looks up no other process): whether an id written so can
    hold the parent's (else every id not known is taken to)."""
    receiver = match.group("receiver") or ""
    name = match.group("name")
    start = match.end()
    if match.group("paren"):
        inside = _balanced(code, start)
        if inside is None:
            return None
        args = _split(inside.replace("=>", ","))
        shown = code[match.start() : start + len(inside) + 1]
    else:
        if name != "kill" or receiver not in ("", "Process"):
            return None
        end = _STATEMENT_END.search(code, start)
        args = _split(code[start : end.start() if end else start + _MAX_ARGS].replace("=>", ","))
        shown = code[match.start() : end.start() if end else start + _MAX_ARGS].strip()
    if name in ("terminate", "suspend", "send_signal") or (name == "kill" and not args):
        # an object's method: psutil's (judged by how the code found the process), else a
        # child the code started (`child.kill()`, `p.terminate()`)
        if name == "send_signal" and args and _HARMLESS.match(args[0]):
            return None
        reaches = _psutil_reaches(code, lookup, forms, carries)
        return shown if "psutil" in code and reaches else None
    if receiver not in ("os", "process", "Process", "") and len(args) < 2:
        return None  # `child.kill('SIGTERM')`: a method of a process object the code made
    if name == "killpg":
        pid, signal, group = args[0] if args else "", args[1] if len(args) > 1 else "", True
    elif (
        name == "posix_kill"
        or receiver in ("process", "os")
        or (receiver not in ("Process", "") and len(args) >= 2)
    ):
        # Python's `os.kill(pid, sig)`, Node's `process.kill(pid[, sig])`, PHP's
        pid = args[0] if args else ""
        signal = args[1] if len(args) > 1 else ("TERM" if receiver == "process" else "")
        group = False
    elif receiver == "Process" or (receiver == "" and args and _signal_like(args[0])):
        # Ruby's `Process.kill(sig, *pids)`, Perl's `kill SIG, LIST`
        signal, pids = args[0], args[1:]
        if _HARMLESS.match(signal.strip()):
            return None
        negative = signal.lstrip("'\"").startswith("-")
        for pid in pids:
            reach = lookup if carries is None else carries(pid)
            if _pid_reaches(pid.strip(), negative, reach) or _from_file(pid, pid_file):
                return shown
        return None
    else:
        pid, signal, group = (args[0] if args else ""), (args[1] if len(args) > 1 else ""), False
    if signal and _HARMLESS.match(signal.strip()):
        return None
    reach = lookup if carries is None else carries(pid)
    if _pid_reaches(pid.strip(), group, reach) or _from_file(pid, pid_file):
        return shown
    return None


def _from_file(pid: str, pid_file: Callable[[str], bool]) -> bool:
    """Whether the id written ``pid`` is read from a file (``open("F").read()``,
    ``File.read("F")``, ``readFileSync("F")``) that holds a harness process's id now."""
    return any(pid_file(path) for path in _READ_FILE.findall(pid))


def _signal_like(word: str) -> bool:
    """Whether ``word`` reads as a signal (Perl's and Ruby's first argument), not an id."""
    word = word.strip().strip("'\"").lstrip("-:").strip("'\"")
    return bool(re.fullmatch(r"\d{1,2}|(?:SIG)?[A-Z]{2,6}[0-9]?|(?:\w+::)*SIG\w+|ZERO", word))


def _pid_reaches(pid: str, group: bool, lookup: bool) -> bool:
    """Whether a signal to the id written ``pid`` (``group``: a process group) reaches the
    harness (module doc)."""
    text = pid.strip().removeprefix("int(").removesuffix(")") if pid.startswith("int(") else pid
    if not text:
        return group  # `os.killpg()` is no call; Perl's `kill -9` of nothing signals nothing
    if _PARENT.search(text) or _OWN_GROUP.search(text):
        return True
    negative = text.startswith("-")
    bare = text.lstrip("-+ ").strip()
    if _NUMBER.match(text):
        number = int(text.replace(" ", ""))
        if number in (0, -1) or (group and number in (0, 1)):
            return True  # the own group, every process
        if group or number < 0:
            return protected_group(abs(number))
        return protected_pid(number)
    if _SELF.match(bare):
        return negative or group  # itself; its group (`-$$`, `os.killpg(os.getpid(), …)`)
    return lookup  # an id only the run knows: reaches the harness beside a look-up that can


def _psutil_reaches(
    code: str,
    lookup: bool,
    forms: Callable[[], HarnessForms],
    carries: Callable[[str], bool] | None = None,
) -> bool:
    """Whether psutil processes the code signals can be the harness's (module doc;
    ``carries``: code that finds its parent and looks up nothing else, whose processes reach
    the parent only through ``.parent()`` or an id that can carry the parent's)."""
    bare = _LITERAL.sub("''", code)
    if carries is None and _PARENT.search(bare):
        return True  # `psutil.Process(os.getppid())`, `.parent()` (not an attribute's name)
    if carries is not None and re.search(r"\bparents?\s*\(", bare):
        return True
    for made in re.finditer(r"\bProcess\s*\(", code):
        inside = _balanced(code, made.end())
        if inside is None or not inside.strip():
            continue
        if _pid_reaches(inside.strip(), False, carries is not None and carries(inside)):
            return True
    if carries is not None:
        return False
    if not lookup:
        return False  # `psutil.Process(child.pid)`, `.children()`: processes the code started
    literals = [
        one or two
        for one, two in _LITERAL.findall(code)
        if (one or two) and (one or two) not in _ATTRIBUTES and re.search(r"\w", one or two)
    ]
    if not literals:
        return True  # every process it lists
    harness = forms()
    return any(harness.text_selects(literal) for literal in literals)


def _balanced(code: str, start: int) -> str | None:
    """The text from ``start`` to the parenthesis that closes the one before it."""
    depth = 1
    for index in range(start, min(len(code), start + _MAX_ARGS)):
        char = code[index]
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
            if depth == 0:
                return code[start:index]
    return None


def _split(text: str) -> list[str]:
    """``text``'s arguments, split at the commas outside brackets and quotes (backticks too)."""
    args = [part.strip() for part in split_commas(text, "'\"`")]
    return args[:-1] if args and not args[-1] else args


__all__ = ["SENDER_WORDS", "code_signal"]
