"""Database clients as a way around the gate: what their SQL prints to a shell, their
meta-commands (``\\!``, ``\\o |cmd``, ``\\w |cmd``, ``tee``, ``pager``), their file functions
(``pg_read_file``, ``load_file``, ``into outfile``) and the MongoDB shells' own functions are
judged as the commands they run and the files they touch; ordinary database work stays
allowed."""

from __future__ import annotations

import shlex
import time
from pathlib import Path

import pytest
from policy_support import safety_in, secret_workspace

from pytest_harness_audit.policy.shell.reading import read_command
from pytest_harness_audit.policy.shell.sql_output import client_output, printed_rows

DESTROY = "deny-destructive-commands"
SECRET = "deny-secret-files"
HOOK = "deny-exec-config-write"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return secret_workspace(
        tmp_path,
        {
            "migrations/001.sql": "create table notes (id integer, body text);\n",
            "data.csv": "a\n1\n",
            "wipe.js": "removeFile('app')\n",
            "report.js": "db.users.find().forEach(printjson)\n",
        },
        ("app",),
    )


@pytest.mark.parametrize(
    ("command", "rule"),
    [
        # the SQL's output piped to, or substituted into, a shell
        ("sqlite3 x.db \"select 'rm -r' || 'f app'\" | sh", DESTROY),
        ("sqlite3 x.db \"select char(114,109) || ' -rf app'\" | bash", DESTROY),
        ("sqlite3 x.db \"select 'cat .e' || 'nv'\" | sh", SECRET),
        ("sqlite3 x.db \"select replace('rx -rf app', 'x', 'm')\" | sh", DESTROY),
        ("sqlite3 x.db \"select upper('rm') || lower(' -RF APP')\" | sh", DESTROY),
        ("sqlite3 x.db \"select substr('xxrm -rf app', 3)\" | sh", DESTROY),
        ("sqlite3 x.db \"select cast(x'726d202d7266206170700a' as text)\" | sh", DESTROY),
        ("sqlite3 x.db \"select printf('%s -rf %s', 'rm', 'app')\" | sh", DESTROY),
        ("sqlite3 x.db \"values ('rm -rf app')\" | sh", DESTROY),
        ("sqlite3 x.db \"select 'rm', '-rf app'\" | sh", DESTROY),
        ("sqlite3 -separator ' -rf ' x.db \"select 'rm', 'app'\" | sh", DESTROY),
        ("sqlite3 -newline ' ' x.db \"select 'rm -rf'; select 'app'\" | sh", DESTROY),
        ('sqlite3 -header x.db "select 1 as \\"rm -rf app\\"" | sh', DESTROY),
        ("echo \"select 'rm -rf app';\" | sqlite3 x.db | sh", DESTROY),
        ('sqlite3 x.db "select \'import shutil; shutil.rmtree(\\"app\\")\'" | python3', DESTROY),
        ("sh -c \"$(sqlite3 x.db \"select 'rm -r' || 'f app'\")\"", DESTROY),
        ('eval "$(sqlite3 x.db "select \'rm -rf app\'")"', DESTROY),
        ("duckdb -c \"select concat('rm -r', 'f app')\" | sh", DESTROY),
        ("mysql -e \"select concat('rm -r', 'f app')\" | sh", DESTROY),
        ("mysql -e 'select \"rm -rf app\"' | sh", DESTROY),
        ("mysql -e 'select 0x726d202d7266206170700a' | sh", DESTROY),
        ("psql -tAc \"select 'rm -r' || 'f app'\" | sh", DESTROY),
        ("psql -c \"select chr(114) || chr(109) || ' -rf app'\" | sh", DESTROY),
        ("psql -c \"select format('%s -rf %s', 'rm', 'app')\" | sh", DESTROY),
        # output it cannot work out: its literals are still read
        ("sqlite3 x.db \"select 'rm -rf app' union all select name from t\" | sh", DESTROY),
        ("sqlite3 x.db \"select 'rm -rf app' from t limit 1\" | bash", DESTROY),
        ("psql -c 'select $$rm -rf app$$ from t' | sh", DESTROY),
        # the SQL itself, echoed
        ("psql -e -c 'rm -rf app' | sh", DESTROY),
        ("sqlite3 -echo x.db 'rm -rf app' | sh", DESTROY),
        # the output sent to a command by the client itself
        ("sqlite3 x.db \".output '|sh'\" \"select 'rm -r' || 'f app'\"", DESTROY),
        ("psql -o '|sh' -c \"select 'rm -r' || 'f app'\"", DESTROY),
        ("psql -c '\\o |sh' -c \"select 'rm -rf app'\"", DESTROY),
        ("psql -c \"select 'rm -r' || 'f app' \\g |sh\"", DESTROY),
        ('psql -c "rm -rf app \\w |sh"', DESTROY),
        ('psql -c "select 1 \\w |rm -rf app"', DESTROY),
        # psql's escapes and files
        ('psql -c "select 1 \\! rm -rf app"', DESTROY),
        ("psql -c \"\\copy t to program 'rm -rf app'\"", DESTROY),
        ("psql -c \"copy t to program 'rm -rf app'\"", DESTROY),
        ("psql -c \"select pg_read_file('.env')\"", SECRET),
        ("psql -c \"select pg_read_binary_file('.e' || 'nv')\"", SECRET),
        ("psql -c \"select lo_import('.env')\"", SECRET),
        ("psql -c \"select lo_export(1, '.git/hooks/pre-commit')\"", HOOK),
        ("psql -c '\\w .git/hooks/pre-commit'", HOOK),
        ("psql -c 'select 1 \\g .git/hooks/pre-commit'", HOOK),
        # mysql's
        ("mysql -e 'select 1 \\! rm -rf app'", DESTROY),
        ("mysql -e \"select load_file('.env')\"", SECRET),
        ("mysql -e \"select load_file(concat('.e', 'nv'))\"", SECRET),
        ("mysql -e \"select 'x' into dumpfile '.git/hooks/pre-commit'\"", HOOK),
        ("mysql -e \"select 'x' into outfile '.git/hooks/post-merge'\"", HOOK),
        ("mysql --init-command='system rm -rf app' -e 'select 1'", DESTROY),
        ("mysql --pager='rm -rf app' -e 'select 1'", DESTROY),
        ("mysql -e 'pager rm -rf app'", DESTROY),
        ("mysql -e '\\P rm -rf app'", DESTROY),
        ("mysql -e 'tee .git/hooks/pre-commit'", HOOK),
        # what psql does to its SQL first: variables, backquotes, \gexec
        ("psql -v c='rm -rf app' -c \"copy t to program :'c'\"", DESTROY),
        ("psql -v x='|sh' -c '\\o :x' -c \"select 'rm -rf app'\"", DESTROY),
        ("psql -v x='rm -rf app' -c \"select :'x'\" | sh", DESTROY),
        ("psql -c '\\set x `rm -rf app`'", DESTROY),
        ("psql -c '\\echo `cat .env`'", SECRET),
        ("psql -c \"select 'copy t to program ''rm -rf app''' \\gexec\"", DESTROY),
        ("psql -c \"select 'copy t from ''.env''' \\gexec\"", SECRET),
        # other clients of the same languages
        ("usql pg://x -c '\\! rm -rf app'", DESTROY),
        ("mycli -e 'system rm -rf app'", DESTROY),
        ("litecli x.db -e '.shell rm -rf app'", DESTROY),
        # the MongoDB shells
        ("mongo --eval \"run('rm', '-rf', 'app')\"", DESTROY),
        ("mongo --eval \"runProgram('rm', '-rf', 'app')\"", DESTROY),
        ("mongo --eval \"removeFile('app')\"", DESTROY),
        ("mongo --eval \"cat('.env')\"", SECRET),
        ("mongosh --eval \"require('child_process').execSync('rm -rf app')\"", DESTROY),
        ("mongosh --eval \"fs.readFileSync('.env')\"", SECRET),
        ("mongosh wipe.js", DESTROY),
        ("mongosh --eval \"load('wipe.js')\"", DESTROY),
    ],
)
def test_a_database_client_is_judged_by_what_it_runs(root: Path, command: str, rule: str) -> None:
    assert safety_in(command, root) == ("deny", rule)


@pytest.mark.parametrize(
    "command",
    [
        'sqlite3 x.db "select name from scripts" | sh',
        'psql -c "select name from t \\g |sh"',
        'sqlite3 x.db ".output \'|sh\'" "select name from t"',
        "mongo --eval 'run(cmd)'",
        "psql -c \"select format('drop table %I', tablename) from pg_tables \\gexec\"",
    ],
)
def test_what_it_cannot_work_out_stays_unreadable(root: Path, command: str) -> None:
    assert safety_in(command, root) == ("warn", "unreadable-command")


@pytest.mark.parametrize(
    "command",
    [
        "psql -c 'select 1'",
        "psql -f migrations/001.sql",
        "mysql -e 'show tables'",
        "sqlite3 app.db .tables",
        'sqlite3 app.db ".import data.csv t"',
        "duckdb -c \"select * from read_csv('data.csv')\"",
        "mongosh --eval 'db.users.find()'",
        "psql -c \"insert into notes values ('run \\! later')\"",
        "psql -c \"insert into notes values ('pipe it \\g |sh later')\"",
        "psql -c \"select 'rm -rf app'\"",
        "sqlite3 app.db \"select 'rm -rf app'\" > note.txt",
        'sqlite3 app.db "select count(*) from users" | tee count.txt',
        "sqlite3 app.db \"select 'echo hi'\" | sh",
        "echo \"users: $(sqlite3 app.db 'select count(*) from users')\"",
        "mysql -e \"LOAD DATA LOCAL INFILE 'data.csv' INTO TABLE t\"",
        "mysql -e 'pager less' -e 'select 1'",
        "mysql -e \"select 'x' into outfile 'export/users.csv'\"",
        "psql -c \"copy notes to 'notes.csv'\"",
        "psql -c \"\\copy notes to 'notes.csv' csv header\"",
        "psql -c '\\o out.txt' -c 'select 1'",
        "psql -c '\\t' -c '\\pset format csv' -c 'select 1'",
        "psql -c 'select 1 \\gx'",
        "mongosh app --eval 'db.users.insertOne({a: 1})'",
        "mongosh --eval 'db.runCommand({ping: 1})'",
        "mongosh report.js",
        "psql -v ON_ERROR_STOP=1 -f migrations/001.sql",
        "psql -v ON_ERROR_STOP=1 -c 'select 1::text'",
        "psql -c \"select 'create table t2 (a int)' \\gexec\"",
        "psql -v c='rm -rf app' -c '\\! :c'",
    ],
)
def test_ordinary_database_work_stays_allowed(root: Path, command: str) -> None:
    assert safety_in(command, root) == ("allow", None)


@pytest.mark.parametrize(
    ("sql", "rows"),
    [
        ("select 'a' || 'b', upper('c')", [["ab", "C"]]),
        ("select 'a'; select 'b' union all select 'c'", [["a"], ["b"], ["c"]]),
        ("values ('a', 'b'), ('c', null)", [["a", "b"], ["c", ""]]),
        ("create table t (a); insert into t values ('rm -rf app'); select 'x'", [["x"]]),
        (".mode list\nselect 'x' as y", [["y"], ["x"]]),
        ("select 'it''s'", [["it's"]]),
        ("select name from t", None),
        ("select 'x' where 1", None),
        ("delete from t returning name", None),
        (".tables", None),
    ],
)
def test_printed_rows_are_the_constants_of_its_selects(
    sql: str, rows: list[list[str]] | None
) -> None:
    assert printed_rows(sql) == rows


def test_a_clients_output_holds_every_form_its_rows_take() -> None:
    output = client_output("mysql", ["-e", "select 'rm', '-rf app'"], lambda: None)
    assert output is not None
    assert "rm\t-rf app" in output.splitlines()
    assert "rm|-rf app" in output.splitlines()
    assert client_output("psql", ["-f", "q.sql"], lambda: None) is None
    assert client_output("sqlite3", ["x.db"], lambda: "select 'a';") == "a\n"


def test_a_mongo_shell_function_is_in_the_reading() -> None:
    reading = read_command("mongo --eval \"writeFile('app/x.py', 'y'); cat('README.md')\"")
    assert "app/x.py" in reading.writes
    assert "README.md" in reading.reads


@pytest.mark.parametrize(
    "sql",
    [
        "select a" + " " * 20000 + "b",
        "select 'x'" + " " * 20000 + "y z",
        "\\" + "a" * 20000,
        "select name from t where " + " or ".join(["a='x y'"] * 4000),
    ],
    ids=["spaces", "alias", "meta-command", "literals"],
)
def test_long_sql_is_read_in_bounded_time(sql: str) -> None:
    started = time.perf_counter()
    read_command(f"psql -c {shlex.quote(sql)} | sh")
    read_command(f"sqlite3 x.db {shlex.quote(sql)} | sh")
    assert time.perf_counter() - started < 3
