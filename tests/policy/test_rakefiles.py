"""``rake`` runs the tasks of the workspace ``Rakefile`` (``policy/shell/rakefiles.py``): the
tasks it runs are judged as the Ruby code they are, the others are not."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_harness_audit.policy import Policy

SAFETY = Policy.preset("safety")
HELLO = "task :hello do\n  puts 'hi'\nend\n"
DESTROY = ("deny", "deny-destructive-commands")


def _decision(root: Path, files: dict[str, str], command: str) -> tuple[str, str | None]:
    (root / "app").mkdir(exist_ok=True)
    (root / ".env").write_text("KEY=1\n")
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    evaluation = SAFETY.evaluate("Bash", {"command": command}, root=str(root))
    return evaluation.decision, evaluation.rule_id


@pytest.mark.parametrize(
    ("rakefile", "command", "verdict"),
    [
        ("task :clean do\n  sh 'rm -rf app'\nend\n", "rake clean", DESTROY),
        ("task :clean do\n  rm_rf 'app'\nend\n", "rake clean", DESTROY),
        ("task :clean do\n  system 'rm -rf app'\nend\n", "rake clean", DESTROY),
        ("task :clean do\n  sh 'cat .env'\nend\n", "rake clean", ("deny", "deny-secret-files")),
        ("task default: :clean\ntask :clean do\n  rm_rf 'app'\nend\n", "rake", DESTROY),
        ("task :build => [:clean] do\n  puts 'b'\nend\ntask :clean do\n"
         "  FileUtils.rm_rf('app')\nend\n", "rake build", DESTROY),
        ("namespace :db do\n  task :clean do\n    sh 'rm', '-rf', 'app'\n  end\nend\n",
         "rake db:clean", DESTROY),
        ("FileUtils.rm_rf 'app'\n" + HELLO, "rake hello", DESTROY),
        (HELLO + "task :clean do\n  rm_rf 'app'\nend\nRake::Task[:hello].enhance([:clean])\n",
         "rake hello", DESTROY),
        (HELLO, "rake -e \"FileUtils.rm_rf('app')\"", DESTROY),
        ("require 'rake/clean'\nCLEAN.include('app')\n", "rake clean", DESTROY),
        ("task :clean do\n  d = ARGV[1]\n  sh \"rm -rf #{d}\"\nend\n", "rake clean",
         ("warn", "unreadable-command")),
        (HELLO + "task :clean do\n  rm_rf 'app'\nend\n", "rake -f Rakefile clean[x]", DESTROY),
        (HELLO + "task :clean do\n  rm_rf 'app'\nend\n", "rake -- clean", DESTROY),
    ],
)  # fmt: skip
def test_the_tasks_rake_runs_are_judged(
    tmp_path: Path, rakefile: str, command: str, verdict: tuple[str, str | None]
) -> None:
    assert _decision(tmp_path, {"Rakefile": rakefile}, command) == verdict


def test_a_rakefile_elsewhere_and_a_library_required(tmp_path: Path) -> None:
    clean = "task :clean do\n  rm_rf 'app'\nend\n"
    assert _decision(tmp_path, {"sub/Rakefile": clean}, "rake -C sub clean") == DESTROY
    files = {"Rakefile": HELLO, "x.rb": "FileUtils.rm_rf('app')\n"}
    assert _decision(tmp_path, files, "rake -r ./x.rb hello") == DESTROY


def test_a_rakelib_file_is_loaded(tmp_path: Path) -> None:
    files = {"Rakefile": HELLO, "rakelib/x.rake": "task :x do\n  rm_rf 'app'\nend\n"}
    assert _decision(tmp_path, files, "rake hello") == DESTROY


@pytest.mark.parametrize(
    ("rakefile", "command"),
    [
        (HELLO, "rake hello"),
        (HELLO + "task :clean do\n  rm_rf 'app'\nend\n", "rake hello"),
        ("task :test do\n  sh 'pytest -q'\nend\ntask :clean do\n  sh 'rm -rf app'\nend\n",
         "rake test"),
        ("# run with ruby 3\ntask default: :test\ntask :test do\n  ruby 'app/x.rb'\nend\n"
         "task :nuke do\n  rm_rf 'app'\nend\n", "rake"),
        ("require 'rake/clean'\nCLEAN.include('app')\n" + HELLO, "rake hello"),
    ],
)  # fmt: skip
def test_tasks_that_do_not_run_are_not_judged(tmp_path: Path, rakefile: str, command: str) -> None:
    assert _decision(tmp_path, {"Rakefile": rakefile}, command) == ("allow", None)
