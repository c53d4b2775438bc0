"""Shell commands run from the code of languages the reading has no model of.

Each of these deleted ``app/`` while ``safety`` allowed it: Julia's command literal run,
Emacs Lisp's and Lisp's ``(system "…")`` forms, Groovy's ``"…".execute()``, Scala's ``"…".!``,
Elixir's ``System.cmd``, Java's and Kotlin's ``Runtime.getRuntime().exec``, Lua's ``io.popen``,
Octave's and MATLAB's ``system``. The look-alikes print, compare or build strings only.
"""

from __future__ import annotations

import pytest
from test_named_wrappers import ALLOWED, DESTROYS, decide

from pytest_harness_audit.policy.shell.shellouts import shell_outs


@pytest.mark.parametrize(
    "command",
    [
        "julia -e 'run(`rm -rf app`)'",
        "julia -e 'read(`rm -rf app`, String)'",
        "emacs --batch --eval '(shell-command \"rm -rf app\")'",
        'emacs --batch --eval \'(call-process "rm" nil nil nil "-rf" "app")\'',
        "guile -c '(system \"rm -rf app\")'",
        "racket -e '(system \"rm -rf app\")'",
        "sbcl --eval '(uiop:run-program \"rm -rf app\")'",
        "groovy -e '\"rm -rf app\".execute()'",
        'groovy -e \'["rm", "-rf", "app"].execute()\'',
        "scala -e 'import sys.process._; \"rm -rf app\".!'",
        'scala -e \'Seq("rm", "-rf", "app").!!\'',
        'elixir -e \'System.cmd("rm", ["-rf", "app"])\'',
        "elixir -e 'System.shell(\"rm -rf app\")'",
        "kotlin -e 'Runtime.getRuntime().exec(\"rm -rf app\")'",
        'jshell -e \'new ProcessBuilder("rm", "-rf", "app").start()\'',
        "lua -e 'io.popen(\"rm -rf app\")'",
        "octave --eval 'system(\"rm -rf app\")'",
        "matlab -batch 'system(\"rm -rf app\")'",
        "matlab -r 'system(\"rm -rf app\")'",
    ],
)
def test_a_shell_out_in_another_language_is_read(command: str) -> None:
    assert decide(command) == DESTROYS


@pytest.mark.parametrize(
    "command",
    [
        "groovy -e 'println \"hello\"'",
        'scala -e \'val same = "a" != "b"\'',
        "node -e 'if (\"a\" !== process.argv[1]) {}'",
        'python3 -c \'print("x" != "y")\'',
        "python3 -c 'from multiprocessing import Process; Process(target=print).start()'",
        "julia -e 'println(`ls`)'",
        "julia -e 'run(`ls -la`)'",
        "octave --eval 'disp(1)'",
        "matlab -batch 'disp(1)'",
        "emacs --batch --eval '(message \"rm -rf app\")'",
    ],
)
def test_look_alikes_stay_allowed(command: str) -> None:
    assert decide(command) == ALLOWED


def test_the_words_of_a_list_form_are_one_command() -> None:
    assert shell_outs('(call-process "git" nil nil nil "status")') == ["git status"]
    assert shell_outs('["git", "log", "--oneline"].execute()') == ["git log --oneline"]


DELETES = ("warn", "warn-file-delete")


@pytest.mark.parametrize(
    "command",
    [
        "julia -e 'rm(\"app\"; recursive=true)'",
        "Rscript -e 'unlink(\"app\", recursive=TRUE)'",
        "R -e 'unlink(\"app\", recursive = TRUE)'",
        "emacs --batch --eval '(delete-directory \"app\" t)'",
        'octave --eval \'rmdir("app", "s")\'',
        "groovy -e 'new File(\"app\").deleteDir()'",
        "kotlin -e 'java.io.File(\"app\").deleteRecursively()'",
        "elixir -e 'File.rm_rf(\"app\")'",
        "racket -e '(delete-directory/files \"app\")'",
        "sbcl --eval '(uiop:delete-directory-tree #p\"app/\" :validate t)'",
    ],
)
def test_a_recursive_deletion_in_another_language_is_a_destruction(command: str) -> None:
    assert decide(command) == DESTROYS


@pytest.mark.parametrize(
    "command",
    [
        "lua -e 'os.remove(\"notes.txt\")'",
        "Rscript -e 'unlink(\"notes.txt\")'",
        "emacs --batch --eval '(delete-file \"notes.txt\")'",
        "emacs --batch --eval '(delete-directory \"old\")'",
        "elixir -e 'File.rm(\"notes.txt\")'",
        "groovy -e 'new File(\"notes.txt\").delete()'",
    ],
)
def test_a_file_deletion_in_another_language_is_flagged(command: str) -> None:
    assert decide(command) == DELETES


@pytest.mark.parametrize(
    "command",
    [
        "julia -e 'println(1)'",
        "Rscript -e 'print(summary(cars))'",
        "lua -e 'print(\"hi\")'",
        "elixir -e 'IO.puts(:ok)'",
        "kotlin -e 'println(listOf(1, 2).map { it * 2 })'",
    ],
)
def test_other_languages_ordinary_code_stays_allowed(command: str) -> None:
    assert decide(command) == ALLOWED
