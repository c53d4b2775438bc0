"""Code a program loads from the workspace because of its options or its environment: native
libraries (``LD_PRELOAD`` …, ``policy/shell/native_loaders.py``), and JavaScript, Ruby and Perl
modules judged by what loading them runs (``load_time.py``, ``module_options.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from policy_support import ALLOWED, DESTROYS, UNREADABLE

from pytest_harness_audit.policy import Policy
from pytest_harness_audit.policy.shell.load_time import load_time_code

SAFETY = Policy.preset("safety")
JS = "const fs = require('fs')\nfs.rmSync('app', {recursive: true})\n"
JS_HELPER = (
    "const fs = require('fs')\nfunction clean(d) { fs.rmSync(d, {recursive: true}) }\n"
    "module.exports = {clean}\n"
)
MJS = "import fs from 'fs'\nfs.rmSync('app', {recursive: true})\n"
RUBY = "require 'fileutils'\nFileUtils.rm_rf('app')\n"
RUBY_HELPER = "require 'fileutils'\ndef clean(d)\n  FileUtils.rm_rf(d)\nend\n"
PERL = "package x;\nuse File::Path qw(rmtree);\nrmtree('app');\n1;\n"
USE = "use File::Path qw(rmtree);\n"
FOO = {"lib/Foo.pm": "package Foo;\nsub hi { print 'hi' }\n1;\n"}
PERL_HELPER = "package x;\nuse File::Path qw(rmtree);\nsub clean { rmtree($_[0]) }\n1;\n"


def _decision(root: Path, files: dict[str, str], command: str) -> tuple[str, str | None]:
    (root / "app").mkdir(exist_ok=True)
    (root / "app" / "main.txt").write_text("work\n")
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    evaluation = SAFETY.evaluate("Bash", {"command": command}, root=str(root))
    return evaluation.decision, evaluation.rule_id


@pytest.mark.parametrize(
    "command",
    [
        "LD_PRELOAD=./x.so ls",
        "LD_PRELOAD=$PWD/lib/x.so make",
        "export LD_PRELOAD=./x.so; ls",
        "env LD_PRELOAD=./x.so ls",
        "sudo LD_PRELOAD=./x.so ls",
        "LD_PRELOAD=$(pwd)/x.so ls",
        "LD_PRELOAD=/tmp/x.so ls",
        "LD_AUDIT=./x.so ls",
        "LD_LIBRARY_PATH=. ls",
        "LD_LIBRARY_PATH=:/usr/lib ls",
        "LD_LIBRARY_PATH=/usr/lib/../../tmp ls",
        "GCONV_PATH=. iconv -f x -t y notes.txt",
        "DYLD_INSERT_LIBRARIES=./x.dylib ls",
        "declare -x LD_PRELOAD=./x.so; ls",
        "LD_PRELOAD=./x.so; export LD_PRELOAD; ls",
        "env -S 'LD_PRELOAD=./x.so ls'",
        "bash -c 'LD_PRELOAD=./x.so ls'",
        "/lib64/ld-linux-x86-64.so.2 --preload ./x.so /bin/ls",
        "/lib64/ld-linux-x86-64.so.2 --library-path . /bin/ls",
        "ld.so --audit=./x.so ls",
        # the variable's own value beside other entries: unset, it leaves an empty entry, which
        # glibc searches as the folder the program runs in
        "LD_LIBRARY_PATH=/usr/local/lib:$LD_LIBRARY_PATH ls",
        "export LD_LIBRARY_PATH=/usr/local/lib:$LD_LIBRARY_PATH",
        "export LD_LIBRARY_PATH=/usr/local/lib:${LD_LIBRARY_PATH}; ls",
        "env LD_LIBRARY_PATH=/usr/local/lib:$LD_LIBRARY_PATH ls",
        "LD_LIBRARY_PATH=$LD_LIBRARY_PATH: ls",
        "LD_LIBRARY_PATH=$LD_LIBRARY_PATH:/usr/lib ls",
        "LD_LIBRARY_PATH=.:$LD_LIBRARY_PATH ls",
        "export LD_LIBRARY_PATH=.${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}",
        # glibc splits LD_LIBRARY_PATH at `;` too
        "LD_LIBRARY_PATH='/usr/lib;.' ls",
        "export LD_LIBRARY_PATH='/usr/local/lib;lib'",
        # `${X+…}` gives the word when X is set but empty: `/usr/lib:` again
        "LD_LIBRARY_PATH=/usr/lib${LD_LIBRARY_PATH+:$LD_LIBRARY_PATH} ls",
        # another variable's guard is no guard
        "LD_LIBRARY_PATH=/usr/lib${HOME:+:$HOME} ls",
        "export LD_LIBRARY_PATH=/usr/lib:$(pwd)/lib",
    ],
)
def test_a_native_library_not_the_systems_is_unreadable(tmp_path: Path, command: str) -> None:
    assert _decision(tmp_path, {"x.so": "\x7fELF", "lib/x.so": "\x7fELF"}, command) == UNREADABLE


@pytest.mark.parametrize(
    "command",
    [
        "LD_LIBRARY_PATH=/usr/local/lib ls",
        # the variable's own value only when it is set, or alone (empty when unset: ignored)
        "LD_LIBRARY_PATH=/usr/local/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} ls",
        "export LD_LIBRARY_PATH=/usr/local/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}",
        "export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}/opt/cuda/lib64; ls",
        "LD_LIBRARY_PATH=$LD_LIBRARY_PATH ls",
        "LD_LIBRARY_PATH= ls",
        # its value known from earlier in the command
        "LD_LIBRARY_PATH=/usr/lib; export LD_LIBRARY_PATH=/usr/local/lib:$LD_LIBRARY_PATH; ls",
        "export LD_LIBRARY_PATH=/usr/local/lib",
        "export LD_PRELOAD=libjemalloc.so.2:$LD_PRELOAD; ls",
        "LD_PRELOAD=libjemalloc.so.2 python3 -V",
        "LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2 ls",
        "LD_PRELOAD= ls",
        "env -u LD_PRELOAD ls",
        "echo LD_PRELOAD=./x.so",
        "cat /etc/ld.so.preload",
        "/lib64/ld-linux-x86-64.so.2 /bin/ls",
        "/lib64/ld-linux-x86-64.so.2 --list /bin/ls",
    ],
)
def test_a_system_library_is_ordinary_work(tmp_path: Path, command: str) -> None:
    assert _decision(tmp_path, {"x.so": "\x7fELF"}, command) == ALLOWED


@pytest.mark.parametrize(
    "command",
    [
        "echo /tmp/x.so > /etc/ld.so.preload",
        "echo $PWD/x.so | sudo tee /etc/ld.so.preload",
        "echo /tmp > /etc/ld.so.conf.d/x.conf",
    ],
)
def test_the_loaders_preload_list_is_exec_configuration(tmp_path: Path, command: str) -> None:
    assert _decision(tmp_path, {}, command) == ("deny", "deny-exec-config-write")


@pytest.mark.parametrize(
    ("files", "command"),
    [
        ({"x.pm": PERL}, "PERL5OPT=-Mx perl -e1"),
        ({"x.pm": PERL}, "PERL5OPT=-I. perl -Mx -e1"),
        ({"x.pm": PERL}, "PERL5OPT='-I. -Mx' perl -e1"),
        ({"x.pm": PERL}, "perl -I. -Mx -e1"),
        ({"x.pm": PERL}, "PERL5LIB=. perl -mx -e1"),
        ({"x.pm": PERL, "main.pl": "use lib '.';\nuse x;\nprint 1;\n"}, "perl main.pl"),
        ({"x.pm": PERL}, "perl -e 'require x'"),
        ({"x.pm": PERL}, "perl -e 'do \"./x.pm\"'"),
        ({"x.pm": PERL}, "perl -e 'use lib q(.); use x;'"),
        ({"x.rb": RUBY}, "RUBYOPT=-r./x ruby -e1"),
        ({"x.rb": RUBY}, "export RUBYOPT=-r./x; ruby -e1"),
        ({"x.rb": RUBY}, "ruby -r ./x.rb -e1"),
        ({"x.rb": RUBY}, "ruby -I. -rx -e1"),
        ({"x.rb": RUBY}, "RUBYLIB=. ruby -rx -e1"),
        ({"x.rb": RUBY, "main.rb": "require_relative 'x'\nputs 1\n"}, "ruby main.rb"),
        ({"x.rb": RUBY}, "ruby -e \"require './x'\""),
        ({"x.js": JS}, "node -r ./x.js -e 1"),
        ({"x.js": JS}, "node --require=./x.js -e 1"),
        ({"x.mjs": MJS}, "node --import ./x.mjs -e 1"),
        ({"x.js": JS}, "node -e \"require('./x')\""),
        ({"x.js": JS, "main.js": "require('./x')\nconsole.log(1)\n"}, "node main.js"),
        (
            {"x.js": JS, "package.json": '{"scripts": {"test": "node -e 1"}}'},
            "NODE_OPTIONS=--require=./x.js npm test",
        ),
    ],
)
def test_what_loading_a_module_runs_is_judged(
    tmp_path: Path, files: dict[str, str], command: str
) -> None:
    assert _decision(tmp_path, files, command) == DESTROYS


@pytest.mark.parametrize(
    ("files", "command"),
    [
        ({"app.js": "console.log(1)\n"}, "node -r ts-node/register app.js"),
        (FOO, "perl -Ilib -MTest::More -e1"),
        (FOO, "perl -Ilib -MFoo -e1"),
        ({}, "ruby -r json -e 'puts 1'"),
        ({}, "perl -Mstrict -e1"),
        (
            {"package.json": '{"scripts": {"test": "node -e 1"}}'},
            "NODE_OPTIONS=--max-old-space-size=4096 npm test",
        ),
        ({"x.js": JS_HELPER}, "node -r ./x.js -e 1"),
        ({"x.js": JS_HELPER}, "node -e \"require('./x')\""),
        (
            {"x.js": JS_HELPER, "package.json": '{"scripts": {"test": "node -e 1"}}'},
            "NODE_OPTIONS=--require=./x.js npm test",
        ),
        ({"x.js": JS_HELPER, "main.js": "const {clean} = require('./x')\nconsole.log(1)\n"},
         "node main.js"),
        ({"x.rb": RUBY_HELPER}, "ruby -r ./x.rb -e1"),
        ({"x.pm": PERL_HELPER}, "perl -I. -Mx -e1"),
        ({"x.pm": PERL}, "perl -e1"),
        (
            {"x.js": "// never fs.rmSync(dir, {recursive: true}) here\nconsole.log('ok')\n"},
            "node -r ./x.js -e 1",
        ),
        ({"x.rb": "# FileUtils.rm_rf('app') would be bad\nputs 'hi'\n"}, "ruby -r ./x.rb -e1"),
    ],
)  # fmt: skip
def test_ordinary_modules_keep_their_verdict(
    tmp_path: Path, files: dict[str, str], command: str
) -> None:
    assert _decision(tmp_path, files, command) == ALLOWED


def test_a_dotenv_preload_is_still_a_read_of_the_env_file(tmp_path: Path) -> None:
    files = {".env": "API_KEY=x\n", "app.js": "console.log(1)\n"}
    assert _decision(tmp_path, files, "node -r dotenv/config app.js") == (
        "deny",
        "deny-secret-files",
    )


DELETES = ("rmSync", "rm_rf(", "rmtree('app')")
R = "fs.rmSync('app', {recursive: true})"


@pytest.mark.parametrize(
    ("language", "text"),
    [
        ("js", f"const fs = require('fs')\nfunction clean() {{ {R} }}\nclean()\n"),
        ("js", f"const fs = require('fs')\nfunction clean() {{ {R} }}\nsetTimeout(clean)\n"),
        ("js", f"const fs = require('fs')\nprocess.on('exit', function () {{ {R} }})\n"),
        ("js", f"const fs = require('fs')\nfunction clean(d) {{ {R} }}\nexports.x = clean()\n"),
        ("js", f"const fs = require('fs')\nfunction clean(d) {{ '{{' }}\n{R}\n// }}\n"),
        ("js", f"const fs = require('fs')\nfunction clean(d) {{ x = /{{/ }}\n{R}\nx = /}}/\n"),
        ("js", f"const fs = require('fs')\nexport function then() {{ {R} }}\n"),
        ("js", f"const fs = require('fs')\nfunction clean(d) {{ {R} }}\nthis['cle'+'an']()\n"),
        ("js", f"const fs = require('fs')\nfunction a() {{ }} {R}\n"),
        ("js", f"var x = function () {{ {R} }}()\n"),
        ("js", f"var x = function () {{ {R} }}\n.call(null)\n"),
        ("js", f"function clean() {{ {R} }}\nmodule.exports = clean\nmodule.exports()\n"),
        ("js", f"function clean() {{ {R} }}\nrequire('vm').runInThisContext('cle' + 'an()')\n"),
        ("ruby", "require 'fileutils'\ndef clean\n  FileUtils.rm_rf('app')\nend\n"
                 ".to_proc.call(self)\n"),
        ("ruby", "require 'fileutils'\ndef clean\n  FileUtils.rm_rf('app')\nend\n"
                 "('cle' + 'an').to_sym.to_proc.call(self)\n"),
        ("perl", USE + "sub clean { rmtree('app') }\n$SIG{__WARN__} = 'cle' . 'an';\nwarn 1;\n"),
        ("perl", USE + "sub clean { rmtree('app') }\nuse overload '+' => 'cle' . 'an';\n"),
        ("perl", USE + "sub clean { rmtree('app') }\n$::{'cle' . 'an'}->();\n"),
        ("ruby", "require 'fileutils'\ndef clean\n  FileUtils.rm_rf('app')\nend\nclean\n"),
        ("ruby", "require 'fileutils'\ndef clean\n  if true\n    1\n  end end; "
                 "FileUtils.rm_rf('app'); if true\n  1\nend\n"),
        ("ruby", "require 'fileutils'\ndef f\n  1\nend; FileUtils.rm_rf('app')\n"),
        ("ruby", "require 'fileutils'\ndef to_s\n  FileUtils.rm_rf('app')\nend\nputs self\n"),
        ("ruby", "require 'fileutils'\ndef clean\n  FileUtils.rm_rf('app')\nend\nsend(:clean)\n"),
        ("perl", USE + "sub import { rmtree('app') }\n1;\n"),
        ("perl", USE + "sub clean { rmtree('app') }\nclean();\n"),
        ("perl", USE + "sub clean { '{' } rmtree('app'); sub x { '}' }\n"),
        ("perl", USE + "sub clean { 1 } rmtree('app');\n1;\n"),
        ("perl", USE + "sub DESTROY { rmtree('app') }\nbless {};\n"),
        ("perl", USE + "our @EXPORT = (clean());\nsub clean { rmtree('app') }\n"),
    ],
)  # fmt: skip
def test_code_that_runs_at_load_is_kept(language: str, text: str) -> None:
    assert any(word in load_time_code(text, language) for word in DELETES)


@pytest.mark.parametrize(
    ("language", "text"),
    [
        ("js", JS_HELPER),
        ("js", f"const clean = async (d) => {{ {R} }}\nexport {{ clean }}\n"),
        ("js", f"const fs = require('fs')\nfunction clean(d) {{\n  // done }}\n  {R}\n}}\n"),
        ("ruby", RUBY_HELPER),
        ("perl", PERL_HELPER),
        ("perl", USE + "our @EXPORT = qw(clean);\nsub clean { rmtree('app') }\n"),
    ],
)  # fmt: skip
def test_a_body_only_defined_is_left_out(language: str, text: str) -> None:
    assert not any(word in load_time_code(text, language) for word in DELETES)


def test_the_loader_run_as_a_program_runs_the_command_after_it(tmp_path: Path) -> None:
    command = "/lib64/ld-linux-x86-64.so.2 --library-path /usr/lib rm -rf app"
    assert _decision(tmp_path, {}, command) == DESTROYS


ENGINE_CONF = "[openssl_init]\nengines = e\n[e]\nx = y\n[y]\ndynamic_path = ./x.so\n"
PLAIN_CONF = "[req]\ndistinguished_name = dn\n[dn]\n"


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("OPENSSL_CONF=./engine.cnf curl https://example.invalid", UNREADABLE),
        ("OPENSSL_MODULES=. python3 -V", UNREADABLE),
        ("JAVA_TOOL_OPTIONS=-javaagent:./agent.jar java -jar app.jar", UNREADABLE),
        ("export _JAVA_OPTIONS=-Xbootclasspath/a:./x.jar; java -version", UNREADABLE),
        ("PERL5DB='BEGIN { system(\"rm -rf app\") }' perl -d -e1", DESTROYS),
        ("OPENSSL_CONF=plain.cnf openssl req -new -subj /CN=x -nodes -keyout k -out c", ALLOWED),
        ("OPENSSL_CONF=/etc/ssl/openssl.cnf openssl version", ALLOWED),
        ("JAVA_TOOL_OPTIONS='-Xmx2g -agentlib:jdwp=transport=dt_socket' java -version", ALLOWED),
        ("JAVA_TOOL_OPTIONS=-javaagent:/opt/newrelic/newrelic.jar java -jar app.jar", ALLOWED),
        ("PERL5DB='sub DB::DB {}' perl -d -e1", ALLOWED),
    ],
)
def test_code_other_runtimes_load_from_their_environment(
    tmp_path: Path, command: str, expected: tuple[str, str | None]
) -> None:
    files = {"engine.cnf": ENGINE_CONF, "plain.cnf": PLAIN_CONF}
    assert _decision(tmp_path, files, command) == expected
