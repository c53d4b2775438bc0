"""Programs that run another command, and program runners the interpreter table did not know.

* **Launchers** run the command after their subcommand in a prepared environment:
  ``uv run``, ``poetry run``, ``pipenv run``, ``pdm run``, ``hatch run``, ``rye run``,
  ``pixi run``, ``conda``/``mamba``/``micromamba run``, ``bundle exec``, ``dotenv run``,
  ``dotenvx run``, ``direnv exec DIR``, ``nix develop -c``, ``devbox run``, ``mise exec``/``x``,
  ``asdf exec``, ``op run``, ``doppler run``, ``infisical run``, ``aws-vault exec PROFILE``.
  The command is read as if typed (``uv run python x.py`` is ``python x.py``); ``uv run x.py``
  runs the file with Python; ``nix-shell --run TEXT`` runs a script.
* **Code runners** read their script operand (and ``-e``/``--eval`` text) as program text, as
  the interpreters of :data:`~.projects.INTERPRETERS` do: TypeScript runners (``tsx``,
  ``ts-node``, ``vite-node`` …), PowerShell, Deno (``deno run``/``deno eval``), ``go run``,
  and others (:data:`CODE_RUNNERS`).
"""

from __future__ import annotations

import base64
import binascii
import re
from typing import Final, NamedTuple

from pytest_harness_audit.policy.shell.native_loaders import (
    LOADER_NAMES,
    LOADER_OPTIONS,
    loader_unknown,
)
from pytest_harness_audit.policy.shell.powershell import UNKNOWN_MARK, as_posix

#: Wrappers that run the rest of their argv: ``name: (options taking a value, positional words
#: before the command)``.
WRAPPER_OPTIONS: Final[dict[str, tuple[frozenset[str], int]]] = {
    "env": (frozenset({"--chdir", "--split-string", "--unset", "-C", "-S", "-u"}), 0),
    "sudo": (frozenset({"--group", "--host", "--prompt", "--user", "-C", "-D", "-T", "-U", "-g",
                        "-h", "-p", "-r", "-t", "-u"}), 0),
    "doas": (frozenset({"-C", "-u"}), 0),
    "nice": (frozenset({"--adjustment", "-n"}), 0),
    "nohup": (frozenset(), 0),
    "time": (frozenset({"--format", "--output", "-f", "-o"}), 0),
    "timeout": (frozenset({"--kill-after", "--signal", "-k", "-s"}), 1),
    "command": (frozenset(), 0),
    "builtin": (frozenset(), 0),
    "exec": (frozenset({"-a"}), 0),
    "stdbuf": (frozenset({"--error", "--input", "--output", "-e", "-i", "-o"}), 0),
    "setsid": (frozenset(), 0),
    "ionice": (frozenset({"--class", "--classdata", "--pid", "-c", "-n", "-p"}), 0),
    "chrt": (frozenset(), 1),
    "taskset": (frozenset(), 1),
    "unbuffer": (frozenset(), 0),
    "caffeinate": (frozenset({"-t", "-w"}), 0),
    "strace": (frozenset({"-e", "-o", "-p", "-s"}), 0),
    "ltrace": (frozenset({"-e", "-o", "-p", "-s"}), 0),
    "xargs": (frozenset({"--arg-file", "--delimiter", "--max-args", "--max-procs", "-E", "-I", "-L",
                         "-P", "-a", "-d", "-n", "-s"}), 0),
    "flock": (frozenset({"--conflict-exit-code", "--timeout", "--wait", "-E", "-w"}), 1),
    "watch": (frozenset({"--interval", "-d", "-n"}), 0),
    "runuser": (frozenset({"--group", "--user", "-g", "-u"}), 0),
    "sg": (frozenset(), 1),
    "firejail": (frozenset(), 0),
    "proxychains": (frozenset({"-f"}), 0),
    "torsocks": (frozenset(), 0),
    "daemonize": (frozenset({"-c", "-e", "-E", "-o", "-p", "-l", "-u"}), 0),
    # run by the service manager: outside the call's processes, perhaps after it (`--on-active`)
    "systemd-run": (frozenset({"--unit", "-u", "--property", "-p", "--description", "--slice",
                               "--setenv", "-E", "--uid", "--gid", "--nice", "--working-directory",
                               "-D", "--on-active", "--on-boot", "--on-startup", "--on-calendar",
                               "--on-unit-active", "--on-unit-inactive", "--timer-property",
                               "--path-property", "--socket-property", "--service-type", "--host",
                               "-H", "--machine", "-M"}), 0),
    "run0": (frozenset({"--unit", "--property", "--description", "--slice", "--user", "-u",
                        "--group", "-g", "--nice", "--chdir", "-D", "--setenv", "--machine"}), 0),
    # a profiler, a namespace, a root, an architecture, limits, a clock, a display, a session,
    # an agent, a privilege or a line editor around the command (GTFOBins' `CMD` wrappers)
    "valgrind": (frozenset(), 0),
    "unshare": (frozenset({"-S", "--setuid", "-G", "--setgid", "-R", "--root", "-w", "--wd",
                           "--map-user", "--map-group", "--map-users", "--map-groups",
                           "--propagation", "--setgroups"}), 0),
    "nsenter": (frozenset({"-t", "--target", "-S", "--setuid", "-G", "--setgid"}), 0),
    "chroot": (frozenset({"--userspec", "--groups"}), 1),
    "setarch": (frozenset(), 1),
    # the dynamic loader run as a program: the program after its options
    **dict.fromkeys(LOADER_NAMES, (frozenset(LOADER_OPTIONS), 0)),
    "linux32": (frozenset(), 0),
    "linux64": (frozenset(), 0),
    "prlimit": (frozenset({"-p", "--pid", "-o", "--output"}), 0),
    "faketime": (frozenset({"-p"}), 1),
    "xvfb-run": (frozenset({"-n", "--server-num", "-s", "--server-args", "-e", "--error-file",
                            "-f", "--auth-file", "-w", "--wait", "-p", "--xauth-protocol"}), 0),
    "dbus-run-session": (frozenset({"--config-file", "--dbus-daemon"}), 0),
    "ssh-agent": (frozenset({"-a", "-E", "-t", "-P", "-O"}), 0),
    "sshpass": (frozenset({"-p", "-f", "-d", "-P"}), 0),
    "pkexec": (frozenset({"--user", "-u"}), 0),
    # a fake root, a quiet or limited run, an init, a user switch, a compiler cache, a queue
    "chronic": (frozenset(), 0),
    "fakeroot": (frozenset({"-l", "--lib", "--faked", "-s", "-i", "-b"}), 0),
    "fakechroot": (frozenset({"-l", "--lib", "-d", "--elfloader", "-e", "--environment", "-c",
                              "--config-dir"}), 0),
    "proot": (frozenset({"-r", "--rootfs", "-b", "--bind", "-m", "--mount", "-w", "--pwd",
                         "--cwd", "-q", "--qemu", "-k", "--kernel-release"}), 0),
    "catchsegv": (frozenset(), 0),
    "dumb-init": (frozenset({"-r", "--rewrite"}), 0),
    "tini": (frozenset({"-e", "-p"}), 0),
    "gosu": (frozenset(), 1),
    "su-exec": (frozenset(), 1),
    "s6-setuidgid": (frozenset(), 1),
    "setpriv": (frozenset({"--reuid", "--regid", "--ruid", "--rgid", "--euid", "--egid",
                           "--groups", "--inh-caps", "--ambient-caps", "--bounding-set",
                           "--securebits", "--pdeathsig", "--selinux-label",
                           "--apparmor-profile"}), 0),
    "with-contenv": (frozenset(), 0),
    "toybox": (frozenset(), 0),
    "ccache": (frozenset(), 0),
    "distcc": (frozenset(), 0),
    "icecc": (frozenset(), 0),
    "systemd-inhibit": (frozenset({"--what", "--who", "--why", "--mode"}), 0),
    "numactl": (frozenset({"-C", "--physcpubind", "-N", "--cpunodebind", "-m", "--membind",
                           "-p", "--preferred", "-i", "--interleave"}), 0),
    "cgexec": (frozenset({"-g"}), 0),
    "mpirun": (frozenset({"-n", "-np", "-c", "--host", "-H", "--hostfile", "-machinefile",
                          "--map-by", "--bind-to", "-x", "--mca", "-wdir", "--wdir"}), 0),
    "mpiexec": (frozenset({"-n", "-np", "-c", "--host", "-H", "--hostfile", "-machinefile",
                           "--map-by", "--bind-to", "-x", "--mca", "-wdir", "--wdir"}), 0),
    "cpulimit": (frozenset({"-l", "--limit", "-p", "--pid", "-e", "--exe", "-c", "--cpu"}), 0),
    "trickle": (frozenset({"-d", "-u", "-w", "-t", "-l", "-n", "-L"}), 0),
    "nq": (frozenset(), 0),
    "tsp": (frozenset({"-L", "-D", "-N", "-W"}), 0),
    "sem": (frozenset({"-j", "--jobs", "--id", "--semaphorename", "--semaphoretimeout",
                       "--st"}), 0),
    "rlwrap": (frozenset({"-f", "--file", "-H", "--history-filename", "-l", "--logfile", "-p",
                          "-P", "--pre-given", "-s", "--histsize", "-S", "--substitute-prompt",
                          "-w", "--wait-before-prompt", "-z", "--filter", "-e", "-g", "-q",
                          "-t", "-o", "-C", "--command-name"}), 0),
}  # fmt: skip
#: Programs that run their script operand as code (besides :data:`~.projects.INTERPRETERS`).
CODE_RUNNERS: Final = frozenset(
    {"tsx", "ts-node", "ts-node-esm", "ts-node-script", "ts-node-cwd", "esno", "esr", "vite-node",
     "babel-node", "jiti", "sucrase-node", "swc-node", "coffee", "elixir", "julia", "groovy",
     "jshell", "tclsh", "wish", "expect", "guile", "racket", "sbcl", "clisp", "raku", "perl6",
     "swift", "kotlin", "scala", "r", "dart", "zx", "ipython", "ipython3", "pypy", "jython",
     "graalpy", "qjs", "hermes", "gjs", "luajit", "texlua", "nu", "xonsh", "elvish", "janet",
     "fennel", "hy", "irb", "php-cgi", "octave", "octave-cli", "matlab"}
)  # fmt: skip
#: The options of an interpreter or code runner whose value is its code (MATLAB's ``-batch``).
CODE_OPTIONS: Final = frozenset(
    {"-c", "-e", "-E", "--eval", "-r", "--command", "-p", "--print", "-batch"}
)
_POWERSHELLS: Final = frozenset({"pwsh", "powershell", "pwsh.exe", "powershell.exe"})
#: PowerShell options taking a value (lower case), and those naming what runs.
_POWERSHELL_VALUED: Final = frozenset(
    {"-executionpolicy", "-ep", "-ex", "-workingdirectory", "-wd", "-configurationname",
     "-outputformat", "-of", "-o", "-inputformat", "-if", "-settingsfile", "-windowstyle", "-w",
     "-version", "-v", "-custompipename", "-psconsolefile", "-configurationfile"}
)  # fmt: skip
#: Launchers: ``(subcommands that launch, options taking a value, operands before the command)``.
_LAUNCHERS: Final[dict[str, tuple[frozenset[str], frozenset[str], int]]] = {
    "uv": (frozenset({"run"}), frozenset(
        {"--with", "--with-editable", "--with-requirements", "--python", "-p", "--project",
         "--directory", "--group", "--extra", "--package", "--env-file", "--index",
         "--default-index", "--index-url", "--extra-index-url", "-w", "--only-group",
         "--no-group", "--config-file", "--cache-dir", "--python-preference"}), 0),
    "poetry": (frozenset({"run"}), frozenset({"-C", "--directory", "-P", "--project"}), 0),
    "pipenv": (frozenset({"run"}), frozenset(), 0),
    "pipx": (frozenset({"run"}), frozenset({"--spec", "--python", "--pip-args", "--index-url"}),
             0),
    "pdm": (frozenset({"run"}), frozenset({"-p", "--project", "-g"}), 0),
    "hatch": (frozenset({"run"}), frozenset({"-e", "--env"}), 0),
    "rye": (frozenset({"run"}), frozenset({"--pyproject"}), 0),
    "pixi": (frozenset({"run", "exec"}), frozenset({"-e", "--environment", "--manifest-path"}), 0),
    "conda": (frozenset({"run"}), frozenset({"-n", "--name", "-p", "--prefix", "--cwd"}), 0),
    "mamba": (frozenset({"run"}), frozenset({"-n", "--name", "-p", "--prefix", "--cwd"}), 0),
    "micromamba": (frozenset({"run"}), frozenset({"-n", "--name", "-p", "--prefix", "--cwd"}), 0),
    "bundle": (frozenset({"exec"}), frozenset({"--gemfile"}), 0),
    "coverage": (frozenset({"run"}), frozenset({"--rcfile", "--source", "--omit", "--include",
                 "--data-file", "--context", "--concurrency"}), 0),
    "dotenv": (frozenset({"run"}), frozenset({"-f", "--file", "-e", "-c", "-v"}), 0),
    "dotenvx": (frozenset({"run"}), frozenset({"-f", "--env-file", "-e", "--env"}), 0),
    "direnv": (frozenset({"exec"}), frozenset(), 1),
    "nix": (frozenset({"develop", "shell"}), frozenset(), 0),
    "devbox": (frozenset({"run"}), frozenset({"-c", "--config", "-e", "--env"}), 0),
    "mise": (frozenset({"exec", "x"}), frozenset({"-C", "--cd", "-E", "--env", "-j"}), 0),
    "rtx": (frozenset({"exec", "x"}), frozenset({"-C", "--cd"}), 0),
    "asdf": (frozenset({"exec"}), frozenset(), 0),
    "op": (frozenset({"run"}), frozenset({"--env-file", "--account"}), 0),
    "doppler": (frozenset({"run"}), frozenset({"-p", "--project", "-c", "--config"}), 0),
    "infisical": (frozenset({"run"}), frozenset({"--env", "--path", "--projectId"}), 0),
    "aws-vault": (frozenset({"exec"}), frozenset({"-d", "--duration", "-r", "--region"}), 1),
    "perf": (frozenset({"record", "stat", "trace"}), frozenset(
        {"-e", "--event", "-o", "--output", "-p", "--pid", "-t", "--tid", "-F", "--freq", "-c",
         "--count", "-C", "--cpu", "-r", "--repeat", "-G", "--cgroup", "-u", "--uid", "-m",
         "--mmap-pages", "-x", "--field-separator", "--call-graph", "-I", "--interval-print"}), 0),
}  # fmt: skip
_COVERAGE_OWN: Final = frozenset({"--branch", "-a", "--append", "-p", "--parallel-mode", "--timid",
                           "-L", "--pylib", "--save-signal"})  # fmt: skip
#: Every launcher's name, for the dispatcher's one set lookup.
LAUNCHERS: Final = (
    frozenset(_LAUNCHERS)
    | {"nix-shell", "deno", "go", "uvx", "pytest-3", "py.test-3", "pytest3"}
    | _POWERSHELLS
)


class Launch(NamedTuple):
    """What a launcher runs: a command's ``argv``, a shell ``script``, or a ``code_file`` (or
    inline ``code``) read as program text, or ``unknown``: why what runs cannot be known; all
    ``None`` when nothing runs but the launcher's own work."""

    argv: list[str] | None = None
    script: str | None = None
    code_file: str | None = None
    code: str | None = None
    unknown: str | None = None


def launched(name: str, args: list[str]) -> Launch:
    """What launcher ``name`` runs with ``args`` (module doc)."""
    if name == "nix-shell":
        for index, word in enumerate(args[:-1]):
            if word in ("--run", "--command"):
                return Launch(script=args[index + 1])
        return Launch()
    if name in ("deno", "go"):
        return _code_runner(name, args)
    if name in _POWERSHELLS:
        return _powershell(args)
    for index, word in enumerate(args):  # `doppler run --command TEXT`, `mise x -c TEXT`
        option, equals, value = word.partition("=")
        if name in _COMMAND_TEXT and option in _COMMAND_TEXT[name] and word != "--":
            text = value if equals else args[index + 1] if index + 1 < len(args) else ""
            return Launch(script=text) if text else Launch()
        if word == "--":
            break
    if name in _RENAMED:  # `pytest-3 …`: the same program by another name
        return Launch(argv=[_RENAMED[name], *args])
    if name == "uvx" or (name == "uv" and args[:2] == ["tool", "run"]):
        return _tool_run(args if name == "uvx" else args[2:], _UVX_VALUED)
    if name == "nix":  # `nix develop [INSTALLABLE] -c CMD …`
        found = next((i for i, w in enumerate(args) if w in ("-c", "--command")), None)
        return Launch(argv=args[found + 1 :] or None) if found is not None else Launch()
    subcommands, valued, positional = _LAUNCHERS[name]
    index = 0
    while index < len(args) and args[index].startswith("-"):  # options before the subcommand
        index += 2 if args[index] in valued else 1
    if index >= len(args) or args[index] not in subcommands:
        return Launch()
    index += 1
    if name == "coverage":  # its own options, then python's (`coverage run -m pytest`)
        while index < len(args) and args[index].split("=", 1)[0] in _COVERAGE_OWN | valued:
            plain = "=" in args[index] or args[index] in _COVERAGE_OWN
            index += 1 if plain else 2
        return Launch(argv=["python", *args[index:]]) if index < len(args) else Launch()
    while index < len(args) and args[index].startswith("-") and args[index] != "--":
        index += 2 if args[index] in valued else 1
    index += positional  # `direnv exec DIR`, `aws-vault exec PROFILE`
    if index < len(args) and args[index] == "--":
        index += 1
    if name in ("mise", "rtx") and "--" in args[index:]:
        index = args.index("--", index) + 1  # `mise x node@20 -- node x.js`
    command = args[index:]
    if name == "uv" and command and command[0].endswith(".py"):
        return Launch(argv=["python", *command])  # `uv run x.py` runs the file with Python
    return Launch(argv=command or None)


def _tool_run(args: list[str], valued: frozenset[str]) -> Launch:
    """``uvx [OPTIONS] TOOL[@VERSION] ARGS``: the tool's command, run as if typed."""
    index = 0
    while index < len(args) and args[index].startswith("-") and args[index] != "--":
        index += 1 if "=" in args[index] or args[index] not in valued else 2
    index += args[index : index + 1] == ["--"]
    if index >= len(args):
        return Launch()
    return Launch(argv=[args[index].partition("@")[0], *args[index + 1 :]])


#: Programs known by a second name (a distribution's or a version's).
_RENAMED: Final = {"pytest-3": "pytest", "py.test-3": "pytest", "pytest3": "pytest"}
#: ``uvx``'s (``uv tool run``'s) options taking a value.
_UVX_VALUED: Final = _LAUNCHERS["uv"][1] | {"--from", "--constraints", "-c", "--overrides",
                                          "--build-constraints", "-b"}  # fmt: skip


#: ``systemd-run`` options after which the command runs in the caller's processes (``--scope``)
#: or is waited for, its unit's processes ended with it (``--wait``, ``--pipe``, ``--pty``).
_SYSTEMD_RUN_WAITS: Final = frozenset({"--scope", "--wait", "-P", "--pipe", "-t", "--pty"})


def deferred(name: str) -> str:
    """Why what a scheduler (``at``, ``crontab``, ``systemd-run`` …) is handed is not judged
    whole: it runs after the call, outside its containment, where no later call sees it."""
    return (
        f"{name} runs its job outside this call, perhaps after the session: what it runs then"
        " is not what is read now"
    )


def outliving_run(name: str, args: list[str]) -> str | None:
    """Why a wrapper with ``args`` is not judged whole: the dynamic loader given native code
    (:func:`.native_loaders.loader_unknown`); a ``systemd-run`` (:func:`deferred`) hands its
    command to the service manager to run on its own, as a service not waited for or on a timer
    (``--on-active``, ``--on-calendar`` …), outside the call's processes, perhaps after the
    session; else ``None`` (another program, ``--scope``, ``--wait``)."""
    if name in LOADER_NAMES:  # `ld.so --preload ./x.so ls`: native code (:mod:`.native_loaders`)
        return loader_unknown(args)
    if name != "systemd-run":
        return None
    valued = WRAPPER_OPTIONS[name][0]
    waits = timer = False
    index = 0
    while index < len(args) and args[index].startswith("-") and args[index] != "--":
        option = args[index].split("=", 1)[0]
        timer = timer or option.startswith("--on-")
        waits = waits or option in _SYSTEMD_RUN_WAITS
        index += 2 if args[index] in valued else 1
    return deferred(name) if timer or not waits else None


#: Interpreter options after which no script file follows (a module, or code read elsewhere).
_NO_SCRIPT: Final = frozenset({"-m", "-", "--module"})
_VALUE_OPTIONS: Final = frozenset({"-W", "-X", "-I", "-r", "--require", "-M", "-x", "--import"})


def script_operand(args: list[str]) -> str | None:
    """The script file an interpreter runs (``python3 x.py``), if any."""
    index = 0
    while index < len(args):
        word = args[index]
        if word in _NO_SCRIPT:
            return None
        if not word.startswith("-"):
            return word
        index += 2 if word in _VALUE_OPTIONS else 1
    return None


def launcher_reads(name: str, args: list[str]) -> list[str]:
    """Files a launcher reads itself: an env file it loads into the command's environment
    (``--env-file F``; ``dotenv``/``dotenvx`` load ``.env`` unless told another file;
    ``pipenv run``/``shell`` load ``.env``; an interpreter preloading a dotenv module, ``node -r
    dotenv/config``, loads ``.env`` or its ``dotenv_config_path=F`` argument)."""
    files: list[str] = []
    for index, word in enumerate(args):
        option, equals, value = word.partition("=")
        following = args[index + 1] if index + 1 < len(args) else ""
        if option in ("--env-file", "--env-file-if-exists") or (
            name in ("dotenv", "dotenvx") and option in ("-f", "--file")
        ):
            if name == "deno" and not equals:
                files.append(".env")  # deno's `--env-file` takes its value after `=` only
            else:
                files.append(value if equals else following)
        elif name == "deno" and option == "--env":
            files.append(value if equals else ".env")
        elif option in _PRELOAD_OPTIONS and is_dotenv_preload(value if equals else following):
            files.append(".env")
        elif word.startswith("-r") and is_dotenv_preload(word[2:]):
            files.append(".env")  # `ruby -rdotenv/load x.rb`
        elif option.lower() == "dotenv_config_path" and equals:
            files.append(value)
    if (name in ("dotenv", "dotenvx") and not files) or (
        name == "pipenv" and any(word in ("run", "shell") for word in args[:8])
    ):
        files.append(".env")
    return [path for path in files if path]


#: Options naming a module an interpreter loads before the program.
_PRELOAD_OPTIONS: Final = frozenset({"-r", "--require", "--import", "--loader",
                              "--experimental-loader", "--preload"})  # fmt: skip
#: Modules whose loading reads an env file into the environment (``node -r dotenv/config``).
_DOTENV_PRELOAD: Final = re.compile(
    r"(?:@dotenvx/)?(?:dotenv|dotenvx|dotenv-flow|dotenv-expand|dotenv-safe|dotenv-extended"
    r"|dotenv-defaults|@next/env)/(?:config|load)(?:\.[cm]?js)?"
)


def is_dotenv_preload(spec: str) -> bool:
    """Whether preloading module ``spec`` reads an env file (``dotenv/config``, its
    ``node_modules`` path, ``dotenv-flow/config`` …)."""
    spec = spec.strip("\"'").removeprefix("file:").removeprefix("./")
    spec = spec.rpartition("node_modules/")[2]
    return bool(_DOTENV_PRELOAD.fullmatch(spec))


def _code_runner(name: str, args: list[str]) -> Launch:
    """``deno run x.ts``, ``deno eval CODE``, ``go run x.go``: the program text they run."""
    if name == "deno" and args[:1] == ["eval"] and len(args) > 1:
        return Launch(code=args[-1])
    if args[:1] == ["run"]:
        valued = _DENO_VALUED if name == "deno" else _GO_VALUED
        index = 1
        while index < len(args) and args[index].startswith("-"):
            if name == "go" and args[index] == "-exec" and index + 1 < len(args):
                return Launch(script=args[index + 1])  # `go run -exec PROG`: PROG runs it
            index += 2 if args[index] in valued else 1
        if index < len(args):
            return Launch(code_file=args[index])
    return Launch()


_DENO_VALUED: Final = frozenset(  # `--allow-read=…`, `--env-file=…` take their value after `=`
    {"-c", "--config", "--import-map", "--lock", "-L", "--log-level", "--cert", "--location",
     "--seed", "--ext", "--preload"}
)  # fmt: skip
_GO_VALUED: Final = frozenset(
    {"-tags", "-ldflags", "-gcflags", "-asmflags", "-o", "-mod", "-C", "-p", "-pkgdir",
     "-toolexec", "-overlay", "-modfile", "-buildmode", "-compiler", "-installsuffix"}
)  # fmt: skip
#: Options whose value is a shell command the launcher runs.
_COMMAND_TEXT: Final = {
    "doppler": frozenset({"--command"}),
    "infisical": frozenset({"--command"}),
    "mise": frozenset({"-c", "--command"}),
    "rtx": frozenset({"-c", "--command"}),
}


def _powershell(args: list[str]) -> Launch:
    """``pwsh [-File] x.ps1``, ``pwsh -Command TEXT``, ``pwsh -EncodedCommand BASE64`` (the
    text in UTF-16LE): the program text PowerShell runs (options in any case, abbreviated)."""
    index = 0
    while index < len(args):
        word = args[index]
        option = word.lower().replace("/", "-", 1) if word[:1] in "-/" else ""
        rest = args[index + 1 :]
        if not option:
            return Launch(code_file=word)
        if option in ("-f", "-fi") or (len(option) > 2 and "-file".startswith(option)):
            return Launch(code_file=rest[0]) if rest else Launch()
        if option == "-c" or (len(option) > 3 and "-command".startswith(option)):
            return _powershell_text(" ".join(rest)) if rest else Launch()
        if option in ("-e", "-ec") or (len(option) > 2 and "-encodedcommand".startswith(option)):
            if not rest:
                return Launch()
            try:
                return _powershell_text(
                    base64.b64decode(rest[0], validate=True).decode("utf-16-le")
                )
            except (binascii.Error, UnicodeDecodeError, ValueError):
                if rest[0].startswith(UNKNOWN_MARK):  # the rewriting's: `as_posix`
                    return Launch(unknown=rest[0][1:])
                return Launch(unknown="PowerShell runs an encoded command that does not decode")
        index += 2 if option in _POWERSHELL_VALUED else 1
    return Launch()


def _powershell_text(text: str) -> Launch:
    """PowerShell program text: kept as program text (for the policy's patterns and the paths it
    names) and read as the POSIX commands it amounts to (``Remove-Item -Recurse DIR``)."""
    return Launch(code=text, script=as_posix(text))


__all__ = [
    "CODE_OPTIONS",
    "CODE_RUNNERS",
    "LAUNCHERS",
    "WRAPPER_OPTIONS",
    "Launch",
    "deferred",
    "is_dotenv_preload",
    "launched",
    "launcher_reads",
    "outliving_run",
    "script_operand",
]
