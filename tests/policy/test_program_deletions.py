"""Deletions in Ruby, Perl, Node and PHP program text are judged as Python's are: a recursive
one denied (``deny-destructive-commands``), one file or an empty folder flagged
(``warn-file-delete``), in ``-e``/``-r`` text, in a script file and in a module it loads."""

from __future__ import annotations

from pathlib import Path

import pytest
from policy_support import safety_in, secret_workspace

DENIED = ("deny", "deny-destructive-commands")
FLAGGED = ("warn", "warn-file-delete")
ALLOWED = ("allow", None)

FILES = {
    "rm_r.rb": "require 'fileutils'\nFileUtils.rm_r 'app'\n",
    "remove_dir.rb": "require 'fileutils'\nFileUtils.remove_dir('app')\n",
    "pathname.rb": "require 'pathname'\nPathname.new('app').rmtree\n",
    "sent.rb": "require 'fileutils'\nFileUtils.send('rm_' + 'r', 'app')\n",
    "lib/tidy.rb": "require 'fileutils'\nFileUtils.rm_r 'app'\n",
    "tree.pl": "use File::Path qw(remove_tree);\nremove_tree('app');\n",
    "can.pl": "use File::Path;\nmy $f = 'rm' . 'tree';\nFile::Path->can($f)->('app');\n",
    "opts.js": "const fs = require('fs')\nconst o = {recursive: true}\nfs.rmSync('app', o)\n",
    "hint.rb": "# FileUtils.rm_r would remove the tree\nputs 'FileUtils.rm_r removes a tree'\n",
    "one.rb": "File.delete('app/a.rb')\n",
    "mkdir.rb": "require 'fileutils'\nFileUtils.mkdir_p 'build'\n",
    "app/a.rb": "puts 1\n",
}


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return secret_workspace(tmp_path_factory.mktemp("deletions"), FILES, ("app",))


@pytest.mark.parametrize(
    "command",
    [
        # Ruby: FileUtils' recursive removers, by any of their names, and Pathname#rmtree
        'ruby -e \'require "fileutils"; FileUtils.rm_r "app"\'',
        "ruby -e 'FileUtils.rm_r(\"app\", secure: true)'",
        "ruby -e 'FileUtils.remove_dir \"app\"'",
        "ruby -e 'FileUtils.remove_entry \"app\"'",
        "ruby -e 'FileUtils.remove_entry_secure \"app\"'",
        "ruby -e 'FileUtils.rmtree \"app\"'",
        'ruby -e \'require "pathname"; Pathname("app").rmtree\'',
        # called without its module's name, or through a symbol
        "ruby -rfileutils -e 'include FileUtils; rm_r \"app\"'",
        "ruby -e 'FileUtils.send(:rm_r, \"app\")'",
        "ruby -e 'FileUtils.method(:remove_dir).call(\"app\")'",
        # a name built of strings
        'ruby -e \'FileUtils.public_send("rm_" + "r", "app")\'',
        'ruby -e \'m = "remove_" + "dir"; FileUtils.send(m, "app")\'',
        # script files and the modules they load
        "ruby rm_r.rb",
        "ruby remove_dir.rb",
        "ruby pathname.rb",
        "ruby sent.rb",
        "ruby -e 'require_relative \"lib/tidy\"'",
        "ruby -r ./lib/tidy.rb -e 1",
        # Perl: File::Path
        "perl -MFile::Path=remove_tree -e 'remove_tree(\"app\")'",
        "perl -e 'use File::Path; File::Path::rmtree(\"app\")'",
        'perl -e \'my $f = "rm" . "tree"; File::Path->can($f)->("app")\'',
        'perl -e \'use File::Path; &{"File::Path::rm" . "tree"}("app")\'',
        "perl tree.pl",
        "perl can.pl",
        # Node: recursive removal, the options hidden from a one-level look
        'node -e \'require("fs").rmSync(require("path").join(".", "app"), {recursive: true})\'',
        'node -e \'const o = {recursive: true}; require("fs").rmSync("app", o)\'',
        'node -e \'const o = {recursive: true}; require("fs").rmSync("app", {...o})\'',
        'node -e \'require("fs").rm("app", {recursive: true}, () => {})\'',
        'node -e \'require("fs").rmdir("app", {recursive: true}, () => {})\'',
        'node -e \'require("fs").promises.rm("app", {recursive: true})\'',
        'node -e \'require("fs/promises").rm("app", {force: true, recursive: true})\'',
        "node opts.js",
        # PHP: what it runs in a shell (it has no recursive remover of its own)
        "php -r 'system(\"rm -rf app\");'",
    ],
)
def test_a_recursive_deletion_in_program_text_is_denied(root: Path, command: str) -> None:
    assert safety_in(command, root) == DENIED


@pytest.mark.parametrize(
    "command",
    [
        "ruby -e 'File.delete(\"app/a.rb\")'",
        "ruby -e 'File.unlink(\"app/a.rb\")'",
        "ruby -e 'FileUtils.rm \"app/a.rb\"'",
        "ruby -e 'FileUtils.rm_f \"app/a.rb\"'",
        "ruby -e 'FileUtils.remove_file \"app/a.rb\"'",
        "ruby -e 'FileUtils.safe_unlink \"app/a.rb\"'",
        "ruby -e 'Dir.rmdir(\"app\")'",
        "ruby -e 'Dir.delete(\"app\")'",
        "ruby one.rb",
        "perl -e 'unlink \"app/a.rb\"'",
        "perl -e 'rmdir \"app\"'",
        'node -e \'require("fs").rmSync("app/a.rb", {force: true})\'',
        'node -e \'require("fs").rm("app/a.rb", () => {})\'',
        "php -r 'unlink(\"app/a.rb\");'",
        "php -r 'rmdir(\"app\");'",
    ],
)
def test_one_file_or_an_empty_folder_removed_is_flagged(root: Path, command: str) -> None:
    assert safety_in(command, root) == FLAGGED


@pytest.mark.parametrize(
    "command",
    [
        "ruby -e 'puts 1'",
        "ruby -e 'h = {a: 1}; h.delete(:a); p h'",
        "ruby -e 'p [1, 2].map { |x| x * 2 }'",
        "ruby -e 'puts \"x\".send(:upcase)'",
        "ruby mkdir.rb",
        "ruby hint.rb",
        "ruby -e 'Dir.mkdir(\"tmpdir\")'",
        "perl -ne 'print if /def/' app/a.rb",
        "perl -e 'print \"ok\\n\"'",
        'node -e \'console.log(require("fs").readdirSync("."))\'',
        'node -e \'require("fs").mkdirSync("out", {recursive: true})\'',
        "php -r 'echo \"hi\";'",
        "php -v",
    ],
)
def test_programs_that_remove_nothing_keep_their_verdict(root: Path, command: str) -> None:
    assert safety_in(command, root) == ALLOWED


@pytest.mark.parametrize(
    "command",
    [
        # printed text that runs: only the match on the command's own text denies these (the
        # reading finds them unreadable), so a string a program prints is not left out of it
        'python3 -c "print(\'import shutil; shutil.rmtree(\\"app\\")\')" | python3',
        'python3 -c "print(\'import shutil; shutil.rmtree(\\"app\\")\')" > t.py; python3 t.py',
        "ruby -e 'puts \"require %q(fileutils); FileUtils.rm_r %q(app)\"' | ruby",
        'eval "$(python3 -c "print(\'python3 -c \\"import shutil; shutil.rmtree(0)\\"\')")"',
    ],
)
def test_a_removal_printed_into_a_program_that_runs_it_is_denied(root: Path, command: str) -> None:
    assert safety_in(command, root) == DENIED
