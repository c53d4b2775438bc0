"""Programs that run a command or write a file named in their own options or program text,
judged as that command or write: awk's ``print … | "sh"``, ``CMD | getline`` and ``system``
of a variable, sed's ``s/.*/CMD/e``, Tcl's ``file delete``, a compiler's ``-o`` onto a persona
file, ``redis-cli --rdb``, ``rsync --rsync-path``, a SQL client's known output piped into a
shell (ClickHouse's, a ``psql -f`` file's). Their ordinary use keeps its verdict."""

from __future__ import annotations

from pathlib import Path

import pytest
from policy_support import safety_in, secret_workspace

DESTROY = ("deny", "deny-destructive-commands")
HOOK = ("deny", "deny-exec-config-write")
SECRET = ("deny", "deny-secret-files")
UNREADABLE = ("warn", "unreadable-command")
NETWORK = ("warn", "warn-network")
DELETE = ("warn", "warn-file-delete")
STARTUP = ("warn", "warn-startup-write")
ALLOW = ("allow", None)


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return secret_workspace(
        tmp_path_factory.mktemp("runs"),
        {
            "app/service.py": "print(1)\n",
            "cmds.txt": "rm -rf app\n",
            "f": "a b\n",
            "file": "a\n",
            "x.c": "int main(void) { return 0; }\n",
            "q.sql": "select 'rm -rf app';\n",
            "list.sql": "select name from users;\n",
            "x.tcl": "file delete -force app\n",
            "hook.tcl": "set f [open .git/hooks/pre-commit w]\nputs $f {#!/bin/sh}\nclose $f\n",
            "build.tcl": "puts hello\nfile mkdir build\n",
            "SOUL.md": "me\n",
        },
        ("app", ".git/hooks", "src", "dst"),
    )


@pytest.mark.parametrize(
    ("command", "decision"),
    [
        # awk hands a command the text it prints, or runs one a variable names
        ('awk \'BEGIN{print "rm -rf app" | "sh"}\'', DESTROY),
        ('awk \'BEGIN{printf "rm -rf app\\n" | "bash"}\'', DESTROY),
        ('awk \'BEGIN{print "rm -rf app" |& "sh"}\'', DESTROY),
        ("awk '{print | \"sh\"}' cmds.txt", DESTROY),
        ("awk '{print $0 | \"sh\"}' cmds.txt", DESTROY),
        ("awk '/^rm/ {print | \"sh\"}' cmds.txt", DESTROY),
        ("echo 'rm -rf app' | awk '{print | \"sh\"}'", DESTROY),
        ("awk '{system($0)}' cmds.txt", DESTROY),
        ("awk 'BEGIN{cmd=\"rm -rf app\"; cmd | getline}'", DESTROY),
        ("gawk 'BEGIN{cmd=\"rm -rf app\"; system(cmd)}'", DESTROY),
        ("awk -v c='rm -rf app' 'BEGIN{system(c)}'", DESTROY),
        ('awk \'BEGIN{c="sh"; print "rm -rf app" | c}\'', DESTROY),
        ('awk \'BEGIN{print "cat .env" | "sh"}\'', SECRET),
        ('awk \'BEGIN{printf "%s %s\\n", "rm -rf", "app" | "sh"}\'', DESTROY),
        # what awk pipes in or runs is made at run time: unreadable
        ("awk -v RS=X '{print | \"sh\"}' cmds.txt", UNREADABLE),
        ('awk \'BEGIN{RS="X"} {print | "sh"}\' cmds.txt', UNREADABLE),
        ("awk 'END{print | \"sh\"}' cmds.txt", UNREADABLE),
        ('awk \'BEGIN{printf "%d\\n", 3 | "sh"}\'', UNREADABLE),
        ("awk '{print $1 | \"sh\"}' cmds.txt", UNREADABLE),
        ('awk \'{sub(/x/, "y"); print | "sh"}\' cmds.txt', UNREADABLE),
        ("awk '{ $0 | getline }' cmds.txt", UNREADABLE),
        ("awk '{c = $1; c | getline}' cmds.txt", UNREADABLE),
        ("awk '{print \"x\" | $1}' cmds.txt", UNREADABLE),
        # GNU sed runs a substitution's whole-line result
        ("sed 's/.*/rm -rf app/e' file", DESTROY),
        ("sed 's|^.*$|rm -rf app|e' file", DESTROY),
        ("sed -E 's/^(.*)$/rm -rf app/e' file", DESTROY),
        ("sed 's/^/rm -rf /e' file", DESTROY),
        ("sed 's/.*/cp x.c .git\\/hooks\\/pre-commit/e' file", HOOK),
        ("sed 's/a/rm -rf app/e' file", UNREADABLE),
        ("sed 's/.*/echo &/e' file", UNREADABLE),
        # Tcl's own file commands
        ("echo 'file delete -force app' | tclsh", DESTROY),
        ("tclsh x.tcl", DESTROY),
        ("expect -c 'file delete -force app'", DESTROY),
        ("echo 'if {1} {file delete -force app}' | tclsh", DESTROY),
        ("echo 'file rename -force x.c SOUL.md' | tclsh", DESTROY),
        ("echo 'file copy x.c .git/hooks/pre-commit' | tclsh", HOOK),
        ("echo 'file link -symbolic .git/hooks/pre-commit x.c' | tclsh", HOOK),
        ("echo 'set f [open SOUL.md w]; puts $f x' | tclsh", DESTROY),
        ("tclsh hook.tcl", HOOK),
        ("echo 'file delete app/service.py' | tclsh", DELETE),
        ("python3 gen.py | tclsh", UNREADABLE),
        ("echo 'set c \"file delete -force app\"; eval $c' | tclsh", DESTROY),
        ("echo 'after 10 \"exec rm -rf app\"; update' | tclsh", DESTROY),
        ("echo 'set c [list exec rm -rf app]; eval $c' | tclsh", UNREADABLE),
        ("echo 'set f file; $f delete -force app' | tclsh", UNREADABLE),
        # a program's own output file
        ("gcc -o SOUL.md x.c", DESTROY),
        ("gcc -oSOUL.md x.c", DESTROY),
        ("cc -o .git/hooks/pre-commit x.c", HOOK),
        ("gcc -o .bashrc x.c", STARTUP),
        ("redis-cli --rdb SOUL.md", DESTROY),
        ("redis-cli --rdb .git/hooks/pre-commit", HOOK),
        ("redis-cli --functions-rdb SOUL.md", DESTROY),
        ("go build -o SOUL.md .", DESTROY),
        ("rustc -o SOUL.md x.rs", DESTROY),
        ("strip -o SOUL.md x.o", DESTROY),
        ("objcopy x.o SOUL.md", DESTROY),
        ("nasm -o SOUL.md x.asm", DESTROY),
        ("pandoc -o SOUL.md README.md", DESTROY),
        ("pandoc README.md -o .git/hooks/pre-commit", HOOK),
        ("msgfmt -o SOUL.md x.po", DESTROY),
        ("tsc --outFile SOUL.md x.ts", DESTROY),
        ("base64 -d x.b64 -o SOUL.md", DESTROY),
        ("yq -i '.a = 1' SOUL.md", DESTROY),
        ("zip SOUL.md x.c", DESTROY),
        # rsync's remote shell runs --rsync-path on the host, as ssh HOST CMD does
        ("rsync --rsync-path='cat .env' x host:y", SECRET),
        ("rsync --rsync-path 'cat .env' x user@host:y", SECRET),
        ("rsync --rsync-path='rm -rf app' x host:y", NETWORK),
        ("ssh -o RemoteCommand='rm -rf ~/x' host", NETWORK),
        ("ssh -o RemoteCommand='cat .env' host", SECRET),
        ("rsync -e 'sh -c \"rm -rf app\"' x y", DESTROY),
        ("rsync --rsh='sh -c \"rm -rf app\"' x host:y", DESTROY),
        ("ssh -o ProxyCommand='rm -rf app' host", DESTROY),
        ("ssh -o LocalCommand='rm -rf app' -o PermitLocalCommand=yes host", DESTROY),
        # a SQL client's output run by a shell or an interpreter
        ('sqlite3 x.db "select code from t" | python3', UNREADABLE),
        ('sqlite3 x.db "select \'import shutil; shutil.rmtree(\\"app\\")\'" | python3', DESTROY),
        ("psql -f q.sql | sh", DESTROY),
        ("psql -f missing.sql | sh", UNREADABLE),
        ('sh -c "$(psql -f q.sql)"', DESTROY),
        ("clickhouse local --queries-file q.sql | sh", DESTROY),
        ("psql -f list.sql | sh", UNREADABLE),
        ("clickhouse local --query \"select 'rm -rf app'\" | sh", DESTROY),
        ("clickhouse-local -q \"select 'rm -rf app'\" | sh", DESTROY),
        ("clickhouse client --query=\"select 'rm -rf app'\" | bash", DESTROY),
        ("clickhouse local --query 'select x from t' | sh", UNREADABLE),
    ],
)
def test_a_command_or_write_a_program_makes_is_judged_as_it(
    root: Path, command: str, decision: tuple[str, str]
) -> None:
    assert safety_in(command, root) == decision


@pytest.mark.parametrize(
    ("command", "decision"),
    [
        ("rsync -av src/ dst/", ALLOW),
        ("rsync -e ssh x host:y", NETWORK),
        ("rsync --rsync-path='sudo rsync' -a app/ host:app/", NETWORK),
        ("rsync --rsync-path='cat .env' -a src/ dst/", ALLOW),  # a local copy runs no remote
        ("ssh host ls", NETWORK),
        ("awk '{print $1}' f", ALLOW),
        ("awk 'BEGIN{print \"rm -rf app\"}'", ALLOW),
        ('awk \'BEGIN{print "ls" | "sh"}\'', ALLOW),
        ('awk \'BEGIN{print "rm -rf app" | "cat"}\'', ALLOW),
        ("awk '{print $1 | \"sort\"}' f", ALLOW),
        ("awk -F: '{print $1 | \"sort -u\"}' f", ALLOW),
        ("awk 'BEGIN{while ((\"ls\" | getline line) > 0) print line}'", ALLOW),
        ('awk \'{ if ($1 == "a" || $2 == "b") print }\' f', ALLOW),
        ("awk '/a|b/ {print $2}' f", ALLOW),
        ("sed 's/a/b/' f", ALLOW),
        ("sed -n '/e/p' f", ALLOW),
        ("sed 's/rm -rf/xx/' f", ALLOW),
        ("sed 's/.*/rm -rf app/' f", ALLOW),
        ("sed 's/.*/date/e' f", ALLOW),
        ("sqlite3 app.db .tables", ALLOW),
        ("psql -f q.sql", ALLOW),
        ("clickhouse local --query 'select count() from t'", ALLOW),
        ("clickhouse local --query \"select 'ls'\" | sh", ALLOW),
        ("gcc -o build/app x.c", ALLOW),
        ("gcc -O2 -o build/hello x.c && ./build/hello", ALLOW),
        ("gcc -shared -o build/libx.so x.c", ALLOW),
        ("gcc -c x.c -o build/x.o", ALLOW),
        ("redis-cli --rdb dump.rdb", ALLOW),
        ("go build -o build/app .", ALLOW),
        ("go test ./...", ALLOW),
        ("rustc -o build/x x.rs", ALLOW),
        ("objcopy -O binary build/app build/app.bin", ALLOW),
        ("pandoc -o docs/out.html README.md", ALLOW),
        ("zip -r build/app.zip app", ALLOW),
        ("yq -i '.a = 1' config.yaml", ALLOW),
        ("tsc --outFile build/x.js x.ts", ALLOW),
        ("tclsh build.tcl", ALLOW),
        ("echo 'puts [file exists app]' | tclsh", ALLOW),
        ("echo 'set f [open README.md r]; puts [read $f]' | tclsh", ALLOW),
        ("echo 'set f [open build/out.txt w]' | tclsh", ALLOW),
        ("echo 'puts \"file delete later\"' | tclsh", ALLOW),
        ("echo 'if {$argc > 0} {puts hi}' | tclsh", ALLOW),
        ("echo 'foreach x {a b} {puts $x}' | tclsh", ALLOW),
    ],
)
def test_the_ordinary_use_keeps_its_verdict(
    root: Path, command: str, decision: tuple[str, str | None]
) -> None:
    assert safety_in(command, root) == decision
