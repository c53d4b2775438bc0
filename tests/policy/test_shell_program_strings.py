"""Strings and comments of a workspace script file: text a script only prints, documents or
comments on names no deletion, while a string the code can run or name something with still
does (:func:`pytest_harness_audit.policy.shell.program_files.program_text`)."""

from __future__ import annotations

from pathlib import Path

import pytest
from policy_support import safety_in, secret_workspace

#: Script files that run a recursive deletion through a string: each must stay refused.
ATTACKS = {
    "exec.py": "exec('import shutil; shutil.rmtree(\"app\")')\n",
    "getattr.py": "import shutil\ngetattr(shutil, 'rmtree')('app')\n",
    "getattr_joined.py": "import shutil\ngetattr(shutil, 'rm' + 'tree')('app')\n",
    "compiled.py": "eval(compile('import shutil; shutil.rmtree(\"app\")', 'x', 'exec'))\n",
    "imported.py": "__import__('shutil').rmtree('app')\n",
    "joined_exec.py": "a = 'import shutil; shutil.rm'\nb = 'tree(\"app\")'\nexec(a + b)\n",
    "print_is_exec.py": "print = exec\nprint('import shutil; shutil.rmtree(\"app\")')\n",
    "print_rebound.py": (
        "import builtins\nbuiltins.print = exec\nprint('import shutil; shutil.rmtree(\"app\")')\n"
    ),
    "print_defined.py": (
        "def print(s):\n    exec(s)\n\n\nprint('import shutil; shutil.rmtree(\"app\")')\n"
    ),
    "print_to_child.py": (
        "import subprocess\np = subprocess.Popen(['python3'], stdin=subprocess.PIPE, text=True)\n"
        "print('import shutil; shutil.rmtree(\"app\")', file=p.stdin)\np.stdin.close()\n"
    ),
    "docstring_run.py": '"""import shutil; shutil.rmtree(\'app\')"""\nexec(__doc__)\n',
    "comment_run.py": (
        "# import shutil; shutil.rmtree('app')\n"
        "exec(open(__file__).read().split('# ')[1].split(chr(10))[0])\n"
    ),
    "rerun.py": (
        "import subprocess, sys\nprint('import shutil; shutil.rmtree(\"app\")')\n"
        "if len(sys.argv) < 2:\n"
        "    out = subprocess.run(['python3', 'rerun.py', 'x'], capture_output=True, text=True)\n"
        "    subprocess.run(['python3', '-c', out.stdout])\n"
    ),
    "stdout_rebound.py": (
        "import subprocess, sys\n"
        "p = subprocess.Popen(['python3'], stdin=subprocess.PIPE, text=True)\n"
        "sys.stdout = p.stdin\nprint('import shutil; shutil.rmtree(\"app\")')\n"
    ),
    "helper_called.py": (
        "from helpers import run\nprint('import shutil; shutil.rmtree(\"app\")')\n"
        "run('import shutil; shutil.rmtree(\"app\")')\n"
    ),
    "main_doc.py": (
        '"""import shutil; shutil.rmtree(\'app\')"""\nimport sys\n'
        "exec(sys.modules['__main__'].__doc__)\n"
    ),
    "joined_format.py": "exec('{}.{}(\"app\")'.format('import shutil; shutil', 'rmtree'))\n",
    "fstring.py": "print(f\"{__import__('shutil').rmtree('app')}\")\n",
    # a quote reused inside an f-string (Python 3.12): the code after it is code, not a string
    "quote_reused.py": "a = f\"{'\"'}\"\nprint('x'); import shutil; shutil.rmtree('app') #')\n",
    # names spelled otherwise: Python reads `ｐｒｉｎｔ` as `print`, JavaScript `\u0065val` `eval`
    "print_wide.py": "ｐｒｉｎｔ = ｅｘｅｃ\nprint('import shutil; shutil.rmtree(\"app\")')\n",
    "log_escaped.js": (
        '\\u0063onsole.log = \\u0065val\nconsole.log("fs.rmSync(dir, {recursive: true})")\n'
    ),
    "log_is_eval.js": (
        "console.log = eval\nconsole.log(\"require('fs').rmSync('app', {recursive: true})\")\n"
    ),
    "eval.js": "eval(\"require('fs').rmSync('app', {recursive: true})\")\n",
    "function.js": "new Function(\"require('fs').rmSync('app', {recursive: true})\")()\n",
    # a regex literal and a template literal read as strings: what follows is code
    "regex.js": (
        "x = /'/; y = \"'; console.log(\"; require('fs').rmSync('app', {recursive:true}); //\")\n"
    ),
    "template.js": (
        "a = `${\"`\"}\nconsole.log(\"`; require('fs').rmSync('app',{recursive:true}); //\")\n"
    ),
    "member.js": "const fs = require('fs')\nfs['rmSync']('app', {recursive: true})\n",
}

#: Script files that only print, document or comment on a deletion.
LOOK_ALIKES = {
    "says.py": "print('x = shutil.rmtree')\n",
    "says_call.py": "print('shutil.rmtree(path) removes a tree')\n",
    "says_many.py": "import sys\nprint('use', 'shutil.rmtree(p)', file=sys.stderr)\n",
    "logs.py": (
        "import logging\nlogging.basicConfig()\nlog = logging.getLogger(__name__)\n"
        "log.info('cleanup = shutil.rmtree(build)')\n"
    ),
    "documented.py": '"""Clean up.\n\nUse shutil.rmtree(path) to remove a tree.\n"""\n\nprint(1)\n',
    "commented.py": "# shutil.rmtree('app') was removed\nprint(1)\n",
    "usage.py": (
        "import argparse\nparser = argparse.ArgumentParser(description='x = 1')\n"
        "parser.add_argument('--clean', help='remove build/ (shutil.rmtree(build))')\n"
        "parser.parse_args()\n"
    ),
    "says.js": "console.log('x = fs.rmSync(dir, {recursive: true})')\n",
    "commented.js": "// fs.rmSync('app', {recursive: true}) was removed\nconsole.log(1)\n",
}


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return secret_workspace(
        tmp_path_factory.mktemp("strings"), {**ATTACKS, **LOOK_ALIKES}, ("app",)
    )


def _command(name: str) -> str:
    return f"{'node' if name.endswith('.js') else 'python3'} {name}"


@pytest.mark.parametrize("name", sorted(ATTACKS))
def test_a_string_the_code_runs_keeps_the_deletion_refused(root: Path, name: str) -> None:
    assert safety_in(_command(name), root) == ("deny", "deny-destructive-commands")


@pytest.mark.parametrize("name", sorted(LOOK_ALIKES))
def test_text_a_script_only_prints_or_comments_on_is_no_deletion(root: Path, name: str) -> None:
    assert safety_in(_command(name), root) == ("allow", None)


def test_a_program_piped_in_from_a_script_is_not_known(root: Path) -> None:
    """``python3 gen.py | python3``: the second runs what the first prints, which the reading
    cannot know (as for ``| sh``); a known text piped in is read as before."""
    assert safety_in("python3 says.py | python3", root) == ("warn", "unreadable-command")
    assert safety_in("python3 says.py | node", root) == ("warn", "unreadable-command")
    assert safety_in("echo 'print(1)' | python3", root) == ("allow", None)
    assert safety_in("python3 says.py | python3 -m json.tool", root) == ("allow", None)
    assert safety_in("python3 says.py | python3 says.py", root) == ("allow", None)


def test_a_module_of_the_workspace_that_can_rebind_print_keeps_the_strings(tmp_path: Path) -> None:
    """``import logging`` finds a ``logging.py`` beside the script first: it may make ``print``
    run its text; the strings stay read (so do those of a script importing a workspace
    module), while the same script without that file prints only."""
    script = "import logging\nprint('import shutil; shutil.rmtree(\"app\")')\n"
    workspace = secret_workspace(
        tmp_path,
        {
            "logging.py": "import builtins\nbuiltins.print = exec\n",
            "run.py": script,
            "tools/run.py": script,
            "tools/helpers/__init__.py": "",
            "tools/uses.py": "import helpers\nprint('shutil.rmtree(app)')\n",
        },
        ("app",),
    )
    assert safety_in("python3 run.py", workspace) == ("deny", "deny-destructive-commands")
    assert safety_in("python3 tools/uses.py", workspace) == ("deny", "deny-destructive-commands")
    (workspace / "logging.py").unlink()
    assert safety_in("python3 run.py", workspace) == ("allow", None)


#: Ruby and Perl script files that delete through text a line prints or comments on.
LINE_ATTACKS = {
    "interpolated.rb": "puts \"#{FileUtils.rm_rf('app')}\"\n",
    "interpolated_line.rb": "puts \"x\n#{FileUtils.rm_rf('app')}\"\n",
    "evaluated.rb": "code = \"FileUtils.rm_rf('app')\"\neval code\n",
    "sent.rb": "require 'fileutils'\nFileUtils.send(:rm_rf, 'app')\n",
    "redefined.rb": "def puts(s) = eval(s)\nputs \"FileUtils.rm_rf('app')\"\n",
    "own_text.rb": "# FileUtils.rm_rf('app')\neval File.read(__FILE__).lines.first[2..]\n",
    "helper.rb": "require './helper'\nputs \"FileUtils.rm_rf('app')\"\n",
    "heredoc.rb": "eval <<~RUBY\n  # x\n  FileUtils.rm_rf('app')\nRUBY\n",
    "code.rb": "require 'fileutils'\nFileUtils.rm_rf 'app' # clean up\n",
    "interpolated.pl": "print \"@{[ rmtree('app') ]}\";\n",
    "evaluated.pl": "my $c = \"use File::Path; rmtree('app')\";\neval $c;\n",
    "selected.pl": (
        "open(my $p, '|-', 'perl') or die;\nselect $p;\nprint \"use File::Path; rmtree('app')\";\n"
    ),
    "own_text.pl": (
        "# use File::Path; rmtree('app');\nseek DATA, 0, 0; eval join '', <DATA>;\n__DATA__\n"
    ),
    "code.pl": "use File::Path qw(rmtree);\nrmtree('app'); # clean up\n",
}

#: Ruby and Perl script files that only print or comment on a deletion.
LINE_LOOK_ALIKES = {
    "says.rb": 'puts "rm -rf app is dangerous"\nputs "FileUtils.rm_rf is not used"\n',
    "commented.rb": "# FileUtils.rm_rf('app') was removed\nputs 1\n",
    "warns.rb": "require 'fileutils'\n$stderr.puts 'FileUtils.rm_rf(dir) removes a tree'\n",
    "says.pl": 'use strict;\nuse warnings;\nprint "unlink .env\\n";\nprint "rmtree is gone\\n";\n',
    "commented.pl": "#!/usr/bin/perl\n# rmtree('app') was removed\nprint STDERR 'done';\n",
}


@pytest.fixture(scope="module")
def lines_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    files = {**LINE_ATTACKS, **LINE_LOOK_ALIKES, "helper.rb": "def puts(s) = eval(s)\n"}
    files["uses_helper.rb"] = LINE_ATTACKS["helper.rb"]
    return secret_workspace(tmp_path_factory.mktemp("lines"), files, ("app",))


def _run(name: str) -> str:
    return f"{'ruby' if name.endswith('.rb') else 'perl'} {name}"


@pytest.mark.parametrize("name", sorted(set(LINE_ATTACKS) - {"helper.rb"} | {"uses_helper.rb"}))
def test_a_ruby_or_perl_deletion_through_text_stays_refused(lines_root: Path, name: str) -> None:
    assert safety_in(_run(name), lines_root) == ("deny", "deny-destructive-commands")


@pytest.mark.parametrize("name", sorted(LINE_LOOK_ALIKES))
def test_ruby_or_perl_text_only_printed_or_commented_is_no_deletion(
    lines_root: Path, name: str
) -> None:
    assert safety_in(_run(name), lines_root) == ("allow", None)


@pytest.mark.parametrize(
    "command",
    [
        "python3 -c \"import shutil; getattr(shutil, 'rm' + 'tree')('app')\"",
        "python3 -c \"a = 'import shutil; shutil.rm'; b = 'tree(\\\"app\\\")'; exec(a + b)\"",
        "node -e \"require('fs')['rm' + 'Sync']('app', {recursive: true})\"",
        "node -e \"const m = 'rm' + 'Sync'; require('fs')[m]('app', {recursive: true})\"",
    ],
)
def test_inline_code_joining_the_name_it_runs_is_refused(root: Path, command: str) -> None:
    assert safety_in(command, root) == ("deny", "deny-destructive-commands")


@pytest.mark.parametrize(
    "command",
    [
        "python3 -c \"import os; print(getattr(os, 'sep') + 'tmp')\"",
        "node -e \"const p = require('pa' + 'th'); console.log(p['join']('a', 'b'))\"",
    ],
)
def test_inline_code_joining_harmless_names_keeps_its_verdict(root: Path, command: str) -> None:
    assert safety_in(command, root) == ("allow", None)


def test_code_loaded_before_the_script_keeps_its_strings(tmp_path: Path) -> None:
    """A folder or module the command makes the interpreter load first (``PYTHONPATH=lib``,
    ``node -r``, ``RUBYOPT``, ``perl -M``) may redefine what prints: the strings stay read."""
    workspace = secret_workspace(
        tmp_path,
        {
            "lib/logging.py": "import builtins\nbuiltins.print = exec\n",
            "run.py": "import logging\nprint('import shutil; shutil.rmtree(\"app\")')\n",
            "hook.js": "console.log = eval\n",
            "run.js": 'console.log("fs.rmSync(dir, {recursive: true})")\n',
            "hook.rb": "def puts(s) = eval(s)\n",
            "run.rb": 'puts "FileUtils.rm_rf(dir) removes a tree"\n',
        },
        ("app",),
    )
    denied = ("deny", "deny-destructive-commands")
    for command in (
        "PYTHONPATH=lib python3 run.py",
        "env PYTHONPATH=lib python3 run.py",
        "node -r ./hook.js run.js",
        "NODE_OPTIONS='--require ./hook.js' node run.js",
        "ruby -r./hook run.rb",
        "RUBYOPT=-r./hook ruby run.rb",
    ):
        assert safety_in(command, workspace) == denied, command
    for command in ("python3 run.py", "node run.js", "ruby run.rb"):
        assert safety_in(command, workspace) == ("allow", None), command
