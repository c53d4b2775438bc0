"""Commands and file access written in an interpreter's own syntax: Perl and Ruby quote-like
shell-outs (``system q(…)``, ``qx{…}``, backticks, ``open(F, "cmd|")``), awk's ``getline < FILE``
and ``print > FILE``, and sed's ``r``/``R``/``w``/``W`` commands and ``s///w`` flag."""

from __future__ import annotations

from pathlib import Path

import pytest
from policy_support import ALLOWED, DESTROYS, SECRET, UNREADABLE, safety_in

RM = "rm -rf app"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    workspace = tmp_path / "workspace"
    (workspace / "app").mkdir(parents=True)
    files = {
        ".env": "API_KEY=sk-test-0123456789abcdef\n",
        "README.md": "hello\n",
        "notes.txt": "r .env\n",
        "data.txt": "1 2\n3 4\n",
        "read.sed": "1r .env\n",
        "write.sed": "s/a/b/w .env\n",
        "run.sed": "1e rm -rf app\n",
        "plain.sed": "s/a/b/g\n",
        "read.awk": 'BEGIN { while ((getline line < ".env") > 0) print line }\n',
        "run.awk": 'BEGIN { system("rm -rf app") }\n',
        "count.awk": "{ n += $1 } END { print n }\n",
        "qx.pl": "my $out = qx(rm -rf app);\n",
        "tool.pl": "#!/usr/bin/perl\nmy $out = `rm -rf app`;\n",
        "tick.rb": "puts `rm -rf app`\n",
        "tick.php": "<?php echo `rm -rf app`;\n",
        "hello.pl": "print q(hello), qq{\\n};\n",
    }
    for name, text in files.items():
        (workspace / name).write_text(text, encoding="utf-8")
    (workspace / "tool.pl").chmod(0o755)
    return workspace


PERL_RUNS = [
    f"perl -e 'system q({RM})'",
    f"perl -e 'system qq{{{RM}}}'",
    f"perl -e 'system q{{{RM}}}'",
    f"perl -e 'system q[{RM}]'",
    f"perl -e 'system q<{RM}>'",
    f"perl -e 'system q!{RM}!'",
    f"perl -e 'system q/{RM}/'",
    f"perl -e 'system(q({RM}))'",
    f"perl -e 'system( qq({RM}) );'",
    "perl -e 'system qw(rm -rf app)'",
    f"perl -e 'system \"{RM}\"'",
    'perl -e \'system "rm", "-rf", "app"\'',
    'perl -e \'system {"rm"} "rm", "-rf", "app"\'',
    f"perl -e 'exec q({RM})'",
    f"perl -e 'CORE::system q({RM})'",
    "perl -e 'exec { q(rm) } q(rm), q(-rf), q(app)'",
    f"perl -e 'exec \"{RM}\"'",
    f"perl -e '`{RM}`'",
    f"perl -e 'my $x = `{RM}`; print $x'",
    f"perl -e 'qx({RM})'",
    f"perl -e 'print qx{{{RM}}}'",
    f"perl -e 'print qx[{RM}]'",
    f"perl -e \"print qx'{RM}'\"",
    f"perl -e 'print qx ({RM})'",
    f"perl -e 'readpipe q({RM})'",
    f"perl -e 'readpipe(\"{RM}\")'",
    f"perl -e 'open(F, \"{RM}|\")'",
    f"perl -e 'open(F, \"{RM} |\"); print <F>'",
    f"perl -e 'open(F, \"|{RM}\")'",
    f'perl -e \'open(F, "-|", "{RM}")\'',
    f"perl -e 'open(my $f, q(-|), q({RM}))'",
    'perl -e \'open(my $f, "-|", "rm", "-rf", "app")\'',
    f"perl -e 'open F, \"{RM}|\"'",
    f"perl -le 'print 1' -e 'system q({RM})'",
    f"perl -e 'print 1;' -e 'system(\"{RM}\")'",
    f"perl -Mstrict -E 'say qx({RM})'",
    f"perl -ne 'print' -e 'BEGIN {{ `{RM}` }}' README.md",
    f"echo 'system q({RM})' | perl",
    f"perl <<< 'print `{RM}`'",
    "perl qx.pl",
    "perl -w qx.pl",
    "./tool.pl",
    f"perl -e 'use IPC::Open3; open3($i, $o, $e, q({RM}))'",
]
RUBY_PHP_RUNS = [
    f"ruby -e '`{RM}`'",
    f"ruby -e 'puts `{RM}`'",
    f"ruby -e '%x{{{RM}}}'",
    f"ruby -e '%x[{RM}]'",
    f"ruby -e '%x<{RM}>'",
    f"ruby -e '%x|{RM}|'",
    f"ruby -e 'system \"{RM}\"'",
    f"ruby -e 'system(%q({RM}))'",
    f"ruby -e 'exec \"{RM}\"'",
    f"ruby -e 'spawn \"{RM}\"'",
    f"ruby -e 'IO.popen \"{RM}\"'",
    "ruby -e 'IO.popen(%w(rm -rf app))'",
    f'ruby -e \'IO.popen("{RM}", "r")\'',
    f"ruby -e 'open(\"|{RM}\")'",
    f"ruby -e 'Kernel.open(\"|{RM}\")'",
    f"ruby -e 'Open3.capture2 \"{RM}\"'",
    f"ruby -e 'puts 1' -e '`{RM}`'",
    "ruby tick.rb",
    "php -f tick.php",
    f"php -r 'echo `{RM}`;'",
    f"php -r 'exec(\"{RM}\");'",
    f'php -r \'popen("{RM}", "r");\'',
    f'python3 -c \'import os; os.popen("{RM}", "r")\'',
]
SECRET_READS = [
    "ruby -e 'puts %x{cat .env}'",
    # awk: getline from a file
    "awk 'BEGIN{while((getline l < \".env\")>0) print l}'",
    "awk 'BEGIN { getline < \".env\"; print }'",
    "awk 'BEGIN{getline line<\".env\"; print line}'",
    "awk 'NR==1 { getline x < \".env\" } { print }' README.md",
    "awk 'BEGIN{f=\".env\"; while((getline l < f) > 0) print l}'",
    "awk -v f=.env 'BEGIN{while((getline l < f) > 0) print l}'",
    "awk -vf=.env 'BEGIN{while((getline l < f) > 0) print l}'",
    "awk --assign=f=.env 'BEGIN{getline l < f; print l}'",
    "awk 'BEGIN{getline<\".env\";print}'",
    'awk \'BEGIN{while((getline l < (".e" "nv"))>0) print l}\'',
    "gawk 'BEGIN{while((getline l < \".env\")>0) print l}'",
    "mawk 'BEGIN{getline l < \".env\"; print l}'",
    "busybox awk 'BEGIN{getline l < \".env\"; print l}'",
    "awk --source='BEGIN{getline l < \".env\"; print l}'",
    "awk -e 'BEGIN{getline l < \".env\"; print l}'",
    "gawk --source 'BEGIN{getline l < \".env\"; print l}'",
    "awk -f read.awk",
    "awk --file=read.awk",
    "awk -fread.awk",
    "awk --source='{print}' .env",
    # awk: writes to a secret file
    'awk \'BEGIN{printf "" > ".env"}\'',
    'awk \'BEGIN{print "x" >> ".env"}\'',
    "awk 'BEGIN{print > \".env\"}'",
    'awk \'BEGIN{printf("%s", 1) > ".env"}\'',
    "awk '{print $0 > \".env\"}' README.md",
    'awk \'BEGIN{f=".env"; print "x" > f}\'',
    # sed: r/R read a file into the output
    "sed -n 'r .env' README.md",
    "sed 'R .env' README.md",
    "sed '1r .env' README.md",
    "sed '$r .env' README.md",
    "sed '/hello/r .env' README.md",
    "sed '1,2r .env' README.md",
    "sed '1 r .env' README.md",
    "sed -e 'r .env' -- README.md",
    "sed -n $'1{\\nr .env\\n}' README.md",
    "sed '1!r .env' README.md",
    "sed '0~2R .env' README.md",
    "sed 'r.env' README.md",
    "sed 'p;r .env' README.md",
    "sed 's/a/b/;r .env' README.md",
    "sed '1{r .env\n}' README.md",
    "sed -e p -e 'r .env' README.md",
    "sed -ne 'r .env' README.md",
    "sed -e'r .env' README.md",
    "sed -n -e 'r .env' -e p README.md",
    "sed --expression='r .env' README.md",
    "sed --expression 'r .env' README.md",
    "sed --expr='r .env' README.md",
    "sed -s -n -f read.sed README.md",
    "sed --file=read.sed README.md",
    "sed -fread.sed README.md",
    "echo 'r .env' | sed -f - README.md",
    "sed README.md -e 'r .env'",
    "sed --expression=p .env",
    "sed -ep .env",
    # sed: w/W and the s///w flag write a file
    "sed -n 'w .env' README.md",
    "sed 'W .env' README.md",
    "sed '1w .env' README.md",
    "sed 's/x/y/w .env' README.md",
    "sed -n 's/x/y/gw .env' README.md",
    "sed -n 's|x|y|w .env' README.md",
    "sed -f write.sed README.md",
]


@pytest.mark.parametrize("command", PERL_RUNS + RUBY_PHP_RUNS)
def test_a_quote_like_shell_out_is_read(root: Path, command: str) -> None:
    assert safety_in(command, root) == DESTROYS


@pytest.mark.parametrize("command", SECRET_READS)
def test_a_file_named_in_the_program_is_read_or_written(root: Path, command: str) -> None:
    assert safety_in(command, root) == SECRET


@pytest.mark.parametrize(
    "command", ["sed -f run.sed README.md", "awk -f run.awk", "awk --file run.awk"]
)
def test_a_program_file_runs_its_commands(root: Path, command: str) -> None:
    assert safety_in(command, root) == DESTROYS


@pytest.mark.parametrize(
    "command",
    [
        "awk 'BEGIN{while((getline l < ENVIRON[\"X\"])>0) print l}'",
        'awk \'BEGIN{print "x" > ENVIRON["X"]}\'',
    ],
)
def test_a_file_named_at_run_time_is_unreadable(root: Path, command: str) -> None:
    assert safety_in(command, root) == UNREADABLE


@pytest.mark.parametrize(
    "command",
    [
        "perl -e 'print q(hello)'",
        "perl -e 'print qq{rm -rf app\\n}'",
        "perl -e 'my @w = qw(rm -rf app); print \"@w\\n\"'",
        'perl -e \'open(F, "<", "README.md"); print <F>\'',
        "perl -ne 'print if /system/' README.md",
        "perl -e 'print \"system q(x)\"' ",
        "perl hello.pl",
        "ruby -e 'puts %w(rm -rf app).join(\" \")'",
        "ruby -e 'puts \"rm -rf app\"'",
        "node -e 'console.log(`rm -rf app`)'",
        "php -r 'echo \"exec\";'",
        "awk '{print $1}' data.txt",
        "awk 'BEGIN{print \"getline\"}'",
        'awk \'BEGIN{print "getline < \\".env\\""}\'',
        "awk '{ if ($1 > 2) print $1 }' data.txt",
        "awk '{print ($1 > 2)}' data.txt",
        "awk '{print $1 > \"out.txt\"}' data.txt",
        "awk 'NR==1{getline line < \"data.txt\"; print line}' data.txt",
        "awk '{while ((getline line < FILENAME) > 0) n++} END {print n}' data.txt",
        "awk -f count.awk data.txt",
        "awk -F: '{print $1}' data.txt",
        "sed -n '1p' README.md",
        "sed 's/r .env/x/' notes.txt",
        "sed 's|r .env|w .env|g' notes.txt",
        "sed -e 's/\\/r .env/x/' notes.txt",
        "sed 'y/rw/wr/' notes.txt",
        "sed '/r .env/d' notes.txt",
        "sed '1a r .env' README.md",
        "sed '1i\\\nw .env' README.md",
        "sed -n 'w out.txt' README.md",
        "sed 's/a/b/w out.txt' README.md",
        "sed -n '/^#/!p' README.md",
        "sed 'r data.txt' README.md",
        "sed -f plain.sed README.md",
        "sed -E 's/(a|b)+/x/g; s/^r$/w/' README.md",
        "sed ':a;N;$!ba;s/\\n/ /g' README.md",
        "sed -i.bak 's/hello/bye/' README.md",
    ],
)
def test_benign_look_alikes_stay_allowed(root: Path, command: str) -> None:
    assert safety_in(command, root) == ALLOWED
