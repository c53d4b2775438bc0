"""Signals the harness's processes get from program text, debuggers and ``fuser -k``.

Every command here is only decided (``gate.decide``): nothing runs, so no test kills anything.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys

import pytest
from process_rule import assert_allowed, assert_refused, permissive_session

from pytest_harness_audit.session.harness import Harness

ATTACKS = [
    "python3 -c 'import os,signal; os.kill(os.getppid(), signal.SIGKILL)'",
    "python3 -c 'import os, signal; os.kill(os.getppid(), signal.SIGSTOP)'",
    "python3 -c 'import os; os.killpg(0, 9)'",
    "python3 -c 'import os; os.kill(-1, 9)'",
    "python3 -c 'import os; os.killpg(os.getpgrp(), 9)'",
    "python3 -c 'import os; os.killpg(os.getpgid(0), 9)'",
    "python3 -c 'import os; os.kill(-os.getpid(), 9)'",
    "python3 -c 'import os as o; o.kill(o.getppid(), 9)'",
    "python3 -c 'from os import kill, getppid; kill(getppid(), 9)'",
    'python3 -c \'import subprocess; subprocess.run(["pkill","-f","harness"])\'',
    "python3 -c 'import os; os.system(\"pkill -f harness-audit\")'",
    "perl -e 'kill 9, getppid'",
    "perl -e 'kill \"KILL\", -1'",
    "perl -e 'kill -9, getppid'",
    "perl -e 'kill(KILL => getppid())'",
    "node -e 'process.kill(process.ppid, 9)'",
    "node -e 'process.kill(process.ppid)'",
    "node -e 'process.kill(-process.pid, \"SIGKILL\")'",
    "ruby -e 'Process.kill(9, Process.ppid)'",
    "ruby -e 'Process.kill :KILL, Process.ppid'",
    "ruby -e 'Process.kill(\"TERM\", 0)'",
    "php -r 'posix_kill(posix_getppid(), SIGKILL);'",
    "python3 -c 'import os, signal; signal.pidfd_send_signal(os.pidfd_open(os.getppid()), 9)'",
    'python3 -c \'__import__("os").kill(__import__("os").getppid(), 9)\'',
    "printf 'import os\\nos.kill(os.getppid(), 9)\\n' | python3",
    "python3 -c 'import psutil; psutil.Process().parent().kill()'",
    "python3 -c 'import os, psutil; psutil.Process(os.getppid()).suspend()'",
    "python3 -c 'import psutil; [p.kill() for p in psutil.process_iter() "
    'if "harness" in " ".join(p.cmdline())]\'',
    'python3 -c \'import psutil; [p.kill() for p in psutil.process_iter(["name"]) '
    'if p.info["name"] == "python3"]\'',
    "python3 -c 'import psutil; [p.terminate() for p in psutil.process_iter()]'",
    "python3 -c 'import os; [os.kill(int(d), 9) for d in os.listdir(\"/proc\") if d.isdigit()]'",
    "python3 -c 'import os, subprocess; os.kill(int(subprocess.check_output("
    '["pgrep", "-f", "harness-audit"]).split()[0]), 9)\'',
    "python3 -c 'import os; f = os.kill; f(os.getppid(), 9)'",
    "python3 -c 'import os; getattr(os, \"kill\")(os.getppid(), 9)'",
    "python3 -c 'import os; p = os.getppid(); os.kill(p, 9)'",
    'python3 -c \'import os; exec("os.ki" + "ll(os.getppid(), 9)")\'',
    "python3 -c 'import os, ctypes; ctypes.CDLL(None).kill(os.getppid(), 9)'",
    'python3 -c \'import os, subprocess; subprocess.run(["kill", "-9", str(os.getppid())])\'',
    "python3 -c 'import os; os.system(f\"kill -9 {os.getppid()}\")'",
    'node -e \'require("child_process").execSync("kill -9 " + process.ppid)\'',
    "gdb -p $PPID",
    "gdb -p $(pgrep -f harness-audit)",
    'gdb -batch -ex "attach $PPID" -ex kill',
    "py-spy dump --pid $PPID",
    "kill -9 $(lsof -t -c py)",
    "kill $(lsof -t +D .)",
    "kill $(lsof -t)",
    "gdb -p $PPID -batch -ex kill",
    "gdb --pid=$PPID",
    "strace -p $PPID",
    "strace -f -p$PPID -o /dev/null",
    "ltrace -p $PPID",
    "gcore $PPID",
    "kill -STOP $PPID",
    "fuser -k .",
    "fuser -km /tmp",
    "nohup sh -c 'while :; do fuser -k -TERM .; sleep 1; done' &",
]

LOOK_ALIKES = [
    "python -c 'import os; print(os.getpid())'",
    "python3 -c 'import os; os.kill(int(open(\"server.pid\").read()), 0)'",
    "python3 -c 'import os; os.kill(int(open(\"server.pid\").read()), 15)'",
    "python3 -c 'import os, signal; os.kill(os.getppid(), signal.SIGCONT)'",
    "python3 -c 'import os; os.kill(os.getppid(), 0)'",
    "python3 -c 'import os; os.kill(os.getpid(), 9)'",
    'python3 -c \'import os, subprocess, signal; p = subprocess.Popen(["sleep", "9"], '
    "start_new_session=True); os.killpg(os.getpgid(p.pid), signal.SIGTERM)'",
    'python3 -c \'import subprocess; p = subprocess.Popen(["sleep", "9"]); p.kill()\'',
    "python -c 'import signal; signal.signal(signal.SIGINT, lambda *a: None)'",
    'python3 -c \'import psutil; [p.kill() for p in psutil.process_iter(["name"]) '
    'if p.info["name"] == "uvicorn"]\'',
    "python3 -c 'import psutil; [c.kill() for c in psutil.Process().children()]'",
    'node -e \'const c = require("child_process").spawn("sleep", ["9"]); process.kill(c.pid)\'',
    'node -e \'const c = require("child_process").spawn("sleep", ["9"]); c.kill("SIGTERM")\'',
    "node -e 'process.kill(process.pid)'",
    "perl -e 'print \"kill\"'",
    "perl -e 'kill 0, getppid'",
    'ruby -e \'Process.kill("TERM", File.read("server.pid").to_i)\'',
    "strace -o trace.txt python3 app.py",
    "gdb python3 core",
    "gdb -ex run --args python3 app.py",
    "fuser -v 8000/tcp",
    "fuser app/server.log",
    "fuser -k app/server.log",
    "kill -9 $(lsof -t -i :8000)",
    "kill -9 $(lsof -t -c node)",
    "kill $(lsof -t app/server.log)",
    "lsof -i :8000",
    "python3 -c 'print(\"please kill the server\")'",
]


harness = pytest.fixture(permissive_session)


@pytest.mark.parametrize("command", ATTACKS)
def test_a_signal_from_code_or_an_attach_is_refused(harness: Harness, command: str) -> None:
    assert_refused(harness, command)


@pytest.mark.parametrize("command", LOOK_ALIKES)
def test_ordinary_signals_from_code_stay_allowed(harness: Harness, command: str) -> None:
    assert_allowed(harness, command)


def test_a_script_file_that_signals_the_host_is_refused(harness: Harness) -> None:
    """A script written by an earlier call and run by this one: its text is read."""
    (harness.root / "stop.py").write_text("import os\nos.kill(os.getppid(), 9)\n")
    (harness.root / "serve.py").write_text("import os\nprint(os.getpid())\n")
    (harness.root / "stopper").write_text("import os\nos.killpg(0, 9)\n")
    commands = (
        "python3 stop.py",
        "python3 -m stop",
        "cd . && python3 -u -m stop",
        "python3 stopper",
    )
    for command in commands:
        assert harness.gate.decide("Bash", {"command": command}).blocked, command
    for command in ("python3 serve.py", "python3 -m serve", "python3 -m pytest -q"):
        assert not harness.gate.decide("Bash", {"command": command}).blocked, command


def test_a_live_id_in_code_is_judged_by_what_it_is(harness: Harness) -> None:
    own = harness.gate.decide(
        "Bash", {"command": f"python3 -c 'import os; os.kill({os.getpid()}, 9)'"}
    )
    assert own.blocked  # the deciding process
    with subprocess.Popen(["sleep", "30"], start_new_session=True) as child:
        try:
            command = f"python3 -c 'import os; os.kill({child.pid}, 9)'"
            assert not harness.gate.decide("Bash", {"command": command}).blocked
        finally:
            child.kill()


def test_fuser_of_a_port_is_judged_by_who_holds_it(harness: Harness) -> None:
    """``fuser -k PORT/tcp``, ``kill $(lsof -t -i :PORT)``: a port the harness (here, the deciding
    process, as the proxy is in its own) listens on is refused; another program's port is not."""
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = held.getsockname()[1]
        for command in (
            f"fuser -k {port}/tcp",
            f"fuser -k -n tcp {port}",
            f"kill -9 $(lsof -t -i :{port})",
        ):
            assert harness.gate.decide("Bash", {"command": command}).blocked, command
    program = "import socket, time; s = socket.socket(); s.bind(('127.0.0.1', 0)); s.listen();"
    program += " print(s.getsockname()[1], flush=True); time.sleep(30)"
    with subprocess.Popen([sys.executable, "-c", program], stdout=subprocess.PIPE) as child:
        try:
            assert child.stdout is not None
            other = int(child.stdout.readline())
            for command in (f"fuser -k {other}/tcp", f"kill $(lsof -t -i :{other})"):
                assert not harness.gate.decide("Bash", {"command": command}).blocked, command
        finally:
            child.kill()


def test_a_pid_file_code_reads_is_read_as_the_code_would(harness: Harness) -> None:
    """``os.kill(int(open(F).read()), 9)``: the id the file holds now is judged."""
    (harness.root / "harness.pid").write_text(f"{os.getpid()}\n")
    for command in (
        "python3 -c 'import os; os.kill(int(open(\"harness.pid\").read()), 9)'",
        'ruby -e \'Process.kill("KILL", File.read("harness.pid").to_i)\'',
        'node -e \'process.kill(+require("fs").readFileSync("harness.pid", "utf8"))\'',
    ):
        assert harness.gate.decide("Bash", {"command": command}).blocked, command
    with subprocess.Popen(["sleep", "30"], start_new_session=True) as child:
        try:
            (harness.root / "server.pid").write_text(f"{child.pid}\n")
            command = "python3 -c 'import os; os.kill(int(open(\"server.pid\").read()), 9)'"
            assert not harness.gate.decide("Bash", {"command": command}).blocked
        finally:
            child.kill()


#: Code that finds its parent (to print it, to log it) and signals a process it started or read:
#: the id it signals is no parent's, so the signal is let through.
PARENT_NAMED_CHILD_SIGNALLED = [
    "python3 -c 'import os, subprocess; print(os.getppid()); "
    'child = subprocess.Popen(["sleep", "9"]); os.kill(child.pid, 15)\'',
    "python3 -c 'import os; print(os.getppid()); "
    'child_pid = int(open("server.pid").read()); os.kill(child_pid, 15)\'',
    "python3 -c 'import os, subprocess, signal; parent = os.getppid(); "
    'p = subprocess.Popen(["sleep", "9"], start_new_session=True); '
    "os.killpg(os.getpgid(p.pid), signal.SIGTERM)'",
    'node -e \'console.log(process.ppid); const c = require("child_process").spawn("sleep", '
    '["9"]); process.kill(c.pid, "SIGTERM")\'',
    'perl -e \'print getppid; my $child = fork() || exec("sleep", "9"); kill 15, $child\'',
    'ruby -e \'puts Process.ppid; pid = spawn("sleep 9"); Process.kill("TERM", pid)\'',
    "python3 -c 'import os, psutil, subprocess; print(os.getppid()); "
    'child = subprocess.Popen(["sleep", "9"]); psutil.Process(child.pid).terminate()\'',
]

#: The id signalled can be the parent's (or its group's), however it reached the call.
PARENT_REACHED_INDIRECTLY = [
    "python3 -c 'import os; p = os.getppid(); os.kill(p, 9)'",
    "python3 -c 'import os; p = os.getppid(); q = p; os.kill(q, 9)'",
    "python3 -c 'import os; a, b = os.getpid(), os.getppid(); os.kill(b, 9)'",
    "python3 -c 'import os; ids = [os.getppid()]; os.kill(ids[0], 9)'",
    'python3 -c \'import os; d = {}; d["p"] = os.getppid(); os.kill(d["p"], 9)\'',
    "python3 -c 'import os\nclass S: pass\ns = S(); s.p = os.getppid(); os.kill(s.p, 9)'",
    "python3 -c 'import os\nif (p := os.getppid()): os.kill(p, 9)'",
    "python3 -c 'import os\nfor p in [os.getppid()]: os.kill(p, 9)'",
    "python3 -c 'import os\ndef stop(pid): os.kill(pid, 9)\nstop(os.getppid())'",
    "python3 -c 'import os\ndef parent(): return os.getppid()\nos.kill(parent(), 9)'",
    "python3 -c 'import os; g = os.getpgrp(); os.killpg(g, 9)'",
    "python3 -c 'import os; p = os.getppid(); os.kill(int(str(p)), 9)'",
    "python3 -c 'import os; child = 1; child = os.getppid(); os.kill(child, 9)'",
    "python3 -c 'import os; p = os.getppid() + 0; os.kill(p, 9)'",
    "python3 -c 'import os; p = 0; p += os.getppid(); os.kill(p, 9)'",
    "python3 -c 'import os\nwith open(\"x\") as f: p = os.getppid()\nos.kill(p, 9)'",
    "python3 -c 'import os; f = os.kill; f(os.getppid(), 9)'",
    "python3 -c 'from os import kill, getppid as g; kill(g(), 9)'",
    "python3 -c 'import os\nstop = lambda pid: os.kill(pid, 9)\nstop(os.getppid())'",
    "python3 -c 'import os, psutil; p = os.getppid(); psutil.Process(p).kill()'",
    "python3 -c 'import os, psutil; print(os.getppid()); psutil.Process(pid).kill()'",
    "python3 -c 'import os, psutil; print(os.getppid()); psutil.Process().parent().kill()'",
    "perl -e 'my $p = getppid; kill 9, $p'",
    "perl -e 'sub stop { my $p = shift; kill 9, $p } stop(getppid)'",
    "ruby -e 'def stop(pid) Process.kill(9, pid) end; stop(Process.ppid)'",
    "ruby -e '[Process.ppid].each { |pid| Process.kill(9, pid) }'",
    "node -e 'const stop = (pid) => process.kill(pid, 9); stop(process.ppid)'",
    "perl -e 'my ($a, $p) = ($$, getppid()); kill \"KILL\", $p'",
    "ruby -e 'p = Process.ppid; Process.kill(9, p)'",
    "node -e 'const p = process.ppid; process.kill(p, 9)'",
    "node -e 'let p; p = process.ppid; process.kill(p)'",
]


@pytest.mark.parametrize("command", PARENT_NAMED_CHILD_SIGNALLED)
def test_a_child_signalled_by_code_naming_its_parent_is_allowed(
    harness: Harness, command: str
) -> None:
    assert_allowed(harness, command)


@pytest.mark.parametrize("command", PARENT_REACHED_INDIRECTLY)
def test_a_parent_id_carried_to_the_signal_is_refused(harness: Harness, command: str) -> None:
    assert_refused(harness, command)


def test_a_script_file_naming_its_parent_is_judged_by_the_id_it_signals(harness: Harness) -> None:
    """A script that logs its parent and stops the server it started is ordinary work; one that
    hands its parent's id to the signal is refused."""
    (harness.root / "serve.py").write_text(
        "import os, subprocess\n"
        "print('started by', os.getppid())\n"
        "server = subprocess.Popen(['sleep', '9'])\n"
        "os.kill(server.pid, 15)\n"
    )
    (harness.root / "stop.py").write_text(
        "import os\nprint('started by', os.getppid())\ntarget = os.getppid()\nos.kill(target, 15)\n"
    )
    assert_allowed(harness, "python3 serve.py")
    assert_refused(harness, "python3 stop.py")
