"""Nothing a ``Bash`` command starts outlives its call on Linux, however it detaches.

Each escape leaves the call's process group *and* drops its environment (so neither the group
kill nor the call's mark reaches it), then deletes ``app`` a second later: after the call has
returned, when no snapshot would compare. The directory must still be there.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from pytest_harness_audit.tools import ToolBox, descendants, shell, supervisor
from pytest_harness_audit.tools.descendants import contained, processes

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux") or not contained(), reason="Linux containment"
)

LATE = "import time, shutil; time.sleep(1); shutil.rmtree('app')"
"""Python that deletes ``app`` in the workspace a second after it starts."""
_DAEMON = f"""import os
if os.fork(): os._exit(0)
os.setsid()
if os.fork(): os._exit(0)
os.execve({sys.executable!r}, ['python3', '-c', {LATE!r}], {{}})
"""
_REEXEC = f"""import os, sys
if os.fork(): os._exit(0)
os.setsid()
n = int(sys.argv[1]) if len(sys.argv) > 1 else 0
if n < 10:
    os.execve({sys.executable!r}, ['python3', 'escape.py', str(n + 1)], {{}})
os.execve({sys.executable!r}, ['python3', '-c', {LATE!r}], {{}})
"""
_FORK_TREE = f"""import os
for level in range(6):
    if os.fork() == 0:
        os.setsid()
    if os.fork():
        os._exit(0)
exec({LATE.replace("shutil.rmtree('app')", "shutil.rmtree('app', ignore_errors=True)")!r})
"""
_CHAIN = f"""import os
for step in range(100):
    if os.fork():
        os._exit(0)
    os.setsid()
exec({LATE!r})
"""
_KILLS_ITS_SUPERVISOR = f"""import os, time
if os.fork(): os._exit(0)
os.setsid()
time.sleep(0.2)
with open('/proc/self/stat') as stat:
    parent = int(stat.read().rsplit(')', 1)[1].split()[1])
with open('/proc/%d/cmdline' % parent, 'rb') as cmdline:
    if b"import supervisor" in cmdline.read():  # never the test process itself
        os.kill(parent, 9)
exec({LATE!r})
"""

ESCAPES: dict[str, str] = {
    "setsid -f env -i": f'setsid -f env -i python3 -c "{LATE}"',
    "double fork": f'( ( env -i python3 -c "{LATE}" >/dev/null 2>&1 & ) & )',
    "nohup env -i &": f'nohup env -i python3 -c "{LATE}" >/dev/null 2>&1 &',
    "subshell env -i sh -c &": f"( env -i sh -c 'python3 -c \"{LATE}\"' & )",
    "disown": f'env -i python3 -c "{LATE}" >/dev/null 2>&1 & disown',
    "script -c": f"script -qc 'setsid -f env -i python3 -c \"{LATE}\"' /dev/null",
    "start-stop-daemon": (
        f'start-stop-daemon --start --background --exec /usr/bin/env -- -i python3 -c "{LATE}"'
    ),
    "daemon double fork": "python3 escape-daemon.py",
    "re-exec ten times": "python3 escape.py",
    "fork tree": "python3 escape-tree.py",
    "fork chain": "python3 escape-chain.py",
}
_NEEDS = {"script -c": "script", "start-stop-daemon": "start-stop-daemon"}


def _workspace(root: Path) -> Path:
    (root / "app").mkdir(parents=True)
    (root / "app" / "main.py").write_text("print('hi')\n")
    (root / "escape-daemon.py").write_text(_DAEMON)
    (root / "escape.py").write_text(_REEXEC)
    (root / "escape-tree.py").write_text(_FORK_TREE)
    (root / "escape-chain.py").write_text(_CHAIN)
    (root / "escape-kills.py").write_text(_KILLS_ITS_SUPERVISOR)
    return root


def _alive(pid: int) -> bool:
    proc = processes().get(pid)
    return proc is not None and proc.state != "Z"


@pytest.mark.slow
def test_no_escape_outlives_its_call(tmp_path: Path) -> None:
    # the calls run side by side (each in a workspace of its own): one call's end must not
    # stand in for another's
    roots = {
        name: _workspace(tmp_path / name.replace(" ", "_"))
        for name in ESCAPES
        if name not in _NEEDS or shutil.which(_NEEDS[name]) is not None
    }
    outcomes: dict[str, object] = {}

    def call(name: str) -> None:
        # the pause lets a detaching process finish leaving the group before the call ends
        command = f"{ESCAPES[name]}\nsleep 0.3"
        outcomes[name] = ToolBox(roots[name]).run("Bash", {"command": command})

    threads = [threading.Thread(target=call, args=(name,)) for name in roots]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    failed = {name: o for name, o in outcomes.items() if getattr(o, "status", "") != "success"}
    assert failed == {}
    time.sleep(2.5)  # every escapee would have deleted `app` by now
    survived = [name for name, root in roots.items() if not (root / "app").exists()]
    assert survived == []
    assert len(roots) >= 9


def test_an_escapee_that_kills_its_supervisor_is_swept(tmp_path: Path) -> None:
    root = _workspace(tmp_path / "ws")
    outcome = ToolBox(root).run("Bash", {"command": "python3 escape-kills.py; sleep 0.5"})
    assert outcome.error_message == "Bash: command killed by signal SIGKILL"
    time.sleep(1.0)
    assert (root / "app" / "main.py").exists()


@pytest.mark.slow
def test_an_escapee_that_stops_its_supervisor_is_ended_at_the_timeout(tmp_path: Path) -> None:
    root = _workspace(tmp_path / "ws")
    (root / "stops.py").write_text(
        "import os, signal, time\n"
        "if os.fork(): os._exit(0)\n"
        "os.setsid()\n"
        "time.sleep(0.2)\n"
        "with open('/proc/self/stat') as stat:\n"
        "    parent = int(stat.read().rsplit(')', 1)[1].split()[1])\n"
        "with open('/proc/%d/cmdline' % parent, 'rb') as cmdline:\n"
        "    if b'import supervisor' in cmdline.read():\n"
        "        os.kill(parent, signal.SIGSTOP)\n"
        "time.sleep(2.5)\n"
        "import shutil; shutil.rmtree('app')\n"
    )
    command = "python3 stops.py; sleep 0.5"
    outcome = ToolBox(root).run("Bash", {"command": command, "timeout": 1000})
    assert outcome.error_message is not None and "timed out" in outcome.error_message
    time.sleep(3)
    assert (root / "app").exists()


def test_a_background_job_that_ends_within_the_call_still_works(tmp_path: Path) -> None:
    root = _workspace(tmp_path / "ws")
    command = "(sleep 0.2; echo done > bg.txt) & setsid -f sh -c 'echo detached > d.txt'; "
    command += "sleep 0.5; cat bg.txt d.txt"
    outcome = ToolBox(root).run("Bash", {"command": command})
    assert (outcome.status, outcome.output) == ("success", "done\ndetached\n")


def test_exit_codes_and_signals_come_through_the_supervisor(tmp_path: Path) -> None:
    toolbox = ToolBox(_workspace(tmp_path / "ws"))
    assert toolbox.run("Bash", {"command": "exit 3"}).error_message == (
        "Bash: command failed with exit code 3"
    )
    assert toolbox.run("Bash", {"command": "kill -KILL $$"}).error_message == (
        "Bash: command killed by signal SIGKILL"
    )


def test_a_shell_that_cannot_start_is_one_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(shell, "BASH", str(tmp_path / "no-such-shell"))
    outcome = ToolBox(_workspace(tmp_path / "ws")).run("Bash", {"command": "true"})
    assert outcome.error_message == (
        f"Bash: cannot start {tmp_path / 'no-such-shell'}: No such file or directory"
    )


def test_processes_the_caller_started_are_not_touched(tmp_path: Path) -> None:
    # an MCP server started before the call (its own session, like the mcp SDK's), and a
    # process another thread starts while the call runs
    before = subprocess.Popen(["sleep", "30"], start_new_session=True)
    during: list[subprocess.Popen[bytes]] = []
    root = _workspace(tmp_path / "ws")

    def start_later() -> None:
        while not (root / "started").exists():
            time.sleep(0.01)
        during.append(subprocess.Popen(["sleep", "30"], start_new_session=True))

    thread = threading.Thread(target=start_later)
    thread.start()
    try:
        command = f'touch started; setsid -f env -i python3 -c "{LATE}"; sleep 0.5'
        assert ToolBox(root).run("Bash", {"command": command}).status == "success"
        thread.join()
        time.sleep(0.2)
        assert before.poll() is None and _alive(before.pid)
        assert during[0].poll() is None and _alive(during[0].pid)
    finally:
        for process in [before, *during]:
            process.kill()
            process.wait()


def test_one_call_does_not_end_a_detached_process_of_another_call(tmp_path: Path) -> None:
    root = _workspace(tmp_path / "ws")
    toolbox = ToolBox(root)
    long_command = (
        "setsid -f env -i sh -c 'echo $$ > daemon.pid; exec sleep 30'; sleep 1; "
        "kill -0 $(cat daemon.pid) && echo still-running"
    )
    results: list[object] = []
    long_call = threading.Thread(
        target=lambda: results.append(toolbox.run("Bash", {"command": long_command}))
    )
    long_call.start()
    deadline = time.monotonic() + 10
    while not (root / "daemon.pid").exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert toolbox.run("Bash", {"command": "true"}).status == "success"
    long_call.join()
    [outcome] = results
    assert getattr(outcome, "output", None) == "still-running\n"
    assert not _alive(int((root / "daemon.pid").read_text()))


def test_no_supervisor_orphan_or_zombie_is_left_behind(tmp_path: Path) -> None:
    me = os.getpid()
    children = {p.pid for p in processes().values() if p.ppid == me}
    root = _workspace(tmp_path / "ws")
    command = f'setsid -f env -i python3 -c "{LATE}"; sleep 0.3'
    assert ToolBox(root).run("Bash", {"command": command}).status == "success"
    assert {p.pid for p in processes().values() if p.ppid == me} <= children


def test_off_linux_the_group_kill_alone_still_runs_the_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(shell, "contained", lambda: False)
    outcome = ToolBox(_workspace(tmp_path / "ws")).run("Bash", {"command": "echo $$; exit 0"})
    assert outcome.status == "success" and outcome.output.strip().isdigit()


def test_a_caller_that_cannot_be_a_subreaper_runs_no_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(descendants, "_hold_subreaper", lambda: False)
    root = _workspace(tmp_path / "ws")
    outcome = ToolBox(root).run("Bash", {"command": "touch ran"})
    assert outcome.error_message is not None
    assert outcome.error_message.startswith(
        f"Bash: cannot start {shell.BASH}: cannot become a child subreaper: "
    )
    assert not (root / "ran").exists()


def test_the_caller_is_a_subreaper_only_while_a_call_is_in_flight() -> None:
    assert not supervisor.is_subreaper()
    handle = descendants.Supervisor(["true"], 0.0)
    seen: list[bool] = []

    def start() -> subprocess.Popen[bytes]:
        seen.append(supervisor.is_subreaper())
        return subprocess.Popen(handle.argv, pass_fds=handle.pass_fds, start_new_session=True)

    process = handle.launch(start)
    process.wait()
    assert handle.finish(process.returncode) == 0
    assert seen == [True]
    assert not supervisor.is_subreaper()


def test_a_caller_that_was_a_subreaper_stays_one(tmp_path: Path) -> None:
    root = _workspace(tmp_path / "ws")
    assert supervisor.become_subreaper()
    try:
        descendants._holders[:] = [0, 0, 0]  # as in a fresh process
        outcome = ToolBox(root).run("Bash", {"command": "true"})
        assert outcome.error_message is None, outcome.error_message
        assert supervisor.is_subreaper()
    finally:
        supervisor.become_subreaper(False)
        descendants._holders[:] = [0, 0, 0]


def test_the_supervisor_starts_with_few_imports() -> None:
    folder = str(Path(supervisor.__file__).parent)
    listing = subprocess.run(
        [
            sys.executable, "-I", "-S", "-c",
            "import sys; sys.path.append(sys.argv[1]); import supervisor; "
            "print(sorted(sys.modules))",
            folder,
        ],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    for heavy in ("'signal'", "'threading'", "'enum'", "'pytest_harness_audit'"):
        assert heavy not in listing
