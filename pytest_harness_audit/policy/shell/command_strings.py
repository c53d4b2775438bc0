"""Programs that take a shell command as an option's value or in their own command language.

``tar --checkpoint-action=exec='cp .env /tmp/x'``, ``sqlite3 db '.system cp .env /tmp/x'``,
``vim -c '!cp .env /tmp/x'``: the command is one quoted word of an ordinary-looking program, so
it is read here as the script it is:

* **An option's value is a command:** ``tar``/``gtar``/``bsdtar``
  (``--checkpoint-action=exec=``, ``-I``/``--use-compress-program``, ``--to-command``,
  ``-F``/``--info-script``, ``--new-volume-script``, ``--rsh-command``, ``--rmt-command``; in
  old-style letters too), ``zip -TT``/``--unzip-command``, ``man -P``/``--pager``, ``script -c``,
  ``rsync -e``/``--rsh``, ``scp``/``sftp -S``, ``mosh --ssh``, ``sort --compress-program``,
  ``install --strip-program``, ``pandoc --filter``/``--lua-filter``, ``entr -s``, ``nodemon
  -x``/``--exec``, ``hyperfine`` (its operands and
  ``--prepare``/``--setup``/``--cleanup``/``--conclude``), ``lldb -o``, ``gdb -ex``, bash's
  ``mapfile``/``readarray -C``, ``compgen``/``complete -C`` (and ``-W``, a word list bash
  expands: its substitutions run).
* **The rest of the words are a command:** ``screen -dm CMD …``, ``entr CMD …``; ``fd``'s
  ``-x``/``-X`` command, run on the files it lists (:mod:`.exec_each`).
* **A session command:** ``tmux new|new-window|split-window|run-shell|respawn-pane … CMD``.
* **Scheduled:** ``at``/``batch`` (their standard input or ``-f FILE``) and ``crontab FILE``/
  ``crontab -`` (each entry's command).
* **A command language with a shell escape or file access:** ``sqlite3`` (``.shell``,
  ``.system``, ``.read FILE``, ``.import FILE``, ``readfile('FILE')``, ``-cmd``, ``-init``),
  ``mysql``/``mariadb`` (``system``, ``\\!``, ``source``, ``LOAD DATA LOCAL INFILE``,
  ``--init-command``, ``--pager``), ``psql`` (``\\!``, ``\\o |cmd``, ``\\copy … from 'FILE'``,
  ``FROM``/``TO PROGRAM 'cmd'``, ``-f FILE``), their SQL's files (:mod:`.sql_files`) and
  meta-commands (:mod:`.sql_meta`), ``mongosh``/``mongo`` (``--eval``, script files, and the
  shell's own functions, :mod:`.mongo_shell`), the
  editors ``vim``/``nvim``/``ex``/``ed`` (``!cmd``, ``r !cmd``, ``w !cmd``, ``system('cmd')``,
  ``r FILE``), ``emacs --eval`` (read as inline code). A language's own extension loading
  (``.load``, ``load_extension``) is unreadable.
* **An ssh client's local commands** (:mod:`.ssh_commands`): ``ssh -o ProxyCommand=CMD``,
  ``LocalCommand``, ``KnownHostsCommand``, those of a ``-F FILE`` configuration.
* **An interpreter's own file access and shell-outs:** sed's ``r``/``w`` commands
  (:mod:`.sed_files`), awk's ``getline < FILE`` and ``print > FILE`` and its program files
  (:mod:`.awk_files`), Perl/Ruby/PHP quote-like shell-outs (:mod:`.interpreter_code`).
"""

from __future__ import annotations

import re
import shlex
from typing import Final

from pytest_harness_audit.policy.shell.awk_files import awk_arguments, awk_files
from pytest_harness_audit.policy.shell.context import Context as Runner
from pytest_harness_audit.policy.shell.embedded import AWKS, NETWORK_NOTE, awk_program
from pytest_harness_audit.policy.shell.exec_each import FINDERS, fd
from pytest_harness_audit.policy.shell.interpreter_code import interpreter_code
from pytest_harness_audit.policy.shell.launchers import deferred
from pytest_harness_audit.policy.shell.mongo_shell import MONGO_SHELLS, mongo_shell
from pytest_harness_audit.policy.shell.psql_text import psql_text
from pytest_harness_audit.policy.shell.sed_files import sed_files
from pytest_harness_audit.policy.shell.sql_files import SQL_SHELLS, sql_effects
from pytest_harness_audit.policy.shell.sql_meta import client_pipes, sql_pipes
from pytest_harness_audit.policy.shell.sql_output import SQL_CLIENTS
from pytest_harness_audit.policy.shell.ssh_commands import (
    SSH_COMMAND_CLIENTS,
    rsync_remote,
    ssh_commands,
)
from pytest_harness_audit.policy.shell.tar_words import TARS, tar_words

#: ``program: {option: kind}``; kinds: ``script`` (the value is a shell command), ``code``
#: (inline program text), ``file`` (a file of the program's own command language).
_OPTIONS: Final[dict[str, dict[str, str]]] = {
    "zip": {"-TT": "script", "--unzip-command": "script"},
    "man": {"-P": "script", "--pager": "script", "-H": "script", "--html": "script"},
    "script": {"-c": "script", "--command": "script"},
    "rsync": {"-e": "transport", "--rsh": "transport"},
    "scp": {"-S": "transport"},
    "sftp": {"-S": "transport"},
    "sort": {"--compress-program": "script"},
    "install": {"--strip-program": "script"},
    "mosh": {"--ssh": "transport"},
    "pandoc": {"--filter": "script", "-F": "script", "--lua-filter": "code-file",
               "-L": "code-file"},
    "entr": {"-s": "script"},
    "nodemon": {"-x": "script", "--exec": "script"},
    "hyperfine": {"-p": "script", "--prepare": "script", "-s": "script", "--setup": "script",
                  "-c": "script", "--cleanup": "script", "--conclude": "script"},
    "lldb": {"-o": "language", "--one-line": "language", "-O": "language",
             "--one-line-before-file": "language", "-s": "file", "--source": "file"},
    "gdb": {"-ex": "language", "--eval-command": "language", "-x": "file", "--command": "file",
            "-iex": "language", "--init-eval-command": "language"},
    "sqlite3": {"-cmd": "language", "-init": "file"},
    "duckdb": {"-c": "language", "-s": "language", "-cmd": "language", "-init": "file",
               "-f": "file"},
    "mysql": {"-e": "language", "--execute": "language", "--init-command": "language",
              "--pager": "script"},
    "mariadb": {"-e": "language", "--execute": "language", "--init-command": "language",
                "--pager": "script"},
    "psql": {"-c": "language", "--command": "language", "-f": "file", "--file": "file"},
    "usql": {"-c": "language", "--command": "language", "-f": "file", "--file": "file"},
    "mycli": {"-e": "language", "--execute": "language"},
    "litecli": {"-e": "language", "--execute": "language"},
    "vim": {"-c": "language", "--cmd": "language", "-S": "file"},
    "mongosh": {"--eval": "code", "-f": "code-file", "--file": "code-file"},
    "emacs": {"--eval": "code", "-eval": "code", "-l": "code-file", "--load": "code-file"},
    # bash's own: a callback (`mapfile -C`), a completion command, a word list it expands
    "mapfile": {"-C": "script"},
    "readarray": {"-C": "script"},
    "compgen": {"-C": "script", "-W": "words"},
    "complete": {"-C": "script", "-W": "words"},
}  # fmt: skip
for _editor in ("vi", "nvim", "ex", "view", "gvim", "vimdiff", "rvim"):
    _OPTIONS[_editor] = _OPTIONS["vim"]
_OPTIONS["gdb-multiarch"] = _OPTIONS["gdb"]
_OPTIONS["mongo"] = _OPTIONS["mongosh"]
#: Programs whose operands (after their options) are shell commands, or a command's argv.
_OPERAND_SCRIPTS: Final = frozenset({"hyperfine"})
_OPERAND_COMMAND: Final = frozenset({"screen", "entr"})
_LANGUAGE_OPERANDS: Final = frozenset(
    {"sqlite3", "duckdb", "psql"}
)  # operands after the database are commands
_EDITORS: Final = frozenset({"vim", "nvim", "vi", "ex", "view", "gvim", "rvim", "vimdiff"})
_STDIN_LANGUAGE: Final = (
    frozenset({"sqlite3", "duckdb", "mysql", "mariadb", "psql", "ed", "gdb", "lldb"}) | _EDITORS
)
_TMUX_COMMANDS: Final = frozenset(
    {"new", "new-session", "new-window", "neww", "split-window", "splitw", "run-shell", "run",
     "respawn-pane", "respawnp", "respawn-window", "respawnw", "display-popup", "popup"}
)  # fmt: skip
_TMUX_VALUED: Final = frozenset({"-s", "-n", "-t", "-c", "-x", "-y", "-e", "-F", "-l", "-w", "-h"})
#: Programs read here.
_SEDS: Final = frozenset({"sed", "gsed"})
_INTERPRETERS: Final = frozenset({"perl", "ruby", "php"})
COMMAND_STRING_PROGRAMS: Final = (
    frozenset(_OPTIONS)
    | _OPERAND_COMMAND
    | {"tmux", "at", "batch", "crontab", "ed"}
    | _SEDS
    | AWKS
    | _INTERPRETERS
    | FINDERS
    | SSH_COMMAND_CLIENTS
    | TARS
)
_SSH_CLIENTS: Final = frozenset({"ssh", "rsh", "autossh", "dbclient"})
#: ``tar`` options whose value is a command it runs.
_TAR_COMMANDS: Final = frozenset(
    {"-I", "--use-compress-program", "--to-command", "-F", "--info-script", "--new-volume-script",
     "--rsh-command", "--rmt-command"}
)  # fmt: skip
#: Shell escapes and file access in the programs' own command languages.
_BANG: Final = re.compile(
    r"(?m)(?:^|[|;:])\s*(?:silent!?\s+)?(?:\d*,?\d*\s*)?(?:r(?:ead)?|w(?:rite)?)?\s*!(.+)$"
)
#: vim's: ``w! FILE`` is a forced write of FILE, ``w !CMD`` (a blank first) a write into CMD.
_VIM_BANG: Final = re.compile(
    r"(?m)(?:^|[|;:])\s*(?:silent!?\s+)?(?:\d*,?\d*\s*)?(?:r(?:ead)?\s*|w(?:rite)?\s+)?!(.+)$"
)
_DOT_SHELL: Final = re.compile(
    r"(?im)(?:^|;)\s*(?:\.(?:shell|system)|system|\\!|shell|platform\s+shell)\s+(.+?)\s*$"
)
_PROGRAM: Final = re.compile(
    r"""(?i)(?:(?:from|to)\s+program|\\o\s*\||system\s*\()\s*['"]?([^'"\n]+)"""
)
_FILE_READ: Final = re.compile(
    r"""(?im)(?:^\s*\.(?:read|import(?:\s+--\w+)*)\s+|readfile\(\s*'|load\s+data\s+local\s+"""
    r"""infile\s+['"]|^\s*(?:source|\\\.|\\i|\\ir)\s+|\\copy\s.*?\bfrom\s+'|^\s*r\s+)([^\s'"]+)"""
)
#: An editor's write of its buffer to a file (``w FILE``, ``1,$w! FILE``, ``wq FILE``, ``saveas
#: FILE``, ``w >> FILE``, ed's ``W FILE``) and vim's ``writefile(…, 'FILE')``.
_EDITOR_WRITE: Final = re.compile(
    r"(?m)(?:^|\|)[ \t:]*[0-9.,$%;'+-]*[ \t]*"
    r"(?:w|write|wq|x|xit|exit|sav|saveas|up|update|W|wqa|wa|xa)!?"
    r"[ \t]+(?:>>[ \t]*)?([^\s!|][^\s|]*)"
)
#: ed's (``w! CMD`` there writes into a command: read by :data:`_BANG`).
_ED_WRITE: Final = re.compile(r"(?m)^[ \t]*[0-9.,$;'+-]*[ \t]*(?:w|wq|W)[ \t]+([^\s!][^\s]*)")
_WRITEFILE: Final = re.compile(r"""writefile[ \t]*\([^)]{0,2048}?,[ \t]*['"]([^'"\n]+)['"]""")
_EXTENSION: Final = re.compile(r"(?i)^\s*\.load\s|load_extension\s*\(")
#: DuckDB's extensions, installed or loaded (``install httpfs; load httpfs``).
_SQL_EXTENSION: Final = re.compile(
    r"(?im)(?:^|;)\s*(?:force\s+)?(?:install|load)\s+(?!data\b|xml\b|index\b)[\w']"
)


def command_strings(name: str, args: list[str], runner: Runner) -> None:
    """Read the commands program ``name`` runs from its ``args`` (module doc)."""
    if name == "tmux":
        _tmux(args, runner)
        return
    if name in ("at", "batch"):
        if _at(args, runner):
            runner.unknown(deferred(name))
        return
    if name == "crontab":
        _crontab(args, runner)
        return
    if name in _SEDS:
        sed_files(args, runner)
        return
    if name in AWKS:
        _awk(args, runner)
        return
    if name in _INTERPRETERS:
        interpreter_code(name, args, runner)
        return
    if name in FINDERS:
        fd(name, args, runner)
        return
    if name in TARS:
        _tar(name, args, runner)
        return
    if name in SSH_COMMAND_CLIENTS:
        ssh_commands(name, args, runner)  # `ssh -o ProxyCommand=CMD`, `ssh -F FILE`
        if name not in _OPTIONS:
            return
    if name == "rsync":
        rsync_remote(args, runner)  # `--rsync-path=CMD`: run by the remote shell
    options = _OPTIONS.get(name, {})
    operands: list[str] = []
    index = 0
    while index < len(args):
        word = args[index]
        option, equals, value = word.partition("=")
        kind = options.get(option) or options.get(word)
        if kind is None and word[:1] == "-" and word[1:2] != "-" and len(word) > 2 and not equals:
            kind = options.get(f"-{word[-1]}")  # bundled: `script -qc CMD`
        if name in _EDITORS and word[:1] == "+":
            _language(word[1:], runner, dialect="vim")
        elif kind is not None:
            if not equals:
                value = args[index + 1] if index + 1 < len(args) else ""
                index += 1
            _option_value(kind, value, runner, _dialect(name))
        elif name in _OPERAND_COMMAND and not word.startswith("-"):
            runner.script(shlex.join(args[index:]))
            return
        elif not word.startswith("-") or word == "-":
            operands.append(word)
        index += 1
    if name in MONGO_SHELLS:  # its operands: a database, and JavaScript files it runs
        for operand in operands:
            if operand.endswith((".js", ".mjs", ".cjs")):
                runner.script_file(operand, code=True)
        mongo_shell(args, runner)
    client_pipes(name, args, runner)
    if name == "psql":  # its variables, backquotes and `\gexec` (:mod:`.psql_text`)
        psql_text(args, runner, lambda text: _language(text, runner, depth=1, dialect="sql"))
    if name in _OPERAND_SCRIPTS:
        for operand in operands:
            runner.script(operand)
    elif name in SQL_SHELLS and operands[1:]:
        # one SQL text, a line an operand: a dot-command's state (`.output '|sh'`) holds on
        _language("\n".join(operands[1:]), runner, dialect="sql")
    elif name in _LANGUAGE_OPERANDS:
        for operand in operands[1:]:
            _language(operand, runner)
    if name in _STDIN_LANGUAGE and runner.stdin_text is not None and "-" not in operands:
        # `ed -s F < cmds`, `vim -es < cmds.vim`: commands (`vim -` edits its input instead)
        _language(runner.stdin_text, runner, dialect=_dialect(name))


def _dialect(name: str) -> str:
    """The command language of program ``name``: ``sql``, ``vim``, ``ed`` or another."""
    if name in SQL_CLIENTS:
        return "sql"
    return "vim" if name in _EDITORS else name


def _option_value(kind: str, value: str, runner: Runner, dialect: str = "") -> None:
    if kind == "script":
        runner.script(value)
    elif kind == "transport":
        _transport(value, runner)
    elif kind == "words":  # `compgen -W '$(cmd)'`: expanded as a command's words are
        runner.script(": " + value)
    elif kind == "language":
        _language(value, runner, dialect=dialect)
    elif kind == "code":
        runner.read_text(value, code=True)
    elif kind == "code-file":
        runner.script_file(value, code=True)
    elif kind == "file":
        text = runner.workspace_text(value)
        if text is not None:
            _language(text, runner, depth=1, dialect=dialect)


def _transport(value: str, runner: Runner) -> None:
    """``rsync -e CMD``, ``scp -S PROG``: the command that carries the transfer, run as given.
    An ssh client there is only the carrier of the remote operands the transfer names (their
    network is the transfer's own): it is read, not noted as a network exchange."""
    notes = runner.reading.notes
    noted = NETWORK_NOTE in notes
    runner.script(value)
    first = value.split()[0].rsplit("/", 1)[-1] if value.split() else ""
    if not noted and first in _SSH_CLIENTS and NETWORK_NOTE in notes:
        notes.remove(NETWORK_NOTE)


def _language(text: str, runner: Runner, depth: int = 0, dialect: str = "") -> None:
    """Commands of a program's own language (``dialect``): its shell escapes are scripts, the
    files it reads are read (those it runs as commands, in turn, once), the files an editor
    writes are written; SQL's files and commands (:mod:`.sql_files`) too."""
    sql = dialect == "sql"
    if _EXTENSION.search(text) or (sql and _SQL_EXTENSION.search(text)):
        runner.unknown("it loads a compiled extension")
    if sql:
        sql_effects(text, runner)
        sql_pipes(text, runner)
    elif dialect == "vim":  # `vim -c 'w .git/hooks/pre-commit'`, `call writefile(…, F)`
        runner.reading.writes.extend(_EDITOR_WRITE.findall(text) + _WRITEFILE.findall(text))
    elif dialect == "ed":  # `printf 'w F\\nq\\n' | ed -s x`
        runner.reading.writes.extend(_ED_WRITE.findall(text))
    for pattern in (_VIM_BANG if dialect == "vim" else _BANG, _DOT_SHELL, _PROGRAM):
        for command in pattern.findall(text):
            runner.script(command.strip().rstrip("'\";"))
    for path in _FILE_READ.findall(text):
        if path.startswith("!"):
            continue
        runner.reading.reads.append(path)
        if depth == 0:
            inner = runner.workspace_text(path)
            if inner is not None:
                _language(inner, runner, depth=1, dialect=dialect)


def _awk(args: list[str], runner: Runner) -> None:
    """An awk command's program files are read as programs; every program's ``getline < FILE``
    reads and ``print > FILE`` writes are recorded (its inline programs' commands are read by
    :func:`.embedded.awk`)."""
    parts = awk_arguments(args)
    texts = list(parts.programs)
    for path in parts.program_files:
        stdin = path in ("-", "/dev/stdin")
        text = runner.stdin_text if stdin else runner.workspace_text(path)
        if text is not None:
            awk_program(text, runner, parts.assignments, parts.operands)
            texts.append(text)
    for text in texts:
        reads, writes, unknown = awk_files(text, parts.assignments)
        runner.reading.reads.extend(reads)
        runner.reading.writes.extend(writes)
        if unknown:
            runner.unknown("awk reads or writes a file named at run time")


def _tmux(args: list[str], runner: Runner) -> None:
    index = 0
    while index < len(args) and args[index].startswith("-"):
        index += 2 if args[index] in ("-L", "-S", "-f", "-T") else 1
    if index >= len(args) or args[index] not in _TMUX_COMMANDS:
        if index < len(args) and args[index] in ("send-keys", "send"):
            typed = [w for w in args[index + 1 :] if not w.startswith("-")]
            runner.script(" ".join(w for w in typed if w not in ("Enter", "C-m")))
        return
    index += 1
    while index < len(args) and args[index].startswith("-"):
        index += 2 if args[index] in _TMUX_VALUED else 1
    if index < len(args):
        runner.script(" ".join(args[index:]) if len(args) - index > 1 else args[index])


def _at(args: list[str], runner: Runner) -> bool:
    """Read the job ``at`` is handed; whether it is handed one (``-l``, ``-r``, ``-d``, ``-c``
    list, remove and show jobs)."""
    if any(word in ("-l", "-r", "-d", "-c") for word in args):
        return False
    for index, word in enumerate(args[:-1]):
        if word == "-f":
            runner.script_file(args[index + 1], code=False)
            return True
    runner.stdin_script("at")
    return True


def _crontab(args: list[str], runner: Runner) -> None:
    operands = [word for word in args if not word.startswith("-") or word == "-"]
    if any(word in ("-l", "-r", "-e") for word in args) and not operands:
        return
    runner.unknown(deferred("crontab"))
    if not operands or operands[0] == "-":
        text = runner.stdin_text
        if text is None:
            runner.stdin_script("crontab")
            return
    else:
        text = runner.workspace_text(operands[0])
        if text is None:
            return
    for line in text.splitlines()[:256]:
        stripped = line.strip()
        if not stripped or stripped.startswith("#") or re.match(r"^[A-Za-z_]\w*\s*=", stripped):
            continue
        fields = stripped.split(None, 1 if stripped.startswith("@") else 5)
        if len(fields) > (1 if stripped.startswith("@") else 5):
            runner.script(fields[-1])


def _tar(name: str, args: list[str], runner: Runner) -> None:
    """The commands ``tar`` runs from its options' values, its letters read as tar reads them
    (``tar xfI x.tar CMD``, ``-ICMD``): ``-I``/``--use-compress-program``, ``--to-command``,
    ``-F``/``--info-script``/``--new-volume-script``, ``--rsh-command``, ``--rmt-command`` and
    ``--checkpoint-action=exec=CMD`` (``bsdtar``: ``--use-compress-program``; its ``-I`` is a
    file of names)."""
    words = tar_words(name, args)
    for option, value in words.values:
        if option == "--checkpoint-action" and value.startswith("exec="):
            runner.script(value[5:])
        elif option in _TAR_COMMANDS and (option != "-I" or name != "bsdtar") and value:
            runner.script(value)


__all__ = ["COMMAND_STRING_PROGRAMS", "command_strings"]
