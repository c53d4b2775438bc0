"""Commands program text runs through a value it holds rather than a literal: a Perl, Ruby,
Python or Node variable set from literals (``my $c = q(rm -rf app); system $c``), literals
joined (``"rm" . " -rf app"``), Node's ``child_process`` functions under another name
(``const {execSync: x} = require("child_process")``), and interpreters run by a versioned name
(``perl5.36``, ``ruby3.2``, ``node20``). A command whose name cannot be read at all is judged
unreadable; the literals of the program that would be a command are read as one."""

from __future__ import annotations

from pathlib import Path

import pytest
from policy_support import ALLOWED, DESTROYS, SECRET, UNREADABLE, safety_in, secret_workspace

RM = "rm -rf app"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """A workspace holding ``.env``, an ``app`` folder and a few project files."""
    files = {"README.md": "hello\n", "app/main.py": "print('hi')\n", "in.txt": "b\na\n"}
    return secret_workspace(tmp_path, files, folders=("app",))


# -- 1. a command held in a Perl, Ruby or Python variable, or built by joining literals -------

HELD_COMMANDS = [
    f"perl -e 'my $c = q({RM}); system $c'",
    f"perl -e 'my $c = \"{RM}\"; system($c)'",
    f"perl -e '$c = q({RM}); exec $c'",
    f"perl -e 'my $c = q({RM}); qx($c)'",
    f"perl -e 'my $c = q({RM}); print `$c`'",
    f"perl -e 'my $c = q({RM}); print qx{{$c}}'",
    f"perl -e 'my $c = q({RM}); readpipe $c'",
    f"perl -e 'my $c = q({RM}); open(my $f, \"-|\", $c)'",
    f"perl -e 'my $c = q({RM}); open(F, \"$c |\")'",
    f"perl -e 'my $c = \"{RM}\"; my $d = $c; system $d'",
    'perl -e \'my $p = "rm"; my $a = "-rf app"; system "$p $a"\'',
    'perl -e \'my $p = "rm"; system $p, "-rf", "app"\'',
    'perl -e \'my @c = ("rm", "-rf", "app"); system @c\'',
    "perl -e 'my @c = qw(rm -rf app); system @c'",
    'perl -e \'system "rm" . " -rf app"\'',
    'perl -e \'my $c = "rm" . " -rf " . "app"; system $c\'',
    'perl -e \'my $c = "rm -rf"; system "$c app"\'',
    'perl -e \'my $c = "rm -rf"; system "${c} app"\'',
    "perl -E 'my $c = q(rm -rf app); say `$c`'",
    'perl -e \'my $c = join(" ", "rm", "-rf", "app"); system $c\'',
    'perl -e \'my $c = sprintf("%s %s", "rm -rf", "app"); system $c\'',
    "perl -e 'my %h = (c => \"rm -rf app\"); system $h{c}'",
    f"ruby -e 'c = \"{RM}\"; system(c)'",
    f"ruby -e 'c = \"{RM}\"; system c'",
    f"ruby -e 'c = %q({RM}); exec(c)'",
    f"ruby -e 'c = \"{RM}\"; `#{{c}}`'",
    f"ruby -e 'c = \"{RM}\"; %x(#{{c}})'",
    f"ruby -e 'c = \"{RM}\"; IO.popen(c)'",
    f"ruby -e 'c = \"{RM}\"; spawn(c)'",
    'ruby -e \'system "rm" + " -rf app"\'',
    'ruby -e \'c = "rm" + " -rf app"; system(c)\'',
    "ruby -e 'c = %w(rm -rf app); system(*c)'",
    'ruby -e \'c = ["rm", "-rf", "app"]; system(*c)\'',
    'ruby -e \'c = "rm -rf"; system("#{c} app")\'',
    'ruby -e \'c = ["rm", "-rf", "app"].join(" "); system(c)\'',
    f"python3 -c 'import os; c = \"{RM}\"; os.system(c)'",
    'python3 -c \'import os; os.system("rm" + " -rf app")\'',
    f"python3 -c 'import subprocess; c = \"{RM}\"; subprocess.run(c, shell=True)'",
    'python3 -c \'import subprocess as s; c = ["rm", "-rf", "app"]; s.run(c)\'',
    f"python3 -c 'import os; c = \"{RM}\"; os.popen(c)'",
    # the same code in a file, or on the standard input
    f"echo 'my $c = q({RM}); system $c' > x.pl; perl x.pl",
    f"echo 'my $c = q({RM}); system $c' | perl",
]
HELD_SECRET_READS = [
    "perl -e '$c=\"cat .env\"; print `$c`'",
    "ruby -e \"c='cat .env'; puts %x(#{c})\"",
    'perl -e \'my $c = "cat " . ".e" . "nv"; system $c\'',
    'ruby -e \'c = "cat " + ".e" + "nv"; system(c)\'',
]
#: Variants of the above a program could try: each is read as the command it runs.
HELD_VARIANTS = [
    'perl -e \'$c = "rm -rf app"; system("$c")\'',
    'perl -e \'my $c = "rm -rf app"; system { "sh" } "sh", "-c", $c\'',
    "perl -e 'my ($c) = (\"rm -rf app\"); system $c'",
    "perl -e 'my $c = \"rm -rf app\"; my @a = ($c); system @a'",
    "perl -e 'local $c = \"rm -rf app\"; eval { system $c }'",
    "perl -e 'my $c = \"rm -rf app\"; sub r { system shift } r($c)'",
    'perl -e \'my $c = "rm -rf app"; open my $p, "|-", $c\'',
    'perl -e \'my $x = "rm"; my $y = "-rf"; system($x, $y, "app")\'',
    'perl -e \'my $c = "r" . "m -r" . "f app"; system $c\'',
    "perl -e 'my $c = \"\\x72m -rf app\"; system $c'",
    "perl -e 'my $c = \"\\162m -rf app\"; system $c'",
    "perl -e 'my $c = uc(\"rm -rf app\"); system lc $c'",
    "ruby -e 'c = \"rm -rf app\"; Process.spawn(c)'",
    "ruby -e 'c = \"rm -rf app\"; Open3.capture2(c)'",
    "ruby -e 'c = \"rm -rf app\"\nsystem(c)'",
    "ruby -e 'C = \"rm -rf app\"; system(C)'",
    "ruby -e '$c = \"rm -rf app\"; system($c)'",
    "ruby -e 'c = \"\\x72m -rf app\"; system(c)'",
    'python3 -c \'import os; d = "app"; os.system(f"rm -rf {d}")\'',
    'python3 -c \'import os; c = "rm -rf %s" % "app"; os.system(c)\'',
    'python3 -c \'import os; c = "rm -rf {}".format("app"); os.system(c)\'',
    "python3 -c 'from subprocess import run; run(\"rm -rf app\", shell=True)'",
    'python3 -c \'from subprocess import run as r; r(["rm", "-rf", "app"])\'',
    "python3 -c 'import os as o; o.system(\"rm -rf app\")'",
    "python3 -c 'import subprocess as sp; sp.check_output(\"rm -rf app\", shell=True)'",
    'python3 -c \'import os; cmd = " ".join(["rm", "-rf", "app"]); os.system(cmd)\'',
    "python3 -c 'import os; c = \"\\x72m -rf app\"; os.system(c)'",
    'deno eval \'new Deno.Command("rm", {args: ["-rf", "app"]}).outputSync()\'',
]
#: The command is in the program's arguments or input, or built at run time: the call cannot be
#: read.
UNREADABLE_RUNS = [
    "perl -e 'system @ARGV' rm -rf x",
    "perl -e 'system $ARGV[0]' ls",
    "ruby -e 'system(*ARGV)' ls",
    "perl -ne 'system $_' README.md",
    "perl -e 'my $c = <STDIN>; system $c'",
    "ruby -e 'system(gets)'",
    "python3 -c 'import os, sys; os.system(sys.argv[1])' ls",
    "node -e 'require(\"child_process\").execSync(process.argv[1])' ls",
    "perl -e 'my $c = reverse \"ppa fr- mr\"; system $c'",
    "ruby -e 'c = \"ppa fr- mr\".reverse; system(c)'",
    "python3 -c 'import os; c = \"ppa fr- mr\"[::-1]; os.system(c)'",
    "perl -e 'open(F, \"-|\", $ARGV[0])' ls",
    "perl -e 'open(F, \"$x |\")'",
    'node -e \'const f = "execSync"; require("child_process")[f]("ls")\'',
    'node -e \'const cp = require("child_process"); cp[process.argv[1]]("ls")\' execSync',
    'node -e \'const {execSync} = require("child_process"); [execSync].forEach(f => f("ls"))\'',
    'node -e \'const cp = require("child_process"); Reflect.apply(cp.execSync, null, ["ls"])\'',
    'node -e \'const {execSync: x} = require("child_process"); const o = {e: x}; o.e("ls")\'',
]
BENIGN_HELD = [
    "perl -e 'my $c = q(hello); print $c'",
    "perl -e 'my $c = \"rm -rf app\"; print $c'",
    "perl -e 'my $c = q(ls -l); system $c'",
    'perl -e \'my @c = ("git", "status"); system @c\'',
    'perl -e \'my $c = "git" . " status"; system $c\'',
    'perl -e \'system "echo", "hi"\'',
    "ruby -e 'c = \"git status\"; system(c)'",
    "ruby -e 'c = \"hello\"; puts c'",
    'ruby -e \'puts "rm" + " -rf app"\'',
    "python3 -c 'import os; c = \"ls -l\"; os.system(c)'",
    "python3 -c 'c = \"rm -rf app\"; print(c)'",
    "python3 -c 'print(1)'",
    'perl -e \'my $f = "README.md"; open(F, "<", $f); print <F>\'',
    "perl -e 'open(F, $ARGV[0]); print <F>' README.md",
    'perl -e \'my $d = "app"; system("ls", $d)\'',
    'perl -e \'for my $f (glob "*.txt") { system("wc", "-l", $f) }\'',
    "perl -e 'my $c = \"ls\"; my $o = `$c -l`; print $o'",
    'perl -e \'my $email = "a@b.com"; system("echo", $email)\'',
    'ruby -e \'name = "world"; system("echo", name)\'',
    'python3 -c \'import subprocess, sys; subprocess.run([sys.executable, "-c", "print(1)"])\'',
    'python3 -c \'import subprocess; subprocess.run(["git", "status"], check=True)\'',
    "python3 -c 'import subprocess; subprocess.run(\"ls -l\", shell=True, capture_output=True)'",
    'python3 -c \'import subprocess; subprocess.run(["pytest", "-q"] + ["tests"])\'',
]


@pytest.mark.parametrize("command", HELD_COMMANDS + HELD_VARIANTS)
def test_a_command_held_in_a_value_is_read(root: Path, command: str) -> None:
    assert safety_in(command, root) == DESTROYS


@pytest.mark.parametrize("command", HELD_SECRET_READS)
def test_a_secret_read_held_in_a_value_is_read(root: Path, command: str) -> None:
    assert safety_in(command, root) == SECRET


@pytest.mark.parametrize("command", UNREADABLE_RUNS)
def test_a_command_from_the_programs_input_is_unreadable(root: Path, command: str) -> None:
    assert safety_in(command, root) == UNREADABLE


@pytest.mark.parametrize("command", BENIGN_HELD)
def test_benign_held_values_stay_allowed(root: Path, command: str) -> None:
    assert safety_in(command, root) == ALLOWED


# -- 2. Node's child_process functions under another name ------------------------------------

NODE_ALIASES = [
    f'node -e \'const {{execSync: x}} = require("child_process"); x("{RM}")\'',
    f'node -e \'const {{execSync}} = require("child_process"); execSync("{RM}")\'',
    f'node -e \'const {{exec}} = require("node:child_process"); exec("{RM}")\'',
    f'node -e \'const cp = require("child_process"); cp["execSync"]("{RM}")\'',
    f'node -e \'const cp = require("child_process"); cp.exec("{RM}")\'',
    f"node -e \"const cp = require('child_process'); cp['exec']('{RM}')\"",
    f'node -e \'import("child_process").then(m => m.execSync("{RM}"))\'',
    f'node -e \'import("child_process").then((m) => m.exec("{RM}"))\'',
    f'node -e \'import("child_process").then(({{execSync}}) => execSync("{RM}"))\'',
    'node -e \'require("child_process").spawnSync("rm", ["-rf", "app"])\'',
    'node -e \'const {spawnSync: s} = require("child_process"); s("rm", ["-rf", "app"])\'',
    'node -e \'const cp = require("child_process"); cp.execFileSync("rm", ["-rf", "app"])\'',
    f'node -e \'const x = require("child_process").execSync; x("{RM}")\'',
    f'node -e \'const cp = require("child_process"); const x = cp.execSync; x("{RM}")\'',
    f'node -e \'const cp = require("child_process"); const y = cp; y.execSync("{RM}")\'',
    f'node -e \'const c = "{RM}"; require("child_process").execSync(c)\'',
    f'node -e \'const {{execSync: x}} = require("child_process"); const c = "{RM}"; x(c)\'',
    f'node -e \'let cp = require("child_process"); cp?.execSync("{RM}")\'',
    f'node -e \'var {{ exec : run }} = require("child_process"); run("{RM}")\'',
    f'node -e \'const x = require("child_process")["execSync"]; x("{RM}")\'',
    f'node -e \'const {{execSync: x}} = require("child_process"); x.call(null, "{RM}")\'',
    f'node --input-type=module -e \'import {{execSync as x}} from "child_process"; x("{RM}")\'',
    f'node --input-type=module -e \'import * as p from "node:child_process"; p.execSync("{RM}")\'',
    f'node --input-type=module -e \'import cp from "child_process"; cp.execSync("{RM}")\'',
    f'node -e \'(async () => {{ const m = await import("child_process"); m.exec("{RM}") }})()\'',
    'node -e \'const x = "rm" + " -rf app"; require("child_process").execSync(x)\'',
    f"node -e 'const {{execSync: x}} = require(\"child_process\"); x(`{RM}`)'",
    # more a program could try
    f'node -e \'const cp = require("child_process"); const {{execSync}} = cp; execSync("{RM}")\'',
    f'node -e \'const p = require("child_process"); const r = p.execSync.bind(p); r("{RM}")\'',
    'node -e \'const {execSync: x} = require("child_process"); x.apply(null, ["rm -rf app"])\'',
    'node -e \'const m = "child_process"; require(m).execSync("rm -rf app")\'',
    'node -e \'const cp = module.require("child_process"); cp.execSync("rm -rf app")\'',
    'node -e \'const c = require("child_process"), fs = require("fs"); c.execSync("rm -rf app")\'',
    'node -e \'let x; x = require("child_process").execSync; x("rm -rf app")\'',
    'node -e \'const {spawn} = require("child_process"); spawn("sh", ["-c", "rm -rf app"])\'',
    'node -e \'const {execFile} = require("child_process"); execFile("/bin/rm", ["-rf", "app"])\'',
    'node -e \'const d = "app"; require("child_process").execSync(`rm -rf ${d}`)\'',
    'bun -e \'Bun.spawnSync(["rm", "-rf", "app"])\'',
]
NODE_SECRET_READS = [
    'node -e \'const {exec} = require("node:child_process"); exec("cat .env")\'',
    'node -e \'const {execSync: x} = require("child_process"); x("cat .env")\'',
]
BENIGN_NODE = [
    'node -e \'const {join} = require("path"); console.log(join("a","b"))\'',
    'node -e \'const {execSync: x} = require("child_process"); x("git status")\'',
    'node -e \'const cp = require("child_process"); cp.execSync("ls -l")\'',
    "node -e 'const x = (s) => s; x(\"rm -rf app\")'",
    'node -e \'const {exec} = require("./lib"); exec("hello")\'',
    "node -e 'console.log(\"rm -rf app\")'",
    'node -e \'require("child_process").spawnSync("ls", ["-l"])\'',
    'node -e \'const x = require("./x"); x.exec("rm -rf app")\'',
    'node -e \'const cp = require("child_process"); cp.execFileSync("git", ["status"])\'',
    'node -e \'const {execSync} = require("child_process"); execSync("git log -1")\'',
    'node -e \'const {execSync} = require("child_process"); console.log("rm -rf app")\'',
    'node -e \'import("child_process").then(m => m.execSync("ls"))\'',
    'node -e \'import("child_process").then((m) => m.execSync("ls"))\'',
    'node -e \'const cp = require("child_process"); const x = cp.execSync; x("ls")\'',
    'node --input-type=module -e \'import {execSync as x} from "child_process"; x("ls")\'',
    'node --input-type=module -e \'import * as p from "node:child_process"; p.execSync("ls")\'',
]


@pytest.mark.parametrize("command", NODE_ALIASES)
def test_an_aliased_child_process_call_is_read(root: Path, command: str) -> None:
    assert safety_in(command, root) == DESTROYS


@pytest.mark.parametrize("command", NODE_SECRET_READS)
def test_an_aliased_child_process_read_is_read(root: Path, command: str) -> None:
    assert safety_in(command, root) == SECRET


@pytest.mark.parametrize("command", BENIGN_NODE)
def test_benign_node_code_stays_allowed(root: Path, command: str) -> None:
    assert safety_in(command, root) == ALLOWED


# -- 3. an interpreter run by a versioned name or a full path --------------------------------

VERSIONED = [
    f"perl5.36 -e 'system q({RM})'",
    f"perl5.36.0 -e 'system q({RM})'",
    f"/usr/bin/perl5.36 -e 'system q({RM})'",
    f"ruby3.2 -e 'system \"{RM}\"'",
    f"/usr/local/bin/ruby3.2 -e '`{RM}`'",
    f"python3.12 -c 'import os; os.system(\"{RM}\")'",
    f"/usr/bin/python3.12 -c 'import os; os.system(\"{RM}\")'",
    f"python3.13t -c 'import os; os.system(\"{RM}\")'",
    f'node20 -e \'require("child_process").execSync("{RM}")\'',
    f'nodejs18 -e \'require("child_process").execSync("{RM}")\'',
    f"php8.2 -r 'exec(\"{RM}\");'",
    "python3.12 -c 'import shutil; shutil.rmtree(\"app\")'",
    'node20 -e \'require("fs").rmSync("app", {recursive: true})\'',
    "perl5.36 -MFile::Path -e 'remove_tree(\"app\")'",
    f"env perl5.36 -e 'system q({RM})'",
    f"echo 'system q({RM})' | perl5.36",
    f"python3.12-dbg -c 'import os; os.system(\"{RM}\")'",
    f"pypy3.10 -c 'import os; os.system(\"{RM}\")'",
    f"ruby2.7 -e 'system \"{RM}\"'",
    f"command perl5.36 -e 'system q({RM})'",
    f"sudo ruby3.2 -e '`{RM}`'",
    f"printf '#!/usr/bin/env perl5.36\\nsystem q({RM});\\n' > t.pl; chmod +x t.pl; ./t.pl",
    f"printf 'system q({RM});\\n' > t.pl; perl5.36 t.pl",
    f"PERL5.36 -e 'system q({RM})'",
    f"php8 -r 'system(\"{RM}\");'",
]
VERSIONED_SECRET_READS = [
    "python3.12 -c 'print(open(\".env\").read())'",
    "perl5.36 -ne print .env",
    "ruby3.2 -e 'puts File.read(\".env\")'",
    'node20 -e \'console.log(require("fs").readFileSync(".env", "utf8"))\'',
    "node20 .env",
]
BENIGN_VERSIONED = [
    'python3.12 -c "print(1)"',
    "perl5.36 -e 'print 1'",
    "ruby3.2 -e 'puts 1'",
    "node20 -e 'console.log(1)'",
    "python3.12 -m pytest -q",
]


@pytest.mark.parametrize("command", VERSIONED)
def test_a_versioned_interpreter_is_read_as_its_base(root: Path, command: str) -> None:
    assert safety_in(command, root) == DESTROYS


@pytest.mark.parametrize("command", VERSIONED_SECRET_READS)
def test_a_versioned_interpreter_reading_a_secret(root: Path, command: str) -> None:
    assert safety_in(command, root) == SECRET


@pytest.mark.parametrize("command", BENIGN_VERSIONED)
def test_benign_versioned_interpreters_stay_allowed(root: Path, command: str) -> None:
    assert safety_in(command, root) == ALLOWED
