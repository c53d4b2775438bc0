"""Commands that run other commands the shell does not see as commands, and network access.

* **awk** (``awk``, ``gawk``, ``mawk``, ``nawk``, ``busybox awk``): ``system(CMD)``,
  ``CMD | getline`` and ``print … | CMD`` run ``CMD`` with ``sh``; ``CMD`` (a string, or a
  variable given one) is read as a script, and what a ``print`` pipes into it is its standard
  input (:mod:`.awk_pipes`): ``print "rm -rf app" | "sh"`` is read as ``printf … | sh``, ``{print
  | "sh"}`` over files as ``cat FILES | sh``. A command built at run time (``system("rm -rf "
  dir)``) is read from its literal parts, and the reading says a shell runs a script not in the
  text; a text piped in that is made at run time is a text not known.
* **sed** (GNU): ``e COMMAND`` runs ``COMMAND`` (read as a script); ``e`` alone and
  ``s/…/…/e`` run a line of the input (the reading says a script not in the text runs).
* **make** with the makefile on its standard input (``make -f -``): its recipe lines.
* **git configuration that runs commands**: ``git -c alias.x='!cmd' x`` and ``git config
  alias.x '!cmd'`` (a shell alias: ``cmd`` is read as a script; an alias without ``!`` is
  read as git's own arguments), and the keys whose value git runs (``core.pager``,
  ``core.editor``, ``core.sshCommand``, ``core.fsmonitor``, ``sequence.editor``,
  ``diff.external``, ``gpg.program``, ``gpg.ssh.defaultKeyCommand``, ``credential.helper``,
  ``filter.*.clean|smudge|process``, ``pager.*``, ``remote.*.uploadpack`` …).
  ``core.hooksPath=DIR``: git runs the hook files of ``DIR``, each read as a program run by its
  path; ``init.templateDir=DIR``: ``git init``/``clone`` copy ``DIR/hooks/*`` into the new
  repository, whose later commands run them (read the same way, when the key is set);
  ``protocol.*.allow`` and ``remote.*.vcs`` let git run a helper program the text does not
  show (the reading says so).
* **network access** (the note ``network``): ``curl``, ``wget``, ``nc`` and kin (see
  :data:`NETWORK_COMMANDS`: the forges' and hosts' clients ``gh``, ``kubectl``, ``vercel`` …
  too), a package's publishing or an image's push (:data:`UPLOADS`: ``npm publish``,
  ``twine upload``, ``docker push``), ``ssh``/``scp``/``sftp``, ``rsync`` or ``git`` to a remote, a
  redirection to ``/dev/tcp/…`` or ``/dev/udp/…``, and inline code using a network library.
"""

from __future__ import annotations

import re
import shlex
from typing import Final, Protocol

import re2

from pytest_harness_audit.policy.shell.awk_files import awk_arguments
from pytest_harness_audit.policy.shell.awk_pipes import RECORDS, UNKNOWN, AwkRun, awk_runs
from pytest_harness_audit.policy.shell.makefiles import make_folder

#: ``getent`` databases answered by DNS (``passwd``, ``group`` … are local).
GETENT_NETWORK: Final = frozenset({"hosts", "ahosts", "ahostsv4", "ahostsv6"})
#: Commands whose whole purpose is a network exchange.
NETWORK_COMMANDS: Final = frozenset(
    {"curl", "wget", "wget2", "aria2c", "axel", "http", "https", "xh", "httpie", "lynx", "w3m",
     "links", "elinks", "nc", "ncat", "netcat", "socat", "telnet", "ssh", "scp", "sftp", "ftp",
     "tftp", "lftp", "sshpass", "mosh", "dig", "nslookup", "host", "drill", "whois", "smbclient",
     "ping", "ping6", "traceroute", "traceroute6", "tracepath", "mtr", "arping",
     "resolvectl", "kdig", "delv", "sendmail", "mail", "mailx", "mutt", "msmtp", "swaks", "ssmtp",
     "aws", "gsutil", "gcloud", "az", "s3cmd", "rclone", "azcopy", "b2", "doctl", "rsh", "rcp",
     "curlie", "grpcurl", "websocat", "wscat", "openvpn", "wg", "nmap", "hping3", "iperf3",
     "ngrok", "cloudflared", "bore", "lt", "frpc", "s-nail", "neomutt", "exim", "s5cmd", "adig",
     "unbound-host", "systemd-resolve", "gh", "glab", "hub", "tea", "croc", "wormhole",
     "ffsend", "kubectl", "vercel", "netlify", "wrangler", "flyctl", "firebase", "surge"}
)  # fmt: skip
#: Programs whose subcommand (the first word not an option) uploads files to a registry or
#: host: a package's publishing (its files, whatever they hold), an image's push.
UPLOADS: Final = {
    "npm": frozenset({"publish"}), "pnpm": frozenset({"publish"}),
    "yarn": frozenset({"publish", "npm"}), "bun": frozenset({"publish"}),
    "cargo": frozenset({"publish"}), "gem": frozenset({"push"}), "poetry": frozenset({"publish"}),
    "uv": frozenset({"publish"}), "twine": frozenset({"upload", "register"}),
    "flit": frozenset({"publish"}), "hatch": frozenset({"publish"}), "pdm": frozenset({"publish"}),
    "docker": frozenset({"push"}), "podman": frozenset({"push"}), "buildah": frozenset({"push"}),
    "helm": frozenset({"push"}), "oras": frozenset({"push"}), "conda": frozenset({"upload"}),
    "anaconda": frozenset({"upload"}), "mvn": frozenset({"deploy"}),
    "gradle": frozenset({"publish"}), "dotnet": frozenset({"nuget"}),
}  # fmt: skip
AWKS: Final = frozenset({"awk", "gawk", "mawk", "nawk"})
#: ``git`` subcommands that talk to a remote (unless the remote named is a local path).
GIT_NETWORK: Final = frozenset({"push", "pull", "fetch", "clone", "ls-remote"})
#: ``git`` subcommands that always talk to another host (mail, a foreign repository).
GIT_ALWAYS_NETWORK: Final = frozenset({"send-email", "imap-send", "svn", "p4", "cvsimport"})
NETWORK_NOTE: Final = "network"
#: Options that make a network command print its version or help, and do nothing else.
_ONLY_ASKS: Final = frozenset({"--version", "-V", "--help", "-h"})

_AWK_ASSIGNMENT: Final = re.compile(r"[A-Za-z_]\w*=")
#: A command whose output the reading cannot know: what a ``print`` pipes in, made at run time.
_MADE_AT_RUN_TIME: Final = "date"
_MAX_AWK_COMMANDS: Final = 32
#: git configuration keys whose value git runs as a command.
_RUN_KEYS: Final = re.compile(
    r"(?i)(?:core\.(?:pager|editor|sshcommand|fsmonitor|askpass|gitproxy|alternaterefscommand)"
    r"|sequence\.editor|interactive\.difffilter"
    r"|diff\.external|gpg\.(?:[a-z]+\.)?program|gpg\.ssh\.defaultkeycommand|imap\.tunnel"
    r"|guitool\.[^=]+\.cmd|lfs\.customtransfer\.[^=]+\.path|lfs\.extension\.[^=]+\.(?:clean|smudge)"
    r"|credential\.(?:[^=]*\.)?helper"
    r"|filter\.[^=]+\.(?:clean|smudge|process)|pager\.[^=]+|diff\.[^=]+\.(?:textconv|command)"
    r"|merge\.[^=]+\.driver|uploadpack\.packobjectshook"
    r"|remote\.[^=]+\.(?:uploadpack|receivepack)|(?:difftool|mergetool|man|browser)\.[^=]+\.(?:cmd|path)"
    r"|hook\.[^=]+\.command|trailer\.[^=]+\.(?:command|cmd)"
    r"|sendemail\.(?:[^=]+\.)?(?:smtpserver|tocmd|cccmd|headercmd))"
)
#: The keys that make git run hook files from a folder, or fetch with a helper program.
_HOOK_FOLDER: Final = re.compile(r"(?i)core\.hookspath")
_TEMPLATE_FOLDER: Final = re.compile(r"(?i)init\.templatedir")
_HELPER_KEYS: Final = re.compile(r"(?i)protocol\.(?:[^=]+\.)?allow|remote\.[^=]+\.vcs")
#: The hooks git runs, by file name (githooks(5)).
GIT_HOOK_NAMES: Final = (
    "applypatch-msg", "pre-applypatch", "post-applypatch", "pre-commit", "pre-merge-commit",
    "prepare-commit-msg", "commit-msg", "post-commit", "pre-rebase", "post-checkout",
    "post-merge", "pre-push", "pre-receive", "update", "proc-receive", "post-receive",
    "post-update", "reference-transaction", "push-to-checkout", "pre-auto-gc", "post-rewrite",
    "sendemail-validate", "fsmonitor-watchman", "post-index-change", "p4-changelist",
    "p4-prepare-changelist", "p4-post-changelist", "p4-pre-submit",
)  # fmt: skip
#: Subcommands that only look at a repository, and the hook they may still run (a refreshed
#: index is written).
_LOOKING: Final = frozenset(
    {"status", "diff", "log", "show", "blame", "grep", "ls-files", "ls-tree", "rev-parse",
     "rev-list", "cat-file", "describe", "shortlog", "help", "version", "check-ignore",
     "for-each-ref", "show-ref", "whatchanged", "name-rev", "var"}
)  # fmt: skip
_LOOKING_HOOKS: Final = ("post-index-change",)
_NETWORK_CODE: Final = re2.compile(  # RE2: linear in the code, which may be a whole file
    r"urllib\.request|urlopen|http\.client|\bhttpx\.|\brequests\.(?:get|post|put|request|Session)|\baiohttp\b|\bsocket\b|smtplib|ftplib"
    r"|telnetlib|\bfetch\s*\(|\bhttps?\.(?:get|request)\b|\bnet\.(?:connect|createConnection)"
    r"|XMLHttpRequest|\baxios\b|\bLWP\b|IO::Socket|HTTP::Tiny|Net::HTTP|open-uri|curl_init"
    r"|fsockopen|\bDeno\.connect|\burllib3\b|\bpycurl\b|\bdns\.resolver\b|getaddrinfo"
    r"|gethostbyname|websockets?\.connect|new WebSocket\(|\bparamiko\."
    r"|boto3\.(?:client|resource|Session)"
    r"|\bgrpc\.|\bimaplib\b|\bpoplib\b|xmlrpc\.client|asyncio\.open_connection|urlretrieve"
    r"|require\(\s*['\"](?:dgram|dns|tls|net|https?)['\"]\s*\)"
    r"|(?i:(?:file_get_contents|fopen|readfile|file|copy)\s*\(\s*['\"](?:https?|ftps?)://)"
    r"|\bmail\s*\(|stream_socket_client|Net::SMTP|Net::FTP|Socket\.tcp|TCPSocket"
)
_NETWORK_MODULES: Final = frozenset(
    {"http.server", "http.client", "urllib.request", "smtplib", "ftplib", "telnetlib"}
)
_REMOTE_OPERAND: Final = re.compile(r"^(?:[a-z][a-z0-9+.-]*://|[^/\s:=]+:)", re.IGNORECASE)


class Runner(Protocol):
    """What the readers here need: read a script, note an unknown one, record notes."""

    def script(self, text: str) -> None:
        """Read ``text`` as a script run by a shell."""
        ...

    def unknown(self, why: str) -> None:
        """A shell runs a script whose text is not in the command."""
        ...

    def note(self, note: str) -> None:
        """Record a note (``network``)."""
        ...

    def program_file(self, path: str) -> None:
        """The file ``path`` is run as a program: read its text by its ``#!`` line."""
        ...


def awk_program(
    program: str,
    runner: Runner,
    assignments: dict[str, str] | None = None,
    operands: list[str] | None = None,
) -> None:
    """Read the commands an awk program runs (see the module doc), with what a ``print``
    pipes into them (:mod:`.awk_pipes`); ``operands``: its input files."""
    for run in awk_runs(program, assignments or {}):
        if run.command is None:
            if run.literals:  # `system("rm -rf " dir)`: read from its literal parts
                runner.script(run.literals)
            runner.unknown("awk runs a command built at run time")
        elif run.given is None:
            runner.script(run.command)  # `system(cmd)` of a known `cmd`, `cmd | getline`
        else:
            runner.script(f"{_given(run, operands or [])} | {run.command}")


def _given(run: AwkRun, operands: list[str]) -> str:
    """A command printing what a ``print`` pipes into its command (:mod:`.awk_pipes`)."""
    if run.given == RECORDS:
        files = [word for word in operands if not _AWK_ASSIGNMENT.match(word)]
        return "cat " + " ".join(shlex.quote(word) for word in files) if files else "cat"
    if run.given == UNKNOWN:
        return _MADE_AT_RUN_TIME
    text = run.given or ""
    return f"printf %s {shlex.quote(text if run.printf else text + chr(10))}"


def awk(args: list[str], runner: Runner) -> list[str]:
    """Read an awk command's program; return the operands that are files it reads (its
    program files too: :func:`.awk_files.awk_arguments`)."""
    parts = awk_arguments(args)
    for text in parts.programs:
        awk_program(text, runner, parts.assignments, parts.operands)
    return parts.program_files + parts.operands


_SED_ADDRESS: Final = r"(?:\d+(?:~\d+)?|\$|/(?:[^/\\\n]|\\.)*/I?M?)"
_SED_EXECUTE: Final = re.compile(
    r"(?m)(?:^|[;{}])\s*(?:" + _SED_ADDRESS + r"(?:\s*,\s*" + _SED_ADDRESS + r")?)?\s*!?\s*"
    r"e(?:[ \t]+([^\n;}]*)|\s*(?=$|[;}]))"
)
_SED_SUBSTITUTE_E: Final = re.compile(
    r"(?:^|[;{}\s])s(.)((?:(?!\1)[^\\\n]|\\.)*)\1((?:(?!\1)[^\\\n]|\\.)*)\1[gpiImM0-9w]*e"
)
_SED_SUBSTITUTE: Final = re.compile(
    r"(?:^|[;{}\s])s(.)((?:(?!\1)[^\\\n]|\\.)*)\1((?:(?!\1)[^\\\n]|\\.)*)\1[gpiImM0-9]*"
)
#: Expressions that match a whole line: ``s/.*/CMD/e`` runs ``CMD`` whatever the line.
_WHOLE_LINE: Final = frozenset({".*", "^.*", ".*$", "^.*$", "^\\(.*\\)$", "^(.*)$"})
_SED_BACKREFERENCE: Final = re.compile(r"(?<!\\)(?:\\\\)*(?:&|\\[0-9])")


def sed_script(script: str, runner: Runner) -> None:
    """GNU sed's ``e COMMAND`` runs ``COMMAND`` (read as a script); a bare ``e`` and the ``e``
    flag of ``s///e`` run the pattern space, a command not in the text, unless the
    substitution makes the whole of it (``s/.*/rm -rf app/e``: read as ``rm -rf app``); one that
    puts text before the line (``s/^/rm -rf /e``) is read from that text, as awk's
    ``system("rm -rf " dir)`` is."""
    for match in _SED_EXECUTE.finditer(script):
        command = (match.group(1) or "").strip()
        whole = bool(command)
        if not command:  # a bare `e`: the pattern space the command before it made
            command, whole = _pattern_space(script, match.start())
        if command:
            runner.script(command)
        if not whole:
            runner.unknown("sed runs a line of its input as a command")
    for match in _SED_SUBSTITUTE_E.finditer(script):
        pattern, replacement = match.group(2), match.group(3)
        literal = not _SED_BACKREFERENCE.search(replacement)
        if literal and (pattern == "^" or pattern in _WHOLE_LINE):
            runner.script(_sed_text(replacement))
        if not literal or pattern not in _WHOLE_LINE:
            runner.unknown("sed runs a line of its input as a command")


def _pattern_space(script: str, at: int) -> tuple[str, bool]:
    """The text a bare ``e`` at ``at`` runs when the command just before it is a substitution
    of literal text (``s/.*/rm -rf app/`` then ``e``, in one script or in two ``-e`` parts),
    and whether that text is the whole command (``s/^/rm -rf /``: its start); ``""``: not
    known."""
    before = script[:at].rstrip(" \t\n;")
    last = None
    for match in _SED_SUBSTITUTE.finditer(before):
        last = match
    if last is None or last.end() != len(before) or _SED_BACKREFERENCE.search(last.group(3)):
        return "", False
    if last.group(2) in _WHOLE_LINE:
        return _sed_text(last.group(3)), True
    return (_sed_text(last.group(3)), False) if last.group(2) == "^" else ("", False)


def _sed_text(replacement: str) -> str:
    """A replacement's text, its escapes undone (``\\n``: a new line)."""
    escapes = {"n": "\n", "t": "\t"}
    return re.sub(r"\\(.)", lambda m: escapes.get(m.group(1), m.group(1)), replacement)


def make_stdin(args: list[str], stdin: str | None, runner: Runner) -> None:
    """``make -f -``: the makefile is the standard input; its recipe lines (those starting
    with a tab) are read as scripts."""
    stdin_file = any(
        (word in ("-f", "--file", "--makefile") and args[i + 1 : i + 2] in (["-"], ["/dev/stdin"]))
        or word in ("-f-", "--file=-", "--makefile=-", "--file=/dev/stdin")
        for i, word in enumerate(args)
    )
    if not stdin_file:
        return
    if stdin is None:
        runner.unknown("make runs a makefile piped in from another command")
        return
    folder = make_folder(args)  # `make -C .. -f -`: its recipes run there
    for line in stdin.splitlines()[:_MAX_AWK_COMMANDS]:
        if line.startswith("\t") and line.strip():
            command = line.strip().lstrip("@-+")
            runner.script(f"cd {shlex.quote(folder)} && {command}" if folder else command)


def git_config_value(key: str, value: str, runner: Runner) -> list[str] | None:
    """What a git configuration ``key=value`` runs: a shell alias or a command-running key is
    read as a script; a git alias returns git's arguments (``None`` otherwise)."""
    if key.lower().startswith("alias."):
        if value.startswith("!"):  # run from the top of the repository git works in, which
            # the reading cannot know (`git -C ..`, another repository's file): `$(…)`
            runner.script(f'cd "$(…)" && {value[1:]}')
            return None
        return value.split()
    if _RUN_KEYS.fullmatch(key) or (key.lower().startswith("submodule.") and value[:1] == "!"):
        runner.script(value[1:] if value.startswith("!") else value)
    elif _HOOK_FOLDER.fullmatch(key):
        git_hooks(value, runner)
    elif _TEMPLATE_FOLDER.fullmatch(key):
        git_template(value, runner)
    elif _HELPER_KEYS.fullmatch(key) and value.lower() not in ("never", "user"):
        runner.unknown(f"git may run a remote helper program ({key})")
    return None


def git_hooks(folder: str, runner: Runner, sub: str = "") -> None:
    """Git runs the hooks of ``folder``: each hook file there is read as a program (for a
    subcommand ``sub`` that only looks at the repository, the one hook it may run)."""
    if folder:
        base = folder.rstrip("/") or "/"
        for name in _LOOKING_HOOKS if sub in _LOOKING else GIT_HOOK_NAMES:
            runner.program_file(f"{base}/{name}")


def git_template(folder: str, runner: Runner) -> None:
    """A repository made from the template ``folder`` runs the hooks of ``folder/hooks`` (an
    empty value means no template)."""
    if folder:
        git_hooks(f"{folder.rstrip('/')}/hooks", runner)


def git_key_runs(key: str) -> bool:
    """Whether git may run something named by the configuration ``key``'s value (for a value
    the reading cannot see)."""
    lowered = key.lower()
    return bool(
        lowered.startswith(("alias.", "submodule.", "include.", "includeif."))
        or _RUN_KEYS.fullmatch(key)
        or _HOOK_FOLDER.fullmatch(key)
        or _TEMPLATE_FOLDER.fullmatch(key)
        or _HELPER_KEYS.fullmatch(key)
    )


def git_network(sub: str, operands: list[str]) -> bool:
    """Whether ``git SUB OPERANDS`` talks to a remote: a remote's name (``origin``) or a URL,
    not a local path (``../mirror``, ``/srv/repo.git``, ``file://…``)."""
    if sub in GIT_ALWAYS_NETWORK:
        return True
    if sub not in GIT_NETWORK:
        return False
    remote = operands[0] if operands else ""
    local = remote.startswith(("/", "./", "../", "~/", "file://")) or remote in (".", "..")
    return not local


def network_command(name: str, args: list[str]) -> bool:
    """Whether the command ``name args`` is a network exchange by its name (and subcommand):
    :data:`NETWORK_COMMANDS`, ``getent hosts``, ``openssl s_client``, ``rsync`` to a host, an
    upload of :data:`UPLOADS` (``npm publish``, ``docker push``)."""
    if name in NETWORK_COMMANDS:  # `curl --version`, `gh --help`: nothing goes out
        return not args or not all(word in _ONLY_ASKS for word in args)
    if name in UPLOADS:
        sub = next((word for word in args if not word.startswith("-")), "")
        return sub in UPLOADS[name]
    return bool(
        (name == "getent" and args[:1] and args[0] in GETENT_NETWORK)
        or (name == "openssl" and "s_client" in args)
        or (name == "rsync" and any(remote_operand(arg) for arg in args))
    )


def remote_operand(word: str) -> bool:
    """Whether ``word`` names another host: ``host:path``, ``user@host:path``, ``scheme://``."""
    return bool(_REMOTE_OPERAND.match(word)) and not word.startswith("-")


def network_code(code: str) -> bool:
    """Whether inline program text uses a network library."""
    return _NETWORK_CODE.search(code) is not None


def network_module(args: list[str]) -> bool:
    """Whether an interpreter's ``-m MODULE`` is a network module (``python -m http.server``)."""
    for index, word in enumerate(args[:-1]):
        if word == "-m":
            return args[index + 1] in _NETWORK_MODULES
    return False
