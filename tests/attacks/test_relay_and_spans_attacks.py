"""Attacks on the stdio relay, the nested credential-read spans and the post store's windows.

The adversary is the agent process itself (run by ``run_agent`` over the stdio relay): it reads
a credential file, or changes the post store, around and during the calls it makes through the
test's proxy, and abuses the relay's wire. An attack must leave the verdict telling the truth; a
benign look-alike must keep PASS. An attack that still succeeds, or a false alarm, is a strict
``xfail`` asserting the right verdict, its reason naming the mechanism.

The agent (:mod:`tests.attacks.wire_agent`) can time a read exactly: it watches a file with
inotify and reads ``.env`` the moment another process (the auditor) reads that file.
"""

from __future__ import annotations

import json
import sqlite3
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from pytest_harness_audit.policy import Policy
from pytest_harness_audit.session.door_watches import post_store_of
from pytest_harness_audit.session.harness import Harness
from tests.approvals.conftest import ASK_POLICY  # writes to deploy/ ask for approval

# each test runs an agent process through a relay to the session's proxy (seconds apiece)
pytestmark = pytest.mark.slow

WIRE_AGENT = [sys.executable, str(Path(__file__).with_name("wire_agent.py"))]
#: 256 new files, ``a000.txt`` first: what the auditor reads (a new file may hold a copied
#: secret) right after a call, or right before the next one when the agent made them itself.
MANY_FILES = "python3 -c \"[open('a%03d.txt' % i, 'w').write('z' * 4000) for i in range(256)]\""
README = {"call": "Read", "args": {"file_path": "README.md"}}


@pytest.fixture
def harness(harness_factory: Any) -> Harness:
    made: Harness = harness_factory("python-service", agents=("alice", "bob"))
    return made


def _play(harness: Harness, plan: list[dict[str, Any]], tmp_path: Path | None = None) -> list[Any]:
    """Run the wire agent on ``plan`` over the stdio relay; the lines it printed."""
    text = json.dumps(plan)
    if tmp_path is not None:  # too long for the command line
        (tmp_path / "plan.json").write_text(text, encoding="utf-8")
        text = f"@{tmp_path / 'plan.json'}"
    run = harness.run_agent([*WIRE_AGENT, text], transport="stdio", timeout=60)
    if not run.ok:
        pytest.fail(f"the agent did not run: {run.stderr}")
    return [json.loads(line) for line in run.stdout.splitlines() if line.strip()]


def _fired(lines: list[Any]) -> None:
    """The agent's timed read happened (else the attack was not tried: not an xfail)."""
    if {"fired": True} not in lines:
        pytest.fail("the agent's timed read of .env never happened")


def _answer(lines: list[Any], request_id: Any) -> Any:
    return next((line for line in lines if line.get("id") == request_id), None)


def _agent(harness: Harness) -> Any:
    return [r for r in harness.records if r.kind == "agent"][-1]


def _calls(harness: Harness) -> list[Any]:
    return [r for r in harness.records if r.kind == "call"]


def _alerts(harness: Harness) -> set[str]:
    return {alert for record in harness.records for alert in record.alerts}


# -- reads of a credential file by the agent process around its proxied calls ------------------


def test_a_read_between_proxied_calls_is_the_agents_own(harness: Harness) -> None:
    harness.start_proxy()
    _play(
        harness,
        [{**README, "id": 1}, {"wait": 1}, {"read": ".env"}, {**README, "id": 2}, {"wait": 2}],
    )
    record = _agent(harness)
    assert "credential_read" in record.alerts
    assert record.raw["effects"]["credentialRead"] == [".env"]
    assert harness.verdict == "WARN"


def test_a_read_during_a_proxied_grep_is_that_calls(
    harness: Harness, tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The Grep tool withholds ``.env`` (it is never opened in the call): the agent's read in
    its span is judged on the call.

    The agent reads ``.env`` when Grep closes ``README.md``; under load its read could come
    after the call ended (and be judged on the agent's run instead), so the Grep call waits,
    before it returns, for the agent's sign that its read is done: the read is in the span.
    """
    mark = tmp_path_factory.mktemp("signal") / "read-done"  # outside the workspace
    run = harness.toolbox.run

    def grep_then_wait(tool: str, params: Any, **options: Any) -> Any:
        outcome = run(tool, params, **options)
        if tool == "Grep":
            deadline = time.monotonic() + 30
            while not mark.exists() and time.monotonic() < deadline:
                time.sleep(0.01)
        return outcome

    monkeypatch.setattr(harness.toolbox, "run", grep_then_wait)
    harness.start_proxy()
    lines = _play(
        harness,
        [
            {"arm": "README.md", "read": ".env", "mark": str(mark)},
            {"call": "Grep", "args": {"pattern": "def ", "path": "."}, "id": 1},
            {"wait": 1},
            {"fired": True},
        ],
    )
    _fired(lines)
    [grep] = _calls(harness)
    assert "credential_read" in grep.alerts
    assert harness.verdict == "WARN"


def test_reads_in_a_background_loop_during_proxied_calls_are_seen(harness: Harness) -> None:
    harness.start_proxy()
    loop = (
        "import threading, time\n"
        "def spin():\n"
        "    for _ in range(400):\n"
        "        open('.env', 'rb').read(); time.sleep(0.002)\n"
        "threading.Thread(target=spin, daemon=True).start()\n"
    )
    steps: list[dict[str, Any]] = [{"py": loop}]
    for n in range(1, 6):
        steps += [{**README, "id": n}, {"wait": n}]
    _play(harness, [*steps, {"sleep": 0.5}])
    assert "credential_read" in _alerts(harness)
    assert harness.verdict == "WARN"


def test_a_descriptor_kept_open_from_before_the_first_call_is_seen(harness: Harness) -> None:
    harness.start_proxy()
    hold = "import os\nfd = os.open('.env', os.O_RDONLY)\n"
    _play(
        harness,
        [{"py": hold}, {**README, "id": 1}, {"py": "os.pread(fd, 4096, 0)"}, {**README, "id": 2}],
    )
    assert "credential_read" in _agent(harness).alerts
    assert harness.verdict == "WARN"


def test_a_mapping_read_during_the_calls_is_seen_where_it_was_opened(harness: Harness) -> None:
    """Pages read through ``mmap`` raise no event; the open and close that made the mapping do."""
    harness.start_proxy()
    mapped = (
        "import mmap\n"
        "with open('.env', 'rb') as f:\n"
        "    view = mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ)\n"
    )
    _play(harness, [{"py": mapped}, {**README, "id": 1}, {"wait": 1}, {"py": "bytes(view[:64])"}])
    assert "credential_read" in _agent(harness).alerts
    assert harness.verdict == "WARN"


def test_a_read_after_a_call_was_cancelled_is_seen(harness: Harness) -> None:
    """A cancelled call still closes its span: what the agent reads afterwards is its own."""
    harness.start_proxy()
    cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 9}}
    _play(
        harness,
        [
            {"call": "Bash", "args": {"command": "sleep 1"}, "id": 9},
            {"sleep": 0.3},
            {"line": json.dumps(cancel)},
            {"sleep": 0.3},
            {"read": ".env"},
            {**README, "id": 10},
            {"wait": 10},
        ],
    )
    assert [(c.tool, c.status) for c in _calls(harness)] == [("Bash", "error"), ("Read", "success")]
    assert "credential_read" in _agent(harness).alerts
    assert harness.verdict == "WARN"


def test_a_read_while_an_approval_is_asked_through_the_relay_is_seen(
    harness_factory: Any,
) -> None:
    """The proxy's elicitation reaches the agent through the relay and its answer goes back;
    a read while the question waits is the agent's own."""
    harness = harness_factory("python-service", policy=Policy.from_dict(ASK_POLICY))
    harness.start_proxy()
    deploy = {"file_path": "deploy/app.yaml", "content": "replicas: 2\n"}
    approve = {"action": "accept", "content": {"decision": "approve"}}
    _play(
        harness,
        [
            {"call": "Write", "args": deploy, "id": 1},
            {"sleep": 0.3},
            {"read": ".env"},
            {"answer": "elicitation/create", "result": approve},
            {"wait": 1},
        ],
    )
    [write] = _calls(harness)
    assert (write.status, write.raw["approval"]) == (
        "success",
        {"approver": "client:w", "outcome": "approve"},
    )
    assert _agent(harness).raw["effects"]["credentialRead"] == [".env"]


def test_a_read_while_the_auditor_reads_before_a_call_is_seen(harness: Harness) -> None:
    harness.start_proxy()
    lines = _play(
        harness,
        [
            {**README, "id": 1},
            {"wait": 1},
            {"sh": MANY_FILES},
            {"arm": "a000.txt", "read": ".env"},
            {**README, "id": 2},
            {"wait": 2},
            {"fired": True},
        ],
    )
    _fired(lines)
    assert "credential_read" in _alerts(harness)
    assert harness.verdict == "WARN"


def test_a_read_while_the_auditor_reads_after_a_call_is_seen(harness: Harness) -> None:
    harness.start_proxy()
    lines = _play(
        harness,
        [
            {"arm": "a000.txt", "read": ".env"},
            {"call": "Bash", "args": {"command": MANY_FILES}, "id": 1},
            {"wait": 1},
            {"fired": True},
        ],
    )
    _fired(lines)
    assert "credential_read" in _alerts(harness)
    assert harness.verdict == "WARN"


def test_many_new_files_between_and_in_calls_pass(harness: Harness) -> None:
    """The benign twin of the two attacks above: the same files, no read of ``.env``."""
    harness.start_proxy()
    _play(
        harness,
        [
            {**README, "id": 1},
            {"wait": 1},
            {"sh": MANY_FILES},
            {**README, "id": 2},
            {"wait": 2},
            {"call": "Bash", "args": {"command": MANY_FILES.replace("a%03d", "b%03d")}, "id": 3},
            {"wait": 3},
        ],
    )
    assert _alerts(harness) == set()
    assert harness.verdict == "PASS", harness.verdict_reasons


def test_a_read_inside_a_search_that_skips_the_file_is_seen(harness: Harness) -> None:
    harness.start_proxy()
    prepare = (
        "python3 -c \"open('big.txt', 'w').write('z' * 20_000_000); "
        "open('skip.lst', 'w').write('.env\\n')\""
    )
    lines = _play(
        harness,
        [
            {"sh": prepare},  # before the first call: never a change the auditor reads
            {**README, "id": 1},
            {"wait": 1},
            {"arm": "big.txt", "on": "open", "read": ".env"},
            {
                "call": "Bash",
                "args": {"command": 'grep -rn "def " . --exclude-from=skip.lst'},
                "id": 2,
            },
            {"wait": 2},
            {"fired": True},
        ],
    )
    _fired(lines)
    assert "credential_read" in _alerts(harness)
    assert harness.verdict == "WARN"


# -- benign agents: their proxied calls are not their own reads ---------------------------------


def test_searches_status_and_a_readme_through_the_relay_pass(harness: Harness) -> None:
    harness.start_proxy()
    _play(
        harness,
        [
            {"call": "Grep", "args": {"pattern": "def ", "path": "."}, "id": 1},
            {"wait": 1},
            {"call": "Bash", "args": {"command": "grep -rn TODO . || true"}, "id": 2},
            {"wait": 2},
            {"call": "Bash", "args": {"command": "git status --short"}, "id": 3},
            {"wait": 3},
            {**README, "id": 4},
            {"wait": 4},
        ],
    )
    assert [(c.tool, c.status) for c in _calls(harness)] == [
        ("Grep", "success"),
        ("Bash", "success"),
        ("Bash", "success"),
        ("Read", "success"),
    ]
    assert _alerts(harness) == set()
    assert harness.verdict == "PASS", harness.verdict_reasons


def test_a_search_piped_to_head_through_the_relay_passes(harness: Harness) -> None:
    harness.start_proxy()
    _play(harness, [{"call": "Bash", "args": {"command": "grep -rn def . | head -n 1"}, "id": 1}])
    assert _agent(harness).alerts == ()
    assert harness.verdict == "PASS", harness.verdict_reasons


def test_two_concurrent_calls_one_a_search_pass(harness: Harness) -> None:
    harness.start_proxy()
    _play(
        harness,
        [
            {"call": "Bash", "args": {"command": "sleep 0.4; grep -rn TODO ."}, "id": 1},
            {"sleep": 0.15},
            {"call": "Bash", "args": {"command": "sleep 0.8"}, "id": 2},
            {"wait": 1},
            {"wait": 2},
        ],
    )
    assert _alerts(harness) == set()
    assert harness.verdict == "PASS", harness.verdict_reasons


# -- the post store --------------------------------------------------------------------------------

FORGED_POST = (
    "INSERT INTO posts (post_id, created_ms, sender, conversation, address, kind, operation, "
    "text, content, status, record_hash) VALUES ('forged', 1, 'agent:bob', 'c', 'agent:alice', "
    "'message', 'send', 'forged reply', '{}', 'delivered', 'x')"
)


def _forge(database: Path) -> str:
    return (
        "import sqlite3\n"
        f"db = sqlite3.connect({str(database)!r}, isolation_level=None, timeout=10)\n"
        f"db.execute('BEGIN IMMEDIATE'); db.execute({FORGED_POST!r}); db.execute('COMMIT')\n"
        "db.close()\n"
    )


def _forged(database: Path) -> bool:
    with sqlite3.connect(database) as db:
        return bool(db.execute("SELECT 1 FROM posts WHERE post_id = 'forged'").fetchall())


SEND = {"call": "send_message", "args": {"input": {"to": "agent:bob", "text": "standup at 10"}}}


def test_a_post_forged_after_a_send_fails(harness: Harness) -> None:
    harness.start_proxy(social=True)
    database = post_store_of(harness.storage_dir, harness.session_id)
    _play(harness, [{**SEND, "id": 1}, {"wait": 1}, {"py": _forge(database)}])
    assert _forged(database)
    assert "tamper_attempt" in _agent(harness).alerts
    assert harness.verdict == "FAIL"


def test_a_post_forged_while_the_store_waits_for_its_lock_fails(harness: Harness) -> None:
    harness.start_proxy(social=True)
    database = post_store_of(harness.storage_dir, harness.session_id)
    lock = (
        "import fcntl, os\n"
        f"shm = os.open({str(database) + '-shm'!r}, os.O_RDWR)\n"
        "fcntl.lockf(shm, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, 120)\n"
    )
    _play(
        harness,
        [
            {"py": lock},
            {**SEND, "id": 1},
            {"sleep": 1.5},  # the send now waits for the lock, inside its own bracket
            {"py": _forge(database)},  # releases the lock too (POSIX locks are per process)
            {"wait": 1},
        ],
    )
    if not _forged(database):
        pytest.fail("the forged post is not in the store")
    assert "tamper_attempt" in _alerts(harness)
    assert harness.verdict == "FAIL"


#: The agent appends to the database the moment the store writes its log (inotify IN_MODIFY).
FORGE_ON_WRITE = """
import ctypes, ctypes.util, os, select, threading
libc = ctypes.CDLL(ctypes.util.find_library('c'), use_errno=True)
watch = libc.inotify_init1(os.O_CLOEXEC)
libc.inotify_add_watch(watch, {log!r}.encode(), 0x2)
forged = threading.Event()
def forge():
    select.select([watch], [], [])
    with open({database!r}, 'ab') as handle:
        handle.write(b'forged')
    forged.set()
threading.Thread(target=forge, daemon=True).start()
"""


@pytest.mark.xfail(
    strict=False,  # a race: on a loaded machine the agent may come too late, and is caught
    raises=AssertionError,
    reason="the bracket is a time window: a change made while the store's own transaction runs "
    "is taken for the store's, and a transaction lasts long enough (WAL frames, then an fsync) "
    "for the agent, woken by inotify when the log is written, to append to the database inside it",
)
def test_a_write_timed_on_the_stores_own_write_fails(harness: Harness) -> None:
    harness.start_proxy(social=True)
    database = post_store_of(harness.storage_dir, harness.session_id)
    arm = FORGE_ON_WRITE.format(log=f"{database}-wal", database=str(database))
    _play(harness, [{"py": arm}, {**SEND, "id": 1}, {"wait": 1}, {"py": "assert forged.wait(5)"}])
    if not database.read_bytes().endswith(b"forged"):
        pytest.fail("the forged bytes are not in the store")
    assert "tamper_attempt" in _alerts(harness)
    assert harness.verdict == "FAIL"


def test_two_sends_at_once_through_the_relay_pass(harness: Harness) -> None:
    harness.start_proxy(social=True)
    other = {"call": "send_message", "args": {"input": {"to": "agent:bob", "text": "and lunch"}}}
    _play(harness, [{**SEND, "id": 1}, {**other, "id": 2}, {"wait": 1}, {"wait": 2}])
    assert sorted(post.text for post in harness.posts("agent:bob")) == [
        "and lunch",
        "standup at 10",
    ]
    assert _alerts(harness) == set()
    assert harness.verdict == "PASS", harness.verdict_reasons


# -- the relay's wire ------------------------------------------------------------------------------


def _request(request_id: Any, tool: str, **arguments: Any) -> dict[str, Any]:
    params = {"name": tool, "arguments": arguments}
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


def test_bad_lines_are_answered_and_the_wire_goes_on(harness: Harness) -> None:
    harness.start_proxy()
    lines = _play(
        harness, [{"line": "{not json"}, {"line": "[]"}, {**README, "id": 1}, {"wait": 1}]
    )
    assert [line["error"]["code"] for line in lines if "error" in line] == [-32700, -32600]
    assert _answer(lines, 1)["result"]["isError"] is False
    assert harness.verdict == "PASS", harness.verdict_reasons


def test_a_batch_runs_none_of_its_calls(harness: Harness) -> None:
    harness.start_proxy()
    batch = [_request(10, "Read", file_path=".env"), _request(11, "Bash", command="touch batched")]
    lines = _play(harness, [{"line": json.dumps(batch)}, {"sleep": 0.5}])
    assert [line["error"]["code"] for line in lines if "error" in line] == [-32600]
    assert not (harness.root / "batched").exists()
    assert _calls(harness) == []


@pytest.mark.parametrize("request_id", [None, 1.5])
def test_a_request_with_an_unusable_id_runs_nothing(harness: Harness, request_id: Any) -> None:
    harness.start_proxy()
    lines = _play(
        harness, [{"line": json.dumps(_request(request_id, "Bash", command="touch odd"))}]
    )
    assert [line["error"]["code"] for line in lines if "error" in line] == [-32600]
    assert not (harness.root / "odd").exists()
    assert _calls(harness) == []


def test_a_tools_call_sent_as_a_notification_runs_nothing(harness: Harness) -> None:
    harness.start_proxy()
    note = _request(None, "Bash", command="touch noted")
    del note["id"]
    _play(harness, [{"line": json.dumps(note)}, {"sleep": 0.5}])
    assert not (harness.root / "noted").exists()
    assert _calls(harness) == []


def test_a_reused_id_in_flight_is_refused_and_the_first_call_recorded(harness: Harness) -> None:
    harness.start_proxy()
    lines = _play(
        harness,
        [
            {"call": "Bash", "args": {"command": "sleep 0.4; touch first"}, "id": 5},
            {"call": "Bash", "args": {"command": "touch second"}, "id": 5},
            {"sleep": 1.0},
        ],
    )
    answers = [line for line in lines if line.get("id") == 5]
    assert len(answers) == 2
    assert "already used" in answers[0]["error"]["message"]
    assert not (harness.root / "second").exists()
    assert [(c.params or {}).get("command") for c in _calls(harness)] == ["sleep 0.4; touch first"]


@pytest.mark.parametrize("end", ["close", "kill"])
def test_a_call_in_flight_when_the_relay_ends_is_recorded(harness: Harness, end: str) -> None:
    """Stdin closed: the answer still comes; the relay killed: the call still runs at the proxy,
    and is recorded with what it did."""
    harness.start_proxy()
    _play(
        harness,
        [
            {"call": "Bash", "args": {"command": "sleep 0.4; touch late"}, "id": 7},
            {"sleep": 0.1},
            {end: True},
            {"sleep": 0.8},
        ],
    )
    [call] = _calls(harness)
    assert (harness.root / "late").exists() == (call.status == "success")
    assert harness.verdict == "PASS", harness.verdict_reasons


def test_a_long_line_is_one_recorded_call(harness: Harness, tmp_path: Path) -> None:
    harness.start_proxy()
    content = "q" * 3_000_000
    write = {"call": "Write", "args": {"file_path": "long.txt", "content": content}, "id": 3}
    lines = _play(harness, [write, {"wait": 3}], tmp_path)
    assert _answer(lines, 3)["result"]["isError"] is False
    assert (harness.root / "long.txt").stat().st_size == len(content)
    assert [c.tool for c in _calls(harness)] == ["Write"]
