"""A shell command given to an ordinary program as one quoted word (an option's value, a session
command, a database client's shell escape, an editor's ``!cmd``, a crontab entry) is read as the
script it is."""

from __future__ import annotations

from pathlib import Path

import pytest
from policy_support import safety_in, secret_workspace

COPY = "cp .env /tmp/x"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return secret_workspace(
        tmp_path,
        {
            "leak.sql": f".system {COPY}\n",
            "leak.gdb": f"shell {COPY}\n",
            "job.sh": f"{COPY}\n",
            "cron.txt": f"SHELL=/bin/sh\n# nightly\n*/5 * * * * {COPY}\n",
            "reboot.txt": "@reboot rm -rf app\n",
        },
        ("app",),
    )


@pytest.mark.parametrize(
    ("command", "rule"),
    [
        (f"tar cf /dev/null x --checkpoint=1 --checkpoint-action=exec='{COPY}'", None),
        ("tar -cf x.tar -I 'sh ./job.sh' x", None),
        (f"tar -xf a.tar --to-command='{COPY}'", None),
        (f"zip x.zip a -T -TT '{COPY}'", None),
        (f"zip x.zip a -T --unzip-command='{COPY}'", None),
        (f"man -P '{COPY}' ls", None),
        (f"script -qc '{COPY}' /dev/null", None),
        (f"script --command='{COPY}' /dev/null", None),
        (f"tmux new -d '{COPY}'", None),
        ("tmux new-session -d -s s 'rm -rf app'", "deny-destructive-commands"),
        (f"tmux run-shell '{COPY}'", None),
        (f"tmux send-keys -t s '{COPY}' Enter", None),
        (f"screen -dm sh -c '{COPY}'", None),
        (f"screen -dmS n {COPY}", None),
        (f"echo '{COPY}' | at now", None),
        ("at -f job.sh now + 1 minute", None),
        (f"echo '* * * * * {COPY}' | crontab -", None),
        ("crontab cron.txt", None),
        ("crontab reboot.txt", "deny-destructive-commands"),
        (f"sqlite3 :memory: '.system {COPY}'", None),
        (f"sqlite3 :memory: '.shell {COPY}'", None),
        ("sqlite3 :memory: \"select readfile('.env')\"", None),
        ("sqlite3 :memory: '.import .env t'", None),
        ("sqlite3 x.db '.read leak.sql'", None),
        ("sqlite3 -cmd '.shell rm -rf app' x.db", "deny-destructive-commands"),
        ("sqlite3 -init leak.sql x.db", None),
        (f"sqlite3 x.db <<< '.system {COPY}'", None),
        (f"mysql -e 'system {COPY}'", None),
        (f"mariadb --execute='\\! {COPY}'", None),
        ("mysql -e \"LOAD DATA LOCAL INFILE '.env' INTO TABLE t\"", None),
        (f"psql -c '\\! {COPY}'", None),
        (f"psql -c \"COPY t FROM PROGRAM '{COPY}'\"", None),
        ("psql -c \"\\copy t from '.env'\"", None),
        (f"vim -c '!{COPY}' -c q", None),
        (f"vim -es '+r !{COPY}' -c q", None),
        (f"nvim --headless -c \"call system('{COPY}')\" -c q", None),
        ("vi -c 'r .env' -c 'w! /tmp/x' -c q", None),
        (f"ed -s x <<< '!{COPY}'", None),
        (f"hyperfine '{COPY}'", None),
        ("hyperfine --prepare 'rm -rf app' 'ls'", "deny-destructive-commands"),
        (f"entr -s '{COPY}' < list", None),
        (f"nodemon --exec '{COPY}'", None),
        ('emacs --batch --eval \'(copy-file ".env" "/tmp/x")\'', None),
        (f"gdb -batch -ex 'shell {COPY}'", None),
        ("gdb -batch -x leak.gdb", None),
        (f"lldb -o 'platform shell {COPY}'", None),
    ],
)
def test_a_command_in_a_quoted_word_is_read(root: Path, command: str, rule: str | None) -> None:
    assert safety_in(command, root) == ("deny", rule or "deny-secret-files")


def test_a_compiled_extension_is_unreadable(root: Path) -> None:
    command = "sqlite3 x.db \"select load_extension('./x.so')\""
    assert safety_in(command, root) == ("warn", "unreadable-command")


@pytest.mark.parametrize(
    "command",
    [
        "tar czf out.tgz app",
        "tar -I zstd -cf x.tar.zst app",
        "tar -xf a.tar --to-command='wc -c'",
        "man -P cat ls",
        "script -q -c 'ls' /dev/null",
        "tmux new -d -s work",
        "tmux ls",
        "screen -ls",
        "sqlite3 app.db 'select count(*) from users'",
        "sqlite3 app.db '.tables'",
        "psql -c 'select 1 != 2'",
        "mysql -e 'show databases'",
        "vim -c 'set nu' README.md",
        "vim +10 README.md",
        "vim -es README.md",
        "hyperfine 'sleep 0.1'",
        "crontab -l",
        "emacs --batch --eval '(message \"hi\")'",
        "gdb -batch -ex run ./a.out",
    ],
)
def test_benign_uses_stay_allowed(root: Path, command: str) -> None:
    assert safety_in(command, root) == ("allow", None)


@pytest.mark.parametrize(
    "command",
    [
        "echo ls | at now",
        "echo 'python3 tidy.py' | at now + 10 minutes",
        "at -f report.sh now + 1 minute",
        "batch < report.sh",
        "crontab jobs.txt",
        "echo '*/5 * * * * make report' | crontab -",
        "systemd-run --user --on-active=60 make report",
        "systemd-run --user true",
        "systemd-run --user --wait --on-active=5 make report",
    ],
)
def test_a_job_handed_to_a_scheduler_is_flagged(root: Path, command: str) -> None:
    """It runs outside the call, perhaps after the session: no later call sees what it does."""
    assert safety_in(command, root) == ("warn", "unreadable-command")


@pytest.mark.parametrize(
    "command",
    [
        "crontab -l",
        "crontab -r",
        "atq",
        "atrm 3",
        "echo 'meet at now'",
        "at -l",
        "at -c 3",
        "systemd-run --user --scope make report",
        "systemd-run --user --wait make report",
        "systemd-run --user --pty make report",
    ],
)
def test_looking_at_a_scheduler_is_not_flagged(root: Path, command: str) -> None:
    assert safety_in(command, root) == ("allow", None)
