"""The SQL a database shell (``sqlite3``, ``duckdb``) runs is read for the files it reads and
writes and the commands it runs, its names worked out from literals as the database would."""

from __future__ import annotations

from pathlib import Path

import pytest
from policy_support import safety_in, secret_workspace

from pytest_harness_audit.policy.shell.reading import read_command
from pytest_harness_audit.policy.shell.sql_files import evaluate


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return secret_workspace(
        tmp_path,
        {"q.sql": "select readfile('.e' || 'nv');\n", "ok.sql": "select count(*) from users;\n"},
        ("app",),
    )


@pytest.mark.parametrize(
    ("command", "rule"),
    [
        ("sqlite3 x.db \"select readfile('.e' || 'nv')\"", "deny-secret-files"),
        ("sqlite3 x.db \"SELECT READFILE('.e'||'n'||'v')\"", "deny-secret-files"),
        ('sqlite3 x.db "select readfile(char(46,101,110,118))"', "deny-secret-files"),
        ("sqlite3 x.db \"select readfile(x'2e656e76')\"", "deny-secret-files"),
        ("sqlite3 x.db \"select readfile(cast(x'2e656e76' as text))\"", "deny-secret-files"),
        ("sqlite3 x.db \"select readfile(lower('.ENV'))\"", "deny-secret-files"),
        ("sqlite3 x.db \"select readfile(replace('.xenv', 'x', ''))\"", "deny-secret-files"),
        ("sqlite3 x.db \"select readfile(substr('x.envx', 2, 4))\"", "deny-secret-files"),
        ("sqlite3 x.db \"select readfile(printf('%s%s', '.e', 'nv'))\"", "deny-secret-files"),
        ("sqlite3 x.db \"select readfile(unhex('2e656e76'))\"", "deny-secret-files"),
        ("sqlite3 -cmd \"select readfile('.e'||'nv')\" x.db", "deny-secret-files"),
        ("sqlite3 x.db < q.sql", "deny-secret-files"),
        ("sqlite3 x.db \"attach '.e' || 'nv' as e\"", "deny-secret-files"),
        ("sqlite3 x.db \"select writefile('.e' || 'nv', 'API_KEY=x')\"", "deny-secret-files"),
        ("sqlite3 x.db \"select writefile('.git/hooks/pre-' || 'commit', 'x')\"", None),
        ("sqlite3 x.db \"vacuum into '.git/hooks/pre-commit'\"", None),
        ("sqlite3 x.db \".once '.git/hooks/pre-commit'\" \"select 'x'\"", None),
        ("sqlite3 x.db \".read '|cat .env'\"", "deny-secret-files"),
        ("sqlite3 x.db \".once '|rm -rf app'\" 'select 1'", "deny-destructive-commands"),
        ("sqlite3 x.db \"select edit('x', 'rm -rf app')\"", "deny-destructive-commands"),
        ("sqlite3 x.db \".output '|sh'\" \"select 'rm -rf app'\"", "deny-destructive-commands"),
        ("sqlite3 x.db \".once '|bash'\" \"select 'cat .env'\"", "deny-secret-files"),
        ("sqlite3 x.db \".import '|cat .env' t\"", "deny-secret-files"),
        ("duckdb -c \"select * from read_text('.e*')\"", "deny-secret-files"),
        ("sqlite3 x.db '.shell rm -rf app'", "deny-destructive-commands"),
        ("duckdb -c \"copy (select 1) to '.env'\"", "deny-secret-files"),
        ("duckdb -c \"select * from read_csv('.e' || 'nv')\"", "deny-secret-files"),
        ("duckdb x.db \"select * from read_text('.env')\"", "deny-secret-files"),
        ("duckdb -c \"select * from '.e' || 'nv'\"", "deny-secret-files"),
    ],
)
def test_sql_files_and_commands_are_judged(root: Path, command: str, rule: str | None) -> None:
    assert safety_in(command, root) == ("deny", rule or "deny-exec-config-write")


@pytest.mark.parametrize(
    "command",
    [
        "sqlite3 x.db 'select readfile(name) from blobs'",
        "sqlite3 x.db \"select writefile(name || '.bin', data) from blobs\"",
        "duckdb -c 'install httpfs; load httpfs'",
        'sqlite3 x.db ".output \'|sh\'" "select name from scripts"',
    ],
)
def test_a_file_named_at_run_time_is_unreadable(root: Path, command: str) -> None:
    assert safety_in(command, root) == ("warn", "unreadable-command")


@pytest.mark.parametrize(
    "command",
    [
        "sqlite3 app.db 'select * from users'",
        "sqlite3 app.db .tables",
        "sqlite3 app.db \"insert into notes values ('see .env.example')\"",
        "sqlite3 app.db \"insert into notes values ('run readfile(.env) later')\"",
        "sqlite3 app.db \"select 'a' || 'b' from users\"",
        "sqlite3 app.db \"select readfile('README.md')\"",
        "sqlite3 app.db \"select writefile('export/users.csv', 'x')\"",
        "sqlite3 app.db '.backup backup.db'",
        "sqlite3 app.db '.mode csv' '.import data.csv users'",
        "sqlite3 app.db \".once 'report.txt'\" 'select * from users'",
        "sqlite3 app.db 'select count(*) from users join orders on users.id = orders.uid'",
        "sqlite3 app.db < ok.sql",
        "sqlite3 app.db \".output '|gzip > users.sql.gz'\" .dump",
        "sqlite3 app.db \".once 'users.csv'\" \"select * from users where note = 'x'\"",
        "duckdb -c \"select * from read_csv('data.csv')\"",
        "duckdb -c \"copy users to 'users.csv'\"",
        "duckdb app.duckdb \"create table t as select * from 'data.csv'\"",
    ],
)
def test_ordinary_sql_stays_allowed(root: Path, command: str) -> None:
    assert safety_in(command, root) == ("allow", None)


def test_what_sql_reads_and_writes_is_in_the_reading() -> None:
    reading = read_command("sqlite3 x.db \"select writefile('app/' || 'main.py', readfile('a'))\"")
    assert "app/main.py" in reading.writes
    assert "a" in reading.reads


@pytest.mark.parametrize(
    ("expression", "value"),
    [
        ("'.e' || 'nv'", ".env"),
        ("'it''s'", "it's"),
        ("char(46, 101) || 'nv'", ".env"),
        ("x'2e656e76'", ".env"),
        ("upper('a') || trim('  b  ')", "Ab"),
        ("concat('.', 'env')", ".env"),
        ("reverse('vne.')", ".env"),
        ("(('.e') || ('nv'))", ".env"),
        ("name", None),
        ("'.e' || name", None),
        ("printf('%d', 3)", None),
        ("char(999999999)", None),
    ],
)
def test_evaluate_works_out_literals_only(expression: str, value: str | None) -> None:
    assert evaluate(expression) == value
