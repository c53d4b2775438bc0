"""Programs with a built-in way to run a command or write a file, used as a way around the gate:
the command a program runs is read as that command (``git bisect run``, ``git submodule
foreach``, ``git filter-branch``'s filters, ``git rebase -x``, ``make --eval``, an ssh client's
``ProxyCommand``, ``cmake -E env``, ``gcc -wrapper``, ``split --filter``), and a file it writes
is read as a write (an editor's ``w FILE``, ``gcc -o``, ``openssl -out``, ``iconv -o``, ``xxd IN
OUT``, ``split``/``csplit`` prefixes, ``cmake -E copy``). Their ordinary use keeps its verdict."""

from __future__ import annotations

from pathlib import Path

import pytest
from policy_support import safety_in, secret_workspace

DESTROY = ("deny", "deny-destructive-commands")
HOOK = ("deny", "deny-exec-config-write")
SECRET = ("deny", "deny-secret-files")


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return secret_workspace(
        tmp_path,
        {
            "app/service.py": "print(1)\n",
            "hook.sh": "#!/bin/sh\necho planted\n",
            "cmds.vim": "!rm -rf app\nq!\n",
            "cmds.ed": "w .git/hooks/pre-commit\nq\n",
            "ssh.conf": "Host x\n  ProxyCommand rm -rf app\n",
            "match.conf": 'Match host x exec "cat .env"\n  User git\n',
            "Makefile": "test:\n\t@echo ok\n",
            "parts/01-clean": "#!/bin/sh\nrm -rf app\n",
            "job.exp": "spawn rm -rf app\nexpect eof\n",
            "ok.tcl": "puts [exec ls -l]\n",
            "pkg/setup.py": "import shutil\nshutil.rmtree('app', ignore_errors=True)\n",
            "good/setup.py": "from setuptools import setup\nsetup(name='good')\n",
            "clean.cmake": "file(REMOVE_RECURSE app)\n",
            "run.cmake": "execute_process(COMMAND rm -rf app WORKING_DIRECTORY .)\n",
            "hook.cmake": 'file(WRITE .git/hooks/pre-commit "#!/bin/sh\\n")\n',
            "incl.cmake": "include(clean.cmake)\n",
            "evil/CMakeLists.txt": 'project(x)\nexecute_process(COMMAND sh -c "rm -rf app")\n',
            "src/CMakeLists.txt": (
                "project(x)\nexecute_process(COMMAND ${GIT_EXECUTABLE} rev-parse HEAD"
                " OUTPUT_VARIABLE REV)\nfile(WRITE ${CMAKE_BINARY_DIR}/version.txt ${REV})\n"
                "file(REMOVE_RECURSE ${CMAKE_BINARY_DIR}/stale)\nadd_executable(x main.c)\n"
            ),
        },
        ("app", ".git/hooks"),
    )


@pytest.mark.parametrize(
    ("command", "decision"),
    [
        # git runs a command of its operands or options
        ("git bisect run rm -rf app", DESTROY),
        ("git bisect run sh -c 'rm -rf app'", DESTROY),
        ("git bisect run 'rm -rf app'", DESTROY),
        ("git bisect run cp hook.sh .git/hooks/pre-commit", HOOK),
        ("git submodule foreach 'rm -rf app'", DESTROY),
        ("git submodule --quiet foreach --recursive -- rm -rf app", DESTROY),
        ("git filter-branch -f --tree-filter 'rm -rf app' HEAD", DESTROY),
        ("git filter-branch --index-filter='cp hook.sh .git/hooks/pre-commit' HEAD", HOOK),
        ("git filter-branch --msg-filter 'rm -rf app; cat' HEAD", DESTROY),
        ("git rebase -x 'cp hook.sh .git/hooks/pre-commit' HEAD~1", HOOK),
        ("git rebase '-xrm -rf app' HEAD~1", DESTROY),
        # make evaluates --eval text as makefile syntax (with a makefile, and its goal first)
        ("make --eval='x: ; rm -rf app' x", DESTROY),
        ("make -E 'x: ; cp hook.sh .git/hooks/pre-commit' x", HOOK),
        ("make --eval 'first: ; rm -rf app'", DESTROY),
        ("make -sE $'x:\\n\\trm -rf app'", DESTROY),
        # an ssh client runs its local commands here
        ("ssh -o ProxyCommand='rm -rf app' x", DESTROY),
        ("ssh -oProxyCommand='cp hook.sh .git/hooks/pre-commit' x", HOOK),
        ("ssh -vo 'ProxyCommand rm -rf app' x", DESTROY),
        ("ssh -o PermitLocalCommand=yes -o LocalCommand='rm -rf app' x", DESTROY),
        ("scp -o 'KnownHostsCommand=rm -rf app' a x:b", DESTROY),
        ("ssh -F ssh.conf x", DESTROY),
        ("ssh -F match.conf x", SECRET),
        ("sshfs -o reconnect,ssh_command='rm -rf app' x: mnt", DESTROY),
        ("git -c core.sshCommand='ssh -o ProxyCommand=\"rm -rf app\"' fetch x:y", DESTROY),
        ("rsync -e 'ssh -o ProxyCommand=\"rm -rf app\"' a x:b", DESTROY),
        # a command of a build tool's options
        ("cmake -E env rm -rf app", DESTROY),
        ("cmake -E env A=1 -- rm -rf app", DESTROY),
        ("cmake -E chdir app rm -rf .", DESTROY),
        ("cmake -E time rm -rf app", DESTROY),
        ("gcc -wrapper /bin/sh,-c,'rm -rf app' x.c", DESTROY),
        ("split --filter='rm -rf app' README.md", DESTROY),
        ("split --fil='cp hook.sh .git/hooks/pre-commit' hook.sh", HOOK),
        # a wrapper around the command, or a command in a program's own syntax
        ("valgrind --tool=memcheck -q rm -rf app", DESTROY),
        ("unshare -r rm -rf app", DESTROY),
        ("nsenter -t 1 -m rm -rf app", DESTROY),
        ("chroot / rm -rf app", DESTROY),
        ("setarch x86_64 rm -rf app", DESTROY),
        ("linux64 rm -rf app", DESTROY),
        ("prlimit --nofile=10 rm -rf app", DESTROY),
        ("faketime '2020-01-01' rm -rf app", DESTROY),
        ("xvfb-run -a rm -rf app", DESTROY),
        ("dbus-run-session -- rm -rf app", DESTROY),
        ("ssh-agent rm -rf app", DESTROY),
        ("pkexec rm -rf app", DESTROY),
        ("rlwrap rm -rf app", DESTROY),
        ("perf record -o /dev/null -- rm -rf app", DESTROY),
        ("perf stat -e cycles cp hook.sh .git/hooks/pre-commit", HOOK),
        ("sg root 'rm -rf app'", DESTROY),
        ("tcsh -c 'rm -rf app'", DESTROY),
        ("socat - exec:'rm -rf app'", DESTROY),
        ("socat - 'SYSTEM:cp hook.sh .git/hooks/pre-commit',pty", HOOK),
        ("ncat -l 1234 -e 'rm -rf app'", DESTROY),
        ("nc -l -p 1234 -c 'rm -rf app'", DESTROY),
        ("start-stop-daemon --start --exec /bin/rm -- -rf app", DESTROY),
        ("run-parts parts", DESTROY),
        ("expect -c 'spawn rm -rf app; expect eof'", DESTROY),
        ("expect job.exp", DESTROY),
        ("echo 'exec rm -rf app' | tclsh", DESTROY),
        ("wish <<< 'exec cp hook.sh .git/hooks/pre-commit'", HOOK),
        ("echo 'puts [open {|rm -rf app}]' | tclsh", DESTROY),
        # a project's build code, a CMake script
        ("pip install -e pkg", DESTROY),
        ("pip install ./pkg", DESTROY),
        ("cd pkg && pip install -e .", DESTROY),
        ("cmake -P clean.cmake", DESTROY),
        ("cmake -P run.cmake", DESTROY),
        ("cmake -P hook.cmake", HOOK),
        ("cmake -P incl.cmake", DESTROY),
        ("cmake -S evil -B build", DESTROY),
        ("cmake evil", DESTROY),
        # program text writes a file by a literal name
        ("perl -e 'open(F, \">.git/hooks/pre-commit\"); print F 1'", HOOK),
        ('perl -e \'open(my $f, ">>", ".git/hooks/pre-commit")\'', HOOK),
        ("python3 -c \"open('.git/hooks/pre-commit', 'w').write('x')\"", HOOK),
        ("python3 -c \"import pathlib; pathlib.Path('.git/hooks/x').write_text('x')\"", HOOK),
        ("python3 -c \"import shutil; shutil.copy('hook.sh', '.git/hooks/pre-commit')\"", HOOK),
        ('ruby -e \'File.write(".git/hooks/pre-commit", "x")\'', HOOK),
        ('node -e \'require("fs").writeFileSync(".git/hooks/pre-commit", "x")\'', HOOK),
        ('node -e \'require("fs").copyFileSync("hook.sh", ".git/hooks/pre-commit")\'', HOOK),
        ('php -r \'file_put_contents(".git/hooks/pre-commit", "x");\'', HOOK),
        ("python3 -c \"open('SOUL.md', 'a').write('x')\"", DESTROY),
        # an editor writes its buffer
        ("vim -es -c 'w! .git/hooks/pre-commit' -c 'q!' hook.sh", HOOK),
        ("vim -es -c 'saveas .git/hooks/pre-commit' -c q hook.sh", HOOK),
        ("vim -c 'w >> .git/hooks/pre-commit' -c q hook.sh", HOOK),
        ("vim -es -c 'call writefile([\"x\"], \".git/hooks/pre-commit\")' -c 'q!'", HOOK),
        ("vi -es '+1,$w .git/hooks/pre-commit' '+q!' hook.sh", HOOK),
        ("printf 'w .git/hooks/pre-commit\\nq\\n' | ed -s hook.sh", HOOK),
        ("ed -s hook.sh <<< $'1,$W .git/hooks/pre-commit\\nq'", HOOK),
        ("ed -s hook.sh < cmds.ed", HOOK),
        ("vim -es < cmds.vim", DESTROY),
        ("echo ':!rm -rf app' | vim", DESTROY),
        # a tool's own output file
        ("gcc -o .git/hooks/pre-commit hook.c", HOOK),
        ("cc -o.git/hooks/pre-commit hook.c", HOOK),
        ("clang -o .git/hooks/post-checkout hook.c", HOOK),
        ("openssl enc -in hook.sh -out .git/hooks/pre-commit", HOOK),
        ("openssl base64 -d -in hook.b64 -out .git/hooks/post-checkout", HOOK),
        ("iconv -f utf-8 -t utf-8 -o .git/hooks/pre-commit hook.sh", HOOK),
        ("iconv -f utf-8 -t utf-8 --output=.git/hooks/pre-commit hook.sh", HOOK),
        ("xxd -r -p hook.hex .git/hooks/pre-commit", HOOK),
        ("split -n 1 hook.sh .git/hooks/pre-commit", HOOK),
        ("csplit -f .git/hooks/pre-commit hook.sh 2", HOOK),
        ("cmake -E copy hook.sh .git/hooks/pre-commit", HOOK),
        ("cmake -E copy hook.sh .git/hooks", HOOK),
        ("cmake -E copy_if_different hook.sh .git/hooks/pre-commit", HOOK),
        ("cmake -E rename hook.sh .git/hooks/pre-commit", HOOK),
        ("cmake -E create_symlink ../../hook.sh .git/hooks/pre-commit", HOOK),
        ("cmake -E touch .git/hooks/pre-commit", HOOK),
    ],
)
def test_a_command_or_a_write_a_program_makes_is_read(
    root: Path, command: str, decision: tuple[str, str]
) -> None:
    assert safety_in(command, root) == decision


@pytest.mark.parametrize(
    "command",
    [
        "git rebase main",
        "git rebase -x 'pytest -q' main",
        "git rebase --exec 'pytest -q' main",
        "git bisect start",
        "git bisect run pytest -q",
        "git bisect run ./check.sh",
        "git submodule update --init",
        "git submodule foreach git status",
        "git filter-branch --msg-filter 'sed s/a/b/' HEAD",
        "git filter-branch --index-filter 'git rm --cached --ignore-unmatch -q notes.txt' HEAD",
        "make test",
        "make -j2 test",
        "make --eval='CFLAGS += -O2' test",
        "make -E 'lint: ; @echo lint' lint",
        "cmake -E make_directory build",
        "cmake -E copy app/service.py build/",
        "cmake -E env CC=clang cmake -S . -B build",
        "cmake -E chdir build ls",
        "cmake -E time make test",
        "gcc -O2 -o build/hello hello.c",
        "gcc -wrapper valgrind hello.c",
        "g++ -std=c++17 -O2 -o test_main test_main.cpp && ./test_main",
        "xxd -r -p dump.hex build/blob && ls -l build/blob",
        "openssl enc -aes-256-cbc -pbkdf2 -k x -in app/service.py -out build/service.enc",
        "openssl dgst -sha256 app/service.py",
        "iconv -f latin1 -t utf-8 -o build/out.txt app/service.py",
        "xxd app/service.py",
        "xxd -r -p dump.hex build/blob",
        "split -l 100 app/service.py build/part-",
        "split --filter='gzip > $FILE.gz' -l 100 app/service.py part-",
        "csplit -f build/piece app/service.py 2",
        "vim -es -c '%s/a/b/g' -c 'wq' app/service.py",
        "vim -es -c '%s/a/b/g|w' app/service.py",
        "vim -es -c 'w! build/copy.py' -c 'q!' app/service.py",
        "ed -s app/service.py <<< $',s/a/b/g\\nw\\nq'",
        "echo x | vim -",
        "tar czf out.tgz app",
        "rsync -a app/ backup/",
        "sort app/service.py -o app/service.py",
        "timeout 60 make test",
        "valgrind ./build/test",
        "xvfb-run -a pytest -q",
        "perf stat make test",
        "faketime '2020-01-01' pytest -q",
        "rlwrap python3",
        "run-parts --test parts",
        "tclsh ok.tcl",
        "sg staff 'make test'",
        "pip install -e good",
        "pip install requests",
        "cmake -S src -B build",
        "cmake --build build",
        "cmake -B build",
        "python3 -c \"open('build/out.txt', 'w').write('x')\"",
        "python3 -c \"print(open('README.md').read())\"",
        "perl -e 'open(F, \"<README.md\"); print <F>'",
        'node -e \'require("fs").writeFileSync("build/out.json", "{}")\'',
    ],
)
def test_ordinary_use_stays_allowed(root: Path, command: str) -> None:
    assert safety_in(command, root) == ("allow", None)


@pytest.mark.parametrize(
    "command",
    [
        "ssh -o ProxyCommand='ssh -W %h:%p bastion' host uptime",
        "ssh -o ProxyCommand=none host uptime",
        "ssh -J bastion host uptime",
        "rsync -av -e ssh app/ host:backup/",
        "scp -o StrictHostKeyChecking=no app/service.py host:backup/",
        "socat - TCP:example.com:80",
    ],
)
def test_an_ordinary_ssh_connection_stays_a_network_warning(root: Path, command: str) -> None:
    assert safety_in(command, root) == ("warn", "warn-network")
