"""An agent that drives its MCP server's stdio wire line by line (``python wire_agent.py PLAN``).

It starts the first server of the config named by ``HARNESS_AUDIT_MCP_CONFIG`` (a stdio entry:
the relay to the test's proxy), initializes, and plays ``PLAN`` (a JSON list of steps, or
``@FILE`` holding one):

* ``{"call": TOOL, "args": {...}, "id": N}``: a ``tools/call`` (not awaited);
* ``{"wait": N}``: wait for the answer to request ``N``;
* ``{"line": TEXT}``: write ``TEXT`` and a newline as is;
* ``{"read": PATH, "times": K, "every": S}``: read a file ``K`` times, ``S`` seconds apart;
* ``{"sh": TEXT}``: run a shell command and wait for it;
* ``{"arm": NAME, "read": PATH}``: from now on, as soon as another process reads the file
  ``NAME`` (closes it unwritten, seen by inotify; opens it, with ``"on": "open"``), read
  ``PATH`` once (then create the file ``"mark"``, an absolute path, when given: the signal a
  test can wait for);
  ``{"fired": true}`` waits until it did (and prints whether it did);
* ``{"answer": METHOD, "result": {...}}``: wait for the server's request ``METHOD`` (an
  elicitation, say) and answer it with ``result``;
* ``{"py": CODE}``: run Python code (the steps' code shares one namespace);
* ``{"sleep": S}``, ``{"close": true}`` (end stdin), ``{"kill": true}`` (kill the server).

Every line the server wrote is printed as one JSON line at the end. Exit status 0.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import json
import os
import select
import struct
import subprocess
import sys
import threading
import time
from typing import Any


def _server() -> subprocess.Popen[bytes]:
    with open(os.environ["HARNESS_AUDIT_MCP_CONFIG"], encoding="utf-8") as config:
        entry = next(iter(json.load(config)["mcpServers"].values()))
    env = {**os.environ, **{str(k): str(v) for k, v in (entry.get("env") or {}).items()}}
    return subprocess.Popen(
        [entry["command"], *entry.get("args", [])],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env=env,
    )


_IN_CLOSE_NOWRITE = 0x10
_IN_OPEN = 0x20


def _arm(
    name: str, path: str, done: threading.Event, mask: int = _IN_CLOSE_NOWRITE, mark: str = ""
) -> None:
    """Read ``path`` as soon as another process closes ``name`` (read only; or opens it, with
    ``mask`` ``IN_OPEN``); then create the file ``mark`` (when given) and set ``done``."""
    libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    fd = libc.inotify_init1(os.O_CLOEXEC)
    folder, name = os.path.split(name)
    libc.inotify_add_watch(fd, (folder or ".").encode(), mask)

    def watch() -> None:
        while True:
            select.select([fd], [], [])
            data = os.read(fd, 65536)
            names = []
            while data:
                _wd, _mask, _cookie, size = struct.unpack_from("iIII", data)
                names.append(data[16 : 16 + size].rstrip(b"\0").decode())
                data = data[16 + size :]
            if name in names:
                break
        with open(path, "rb") as secret:
            secret.read()
        if mark:
            with open(mark, "w", encoding="utf-8"):
                pass
        done.set()
        os.close(fd)

    threading.Thread(target=watch, daemon=True).start()


def _asks(message: Any, method: str) -> bool:
    return isinstance(message, dict) and message.get("method") == method and "id" in message


def main() -> int:
    """Play the plan of ``sys.argv[1]``."""
    text = sys.argv[1]
    if text.startswith("@"):  # a plan too long for the command line
        with open(text[1:], encoding="utf-8") as plan_file:
            text = plan_file.read()
    plan: list[dict[str, Any]] = json.loads(text)
    server = _server()
    assert server.stdin is not None and server.stdout is not None
    answers: dict[Any, Any] = {}
    lines: list[Any] = []
    arrived = threading.Condition()

    def pump() -> None:
        assert server.stdout is not None
        for raw in server.stdout:
            try:
                message: Any = json.loads(raw)
            except ValueError:
                message = {"unparsed": raw.decode("utf-8", "replace")}
            with arrived:
                lines.append(message)
                if isinstance(message, dict) and "id" in message and "method" not in message:
                    answers.setdefault(message["id"], message)
                arrived.notify_all()

    threading.Thread(target=pump, daemon=True).start()

    def send(message: Any) -> None:
        assert server.stdin is not None
        text = message if isinstance(message, str) else json.dumps(message)
        server.stdin.write(text.encode("utf-8") + b"\n")
        server.stdin.flush()

    def wait(request_id: Any, timeout: float = 30.0) -> Any:
        with arrived:
            arrived.wait_for(lambda: request_id in answers, timeout)
            return answers.get(request_id)

    def asked(method: str, timeout: float = 30.0) -> Any:
        with arrived:
            arrived.wait_for(lambda: any(_asks(m, method) for m in lines), timeout)
            return next((m for m in lines if _asks(m, method)), None)

    hello = {
        "protocolVersion": "2025-06-18",
        "capabilities": {"elicitation": {}},
        "clientInfo": {"name": "w", "version": "1"},
    }
    send({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": hello})
    wait("init")
    send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    send({"jsonrpc": "2.0", "id": "list", "method": "tools/list"})
    tools = [t["name"] for t in (wait("list") or {}).get("result", {}).get("tools", [])]

    def name(tool: str) -> str:
        found = [t for t in tools if t == tool or t.endswith(f"__{tool}")]
        return found[0] if found else tool

    fired = threading.Event()
    namespace: dict[str, Any] = {}
    for step in plan:
        if "py" in step:
            exec(step["py"], namespace)
        elif "arm" in step:
            _arm(
                step["arm"],
                step["read"],
                fired,
                _IN_OPEN if step.get("on") == "open" else _IN_CLOSE_NOWRITE,
                step.get("mark", ""),
            )
        elif "fired" in step:
            lines.append({"fired": fired.wait(30)})
        elif "call" in step:
            params = {"name": name(step["call"]), "arguments": step.get("args", {})}
            send({"jsonrpc": "2.0", "id": step["id"], "method": "tools/call", "params": params})
        elif "wait" in step:
            wait(step["wait"])
        elif "answer" in step:
            request = asked(step["answer"])
            if request is not None:
                send({"jsonrpc": "2.0", "id": request["id"], "result": step["result"]})
        elif "line" in step:
            send(step["line"])
        elif "read" in step:
            for _ in range(step.get("times", 1)):
                with open(step["read"], "rb") as secret:
                    secret.read()
                time.sleep(step.get("every", 0.0))
        elif "sh" in step:
            subprocess.run(step["sh"], shell=True, check=False)
        elif "sleep" in step:
            time.sleep(step["sleep"])
        elif "close" in step:
            server.stdin.close()
            server.wait(30)
        elif "kill" in step:
            server.kill()
            server.wait(30)
    time.sleep(0.1)
    with arrived:
        for message in lines:
            print(json.dumps(message), flush=True)
    if server.poll() is None:
        server.stdin.close()
        server.wait(30)
    return 0


if __name__ == "__main__":
    sys.exit(main())
