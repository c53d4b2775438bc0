"""Run README's five-minute tutorial verbatim with an installed copy and compare its output.

    python scripts/run_tutorial.py VENV_BIN

In a fresh directory, with the ``pytest`` of ``VENV_BIN`` (a clean virtualenv the package was
installed into): step 2's test, run as step 3 says, fails with the documented message; with the
markers step 4 names, it passes and prints the documented summary. Exit 0 when both outputs
match, 1 (naming the first missing line) otherwise.
"""

from __future__ import annotations

import fnmatch
import importlib
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
#: The documentation's block finder the README tests use (tests/readme_snippets.py).
find_block: Any = importlib.import_module("readme_snippets").find_block


def pattern(line: str) -> str:
    """A documented line as an fnmatch pattern: hex ids and runs of spaces are free."""
    escaped = re.sub(r"[\[\]?*]", lambda m: "[" + m.group(0) + "]", line.strip())
    escaped = re.sub(r"\b[0-9a-f]{8,64}\b", "*", escaped)
    return "*" + re.sub(r"\s+", "*", escaped) + "*"


def first_missing(documented: str, output: str) -> str | None:
    """The first documented line the output does not have, in order (``None``: all there)."""
    lines = output.splitlines()
    position = 0
    for wanted in documented.splitlines():
        if not wanted.strip():
            continue
        while position < len(lines) and not fnmatch.fnmatch(lines[position], pattern(wanted)):
            position += 1
        if position == len(lines):
            return wanted
        position += 1
    return None


def run(pytest: Path, directory: Path, source: str) -> str:
    (directory / "test_agent.py").write_text(source, encoding="utf-8")
    done = subprocess.run(
        [str(pytest), "--harness-audit", "-p", "no:cacheprovider", "test_agent.py"],
        cwd=directory,
        capture_output=True,
        text=True,
        check=False,
    )
    return done.stdout + done.stderr


def main(venv_bin: str) -> int:
    pytest = Path(venv_bin).resolve() / "pytest"
    test = find_block("python", "def test_agent_tidies_up").text
    fixed = test.replace(
        '@pytest.mark.expect_verdict("PASS")',
        '@pytest.mark.expect_verdict("FAIL")\n'
        '@pytest.mark.expect_denied(tool="Read", target="**/.env")',
    )
    steps = [
        ("step 3: the failure", test, find_block("text", "AssertionError: session test_agent")),
        ("step 4: the summary", fixed, find_block("text", "harness audit ===")),
    ]
    for name, source, documented in steps:
        with tempfile.TemporaryDirectory() as directory:
            output = run(pytest, Path(directory), source)
        missing = first_missing(documented.text, output)
        if missing is not None:
            print(f"tutorial {name}: the output lacks the documented line {missing!r}")
            print(output)
            return 1
        print(f"tutorial {name}: as documented")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
