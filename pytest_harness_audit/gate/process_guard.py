"""The harness's own processes are out of the agent's reach, like its store.

The host runs every hook step as a process of its own, and takes a hook that was killed (or
stopped, or starved) as a non-blocking error: the call runs, unjudged. A command that signals
those processes — ``nohup sh -c 'while :; do pkill -f harness-audit; done' &`` kills each hook
as it starts — is therefore refused before it runs, like a call that touches the store
(``tamper_attempt``, verdict FAIL), whatever the policy says. The command is judged by the
simple commands the one shell reading gives (:mod:`pytest_harness_audit.policy.shell`), with
their words, so no spelling of it (a variable, ``eval``, ``bash -c``, ``env``/``sudo``/``nohup``,
``xargs``) changes the judgement, and by those of the files it runs as shell (``bash stop.sh``,
a recipe, a package script: the reading's ``ran``):

* ``pkill``/``killall``/``skill``/``snice`` whose pattern or name can select a harness process
  (:class:`~.harness_forms.HarnessForms`: ``harness-audit``, ``python``, ``pytest``, ``sh``,
  ``hook``, ``-r 'harn.*'`` …), that select by anything but a pattern (``-u``, ``-P $PPID``),
  or that invert it (``-v``);
* ``kill`` (and ``renice``, ``prlimit --pid``, ``ionice -p``) of every process (``-1``), of its
  own group (``0``), of the parent (``$PPID``), of a live process id that is this process, an
  ancestor (the host) or a process of the package, of such a process group, or of process ids
  only the run knows (``$(…)``, ``xargs kill``) when the same call looks processes up in a way
  that can find the harness's (``pgrep -f harness``, ``pidof python3``, ``ps`` not filtered to
  other programs, anything read from ``/proc/…`` or naming ``$PPID``);
* signal ``0`` (a check) and ``CONT`` are let through, as are ``kill %1`` and ``kill $!`` (the
  agent's own jobs). ``kill $(cat server.pid)``: the reading reads the file as the shell would,
  and the id it holds is judged live like a literal one (the agent's server: allowed; the
  harness, or the host: refused); a file that does not exist yet when the call is decided is an
  id only the run knows, refused only beside a look-up that can find the harness;
* the same signals sent by the program text the command runs (``python3 -c "os.kill(
  os.getppid(), 9)"``, ``perl -e 'kill 9, getppid'``, psutil loops: :mod:`.code_signals`),
  and debuggers attached to, or ``fuser -k`` of what, a harness process uses
  (:mod:`.process_attach`).

A hook killed some other way (a program the reading does not know, an id worked out in a way it
does not follow) still leaves its call in the host's transcript, judged at the session's next
event and by ``audit report``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from pytest_harness_audit.gate.code_signals import code_signal
from pytest_harness_audit.gate.harness_forms import HarnessForms, protected_group, protected_pid
from pytest_harness_audit.gate.process_attach import ATTACHERS, attaches, lsof_finds
from pytest_harness_audit.gate.store_git import CallCommands
from pytest_harness_audit.gate.store_guard import split_target
from pytest_harness_audit.policy.targets import KEY_KINDS

#: What the refusal says is out of the agent's reach.
HARNESS_PROCESSES = "every process of the harness"
#: The kind of a parameter holding a shell command (``command``, ``cmd``, ``script``, ``argv``).
_SHELL = KEY_KINDS["command"]
#: Interpreters whose program text the reading keeps (:mod:`.code_signals` reads it).
_INTERPRETER = r"(?:python[0-9.]*|perl[0-9.]*|ruby[0-9.]*|node|nodejs|php[0-9.]*|deno|bun)"
#: The cheap test before a text is read as a command: a sender named, or a file run as shell
#: (a script, a sourced file, a recipe, a package script), whose commands the reading reads.
_SCREEN = re.compile(
    r"kill|nice|prlimit|terminate|suspend|send_signal|gdb|lldb|strace|ltrace|gcore|fuser"
    r"|py-spy|pstack|reptyr|eu-stack"
    r"|\b(?:sh|bash|dash|zsh|ksh|source|make|just|npm|yarn|pnpm|bun|task)\b"
    r"|(?:^|[\s;&|(`])\.{1,2}/|(?:^|[\s;&|(`])\.\s"
    # an interpreter given code (`-c`, `-e`, `-r`, `--eval`), a script file or its standard
    # input, whose text may send signals (`python -m pytest` runs no text of the command's)
    rf"|\b{_INTERPRETER}\b(?=[^;&|]*?(?:\s-[A-Za-z]*[cerpE]\b|\s--eval\b|\s-(?:\s|$)"
    r"|\.(?:py|pyw|pl|pm|rb|js|mjs|cjs|ts|php)\b))"
    rf"|[|<]\s*(?:\S*/)?{_INTERPRETER}\s*(?:$|[;&|)<])|{_INTERPRETER}\s*<"
)
#: A module an interpreter runs (``python3 -m NAME``).
_MODULE = re.compile(rf"\b{_INTERPRETER}\b[^;&|]*?\s-m\s*([A-Za-z_][\w.]*)")
#: A script file an interpreter runs (``python3 stop``), its options passed over.
_SCRIPT = re.compile(rf"\b{_INTERPRETER}(?:\s+-[A-Za-z]+)*\s+([^\s;&|<>'\"$`-][^\s;&|<>]*)")
#: Commands that signal (or limit, or slow) processes they select by pattern or name.
_PATTERN_SENDERS = frozenset({"pkill", "killall", "killall5", "skill", "snice"})
#: Commands that act on process ids.
_ID_SENDERS = frozenset({"kill", "renice", "prlimit", "ionice"})
#: Prefixes that run the next word as the command.
_WRAPPERS = frozenset({"busybox", "command", "builtin", "exec"})
#: Commands that look processes up (their ids reach a ``kill`` through ``$(…)`` or ``xargs``).
_LOOKUPS = frozenset({"pgrep", "pidof", "ps", "pstree", "top"})
_FILTERS = frozenset({"grep", "egrep", "fgrep", "rg"})
#: Signals that cannot stop or end a process (``0`` only checks that it exists).
_HARMLESS_SIGNALS = frozenset({"0", "CONT", "18"})
#: ``pkill``/``pgrep`` options taking a value (a word of its own, or glued to a short one).
_PKILL_VALUED = frozenset(
    (  # noqa: SIM905 - option lists read better as words
        "-d --delimiter -g --pgroup -G --group -P --parent -s --session -t --terminal -u --euid "
        "-U --uid -F --pidfile --ns --nslist -q --queue -r --runstates --signal --cgroup"
    ).split()
)
#: ``pkill`` options that select processes by other things than the pattern.
_PKILL_SELECTING = frozenset(
    (  # noqa: SIM905 - option lists read better as words
        "-g --pgroup -G --group -P --parent -s --session -t --terminal -u --euid -U --uid --ns "
        "--cgroup"
    ).split()
)
_KILLALL_VALUED = frozenset(
    (  # noqa: SIM905 - option lists read better as words
        "-s --signal -u --user -o --older-than -y --younger-than -Z --context -n --ns"
    ).split()
)
_NUMBER = re.compile(r"-?[0-9]+")
#: A word only the run knows: a substitution (``$(…)``), a variable the reading kept.
_UNKNOWN = re.compile(r"\$\(…\)|\$\{?[A-Za-z_]|`")
#: Words that find the agent's parent or any process by its place: ``$PPID``, ``/proc/…``.
_RELATIVE = re.compile(r"PPID|^/proc/")


class ProcessGuard:
    """Tells whether a call's commands signal the harness's processes (module docstring)."""

    def __init__(self, root: str | None, storage: str | None = None, policy: str | None = None):
        self.root = root
        self._storage = storage
        self._policy = policy
        self._forms: HarnessForms | None = None

    @property
    def forms(self) -> HarnessForms:
        """The harness's process names and command lines (built on first use)."""
        if self._forms is None:
            self._forms = HarnessForms(self._storage, self._policy)
        return self._forms

    def offending(self, targets: Iterable[str], params: Mapping[str, Any]) -> str | None:
        """The first command of a call that signals a harness process, else ``None``."""
        commands = CallCommands(params)
        # a search pattern, a path or a URL that reads like a command is none (`Grep "pkill -u"`)
        inert = {
            value
            for key, value in params.items()
            if isinstance(value, str) and KEY_KINDS.get(key, _SHELL) != _SHELL
        }
        argvs: list[list[str]] = []
        for target in targets:
            kind, text = split_target(target)
            screened = _SCREEN.search(text) or self._runs_workspace_code(text)
            if kind or not screened or text in inert or commands.judged(text):
                continue
            argvs.extend(_unwrapped(argv) for argv in commands.read(text, self.root))
        # what a script file, a recipe or a package script the command runs does (`bash stop.sh`)
        argvs.extend(_unwrapped(argv) for argv in commands.ran)
        if not argvs:
            return None
        return self.offending_commands([argv for argv in argvs if argv], commands.code)

    def _runs_workspace_code(self, text: str) -> bool:
        """Whether ``text`` runs a workspace module (``python3 -m stop``: ``stop.py``, or a
        package's ``__main__.py``) or a script file named without an extension (``python3
        stop``), whose code the reading reads."""
        root = self.root or os.getcwd()
        for name in _MODULE.findall(text):
            path = os.path.join(root, *name.split("."))
            if os.path.isfile(f"{path}.py") or os.path.isfile(os.path.join(path, "__main__.py")):
                return True
        return any(os.path.isfile(os.path.join(root, name)) for name in _SCRIPT.findall(text))

    def offending_commands(
        self, argvs: Sequence[Sequence[str]], codes: Sequence[str] = ()
    ) -> str | None:
        """The first of a call's simple commands (argv lists) that signals a harness process,
        or of the program texts ``codes`` they run (:mod:`.code_signals`)."""
        looked_up = self._looks_up_harness(argvs)
        for argv in argvs:
            name = os.path.basename(argv[0])
            if name in _PATTERN_SENDERS and self._selects(name, argv[1:]):
                return " ".join(argv)
            if name in _ID_SENDERS and _ids_reach(name, argv[1:], looked_up):
                return " ".join(argv)
            if name in ATTACHERS and attaches(name, argv[1:], looked_up, self.root):
                return " ".join(argv)
        return code_signal(codes, lambda: self.forms, looked_up, self._pid_file_reaches)

    def _selects(self, name: str, arguments: Sequence[str]) -> bool:
        if name == "killall5":
            return True  # every process but the caller's session
        if name == "killall":
            return self._killall_selects(arguments)
        if name in ("skill", "snice"):
            operands = [word for word in arguments if not word.startswith("-")]
            return not operands or any(self._names_or_pattern(word) for word in operands)
        return self._pkill_selects(arguments, signals=True)

    def _names_or_pattern(self, word: str) -> bool:
        if _UNKNOWN.search(word):
            return True
        forms = self.forms
        return forms.name_matches(word) or forms.pattern_matches(
            word, full=True, exact=False, ignore_case=False
        )

    def _pkill_selects(self, arguments: Sequence[str], *, signals: bool) -> bool:
        """Whether ``pkill``/``pgrep ARGUMENTS`` can select a harness process."""
        full = exact = ignore_case = inverse = selecting = False
        patterns: list[str] = []
        signal = ""
        words = list(arguments)
        index = 0
        while index < len(words):
            word = words[index]
            index += 1
            if word == "--":
                patterns.extend(words[index:])
                break
            if not word.startswith("-") or word == "-":
                patterns.append(word)
                continue
            option, _, glued = word.partition("=")
            if option in _PKILL_VALUED or (option[:2] in _PKILL_VALUED and len(option) > 2):
                value = glued or (option[2:] if not option.startswith("--") else "")
                if not value and index < len(words):
                    value, index = words[index], index + 1
                short = option if option.startswith("--") else option[:2]
                selecting = selecting or short in _PKILL_SELECTING
                if short == "--signal":
                    signal = value
                if short in ("-F", "--pidfile") and self._pid_file_reaches(value):
                    return True  # `pkill -F harness.pid`: the id the file holds
                continue
            if option.startswith("--"):
                full = full or option == "--full"
                exact = exact or option == "--exact"
                ignore_case = ignore_case or option == "--ignore-case"
                inverse = inverse or option == "--inverse"
                continue
            letters = option[1:]
            if signals and (letters.isdigit() or letters.isupper()):
                signal = letters  # `pkill -9`, `pkill -KILL`
                continue
            full, exact = full or "f" in letters, exact or "x" in letters
            ignore_case, inverse = ignore_case or "i" in letters, inverse or "v" in letters
        if signals and _harmless(signal):
            return False
        if inverse or (not patterns and selecting):
            return True
        if any(_UNKNOWN.search(pattern) for pattern in patterns):
            return True  # `xargs pkill -f < patterns`, `pkill -f "$P"`: only the run knows it
        return any(
            self.forms.pattern_matches(p, full=full, exact=exact, ignore_case=ignore_case)
            for p in patterns
        )

    def _pid_file_reaches(self, path: str) -> bool:
        """Whether the process id a pid file holds now is a harness process (a file that cannot
        be read is an id the gate cannot know, as ``kill $(cat FILE)``)."""
        full = os.path.join(self.root or os.getcwd(), os.path.expanduser(path))
        try:
            with open(full, encoding="utf-8", errors="replace") as handle:
                words = handle.read(64).split()
        except OSError:
            return False
        return (
            bool(words)
            and _NUMBER.fullmatch(words[0]) is not None
            and (protected_pid(int(words[0])) if int(words[0]) > 0 else True)
        )

    def _killall_selects(self, arguments: Sequence[str]) -> bool:
        regex = ignore_case = selecting = False
        names: list[str] = []
        signal = ""
        words = list(arguments)
        index = 0
        while index < len(words):
            word = words[index]
            index += 1
            if word == "--":
                names.extend(words[index:])
                break
            if not word.startswith("-"):
                names.append(word)
                continue
            option, _, glued = word.partition("=")
            if option in _KILLALL_VALUED:
                value = glued
                if not value and index < len(words):
                    value, index = words[index], index + 1
                selecting = selecting or option in ("-u", "--user")
                if option in ("-s", "--signal"):
                    signal = value
                continue
            letters = option[1:]
            if letters.isdigit() or (letters.isupper() and letters != "I"):  # `-I`: ignore case
                signal = letters
                continue
            regex = regex or "r" in letters or option == "--regexp"
            ignore_case = ignore_case or "I" in letters or option == "--ignore-case"
        if _harmless(signal):
            return False
        if not names:
            return selecting  # `killall -u me`: every process of the user
        forms = self.forms
        for name in names:
            if _UNKNOWN.search(name):
                return True
            if regex and forms.pattern_matches(
                name, full=False, exact=False, ignore_case=ignore_case
            ):
                return True
            if not regex and forms.name_matches(name, ignore_case=ignore_case):
                return True
        return False

    def _looks_up_harness(self, argvs: Sequence[Sequence[str]]) -> bool:
        """Whether the call looks up process ids in a way that can find a harness process."""
        filters = [
            word
            for argv in argvs
            if os.path.basename(argv[0]) in _FILTERS
            for word in argv[1:]
            if not word.startswith("-")
        ]
        if any(_RELATIVE.search(word) for argv in argvs for word in argv):
            return True  # `$(awk '{print $4}' /proc/$PPID/stat)`: the host, its ancestors
        for argv in argvs:
            name = os.path.basename(argv[0])
            if name == "lsof" and lsof_finds(
                argv[1:], self.root, lambda word: any(p.startswith(word) for p in self.forms.names)
            ):
                return True  # `kill $(lsof -t -i :PORT)` of the proxy's port
            if name not in _LOOKUPS:
                continue
            if name == "pgrep" and self._pkill_selects(argv[1:], signals=False):
                return True
            if name == "pidof" and any(
                self._names_or_pattern(word) for word in argv[1:] if not word.startswith("-")
            ):
                return True
            if name in ("ps", "pstree", "top") and (
                not filters or any(self._names_or_pattern(word) for word in filters)
            ):
                return True
        return False


def _unwrapped(argv: Sequence[str]) -> list[str]:
    """``argv`` without the prefixes that run the next word (``busybox kill``), and a sender
    ``xargs`` runs given ids only the run knows (``xargs -I{} kill {}``)."""
    words = list(argv)
    while words and os.path.basename(words[0]) in _WRAPPERS and len(words) > 1:
        words = words[1:]
    if words and os.path.basename(words[0]) == "xargs":
        for index, word in enumerate(words[1:], start=1):
            if os.path.basename(word) in _ID_SENDERS | _PATTERN_SENDERS:
                return [*words[index:], "$(…)"]
    return words


def _harmless(signal: str) -> bool:
    return bool(signal) and signal.upper().removeprefix("SIG") in _HARMLESS_SIGNALS


def _ids_reach(name: str, arguments: Sequence[str], looked_up: bool) -> bool:
    """Whether ``kill``/``renice``/``prlimit``/``ionice ARGUMENTS`` reaches a harness process."""
    operands, groups, users, harmless = _id_operands(name, arguments)
    if harmless or (name == "prlimit" and not operands):
        return False  # a check, a list, or `prlimit … COMMAND` (limits its own command)
    if users:
        return True  # `renice -u me`: every process of the user
    if name == "kill" and not operands:
        return looked_up  # `… | xargs kill`: the ids come from what was looked up
    for operand, group in [(o, False) for o in operands] + [(g, True) for g in groups]:
        if operand.startswith("%") or operand in ("$!", "$$"):
            continue  # the agent's own jobs, its own shell
        if "PPID" in operand or operand in ("0", "-0", "-1", "-$$"):
            return True  # the parent (the host), its own group, every process
        if _NUMBER.fullmatch(operand):
            number = int(operand)
            if group or number < 0:
                if protected_group(abs(number)):
                    return True
            elif protected_pid(number):
                return True
            continue
        if looked_up:
            return True  # `kill $(pgrep -f harness)`: an id only the run knows
    return False


def _id_operands(name: str, arguments: Sequence[str]) -> tuple[list[str], list[str], bool, bool]:
    """``(process ids, process groups, selects users, harmless)`` of an id sender's words."""
    operands: list[str] = []
    groups: list[str] = []
    users = False
    words = list(arguments)
    index = 0
    mode = "p"
    if name == "kill":
        # the first word may be the signal (`-9`, `-KILL`, `-s KILL`, `-n 9`); then the ids
        first = words[0] if words else ""
        signal = ""
        if first in ("-l", "-L", "--list", "--table"):
            return [], [], False, True
        if first in ("-s", "-n", "--signal"):
            signal, index = (words[1] if len(words) > 1 else ""), 2
        elif first.startswith("-") and first != "--" and "$" not in first:
            signal, index = first[1:], 1
        if _harmless(signal):
            return [], [], False, True
        operands = [word for word in words[index:] if word != "--"]
        return operands, groups, users, False
    while index < len(words):
        word = words[index]
        index += 1
        if word in ("-p", "--pid"):
            mode = "p"
            if name == "prlimit" and index < len(words):
                operands.append(words[index])
                index += 1
            continue
        if word.startswith("--pid="):
            operands.append(word.partition("=")[2])
            continue
        if word in ("-g", "--pgrp", "-P"):
            mode = "g"
            continue
        if word in ("-u", "--user", "-U"):
            users = True
            continue
        if word in ("-n", "--priority", "-c", "--class", "-N", "--adjustment"):
            index += 1
            continue
        if word.startswith("-") and not _NUMBER.fullmatch(word):
            continue
        if name == "prlimit":
            continue  # the command it runs
        (groups if mode == "g" else operands).append(word)
    if name == "renice" and operands and mode == "p":
        operands = operands[1:] if len(arguments) and arguments[0] == operands[0] else operands
    return operands, groups, users, False


__all__ = ["HARNESS_PROCESSES", "ProcessGuard"]
