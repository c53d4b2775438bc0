"""Archives and decompressors writing protected files: a member named on the command line is
written where the extraction puts it, an archive created onto a file writes that file, a
decompressor writes the name without its suffix, and sed's separate ``-e e`` runs the text the
substitution before it made. Ordinary extractions, archives and edits stay allowed."""

from __future__ import annotations

from pathlib import Path

import pytest
from policy_support import safety_in, secret_workspace

from pytest_harness_audit.policy.shell.reading import read_command
from pytest_harness_audit.policy.shell.tar_words import tar_words


@pytest.fixture
def root(tmp_path: Path) -> Path:
    files = {
        "SOUL.md": "# who I am\n",
        "notes.txt": "hello\n",
        "cmds.txt": "rm -rf app\n",
        "dates.txt": "date\n",
        "names.txt": "SOUL.md\n",
        "run.sed": "e\n",
        "swap.sed": "s/.*/rm -rf app/\ne\n",
    }
    return secret_workspace(tmp_path, files, ("app", "src", "build", ".claude", ".git/hooks"))


@pytest.mark.parametrize(
    "command",
    [
        "tar xf x.tar SOUL.md",
        "tar -xf x.tar -C . SOUL.md",
        "tar xzf x.tgz ./SOUL.md",
        "tar --extract --file=x.tar SOUL.md",
        "tar xf x.tar --strip-components=1 pkg/SOUL.md",
        "tar -xf x.tar -C .claude settings.json",
        "tar xfC x.tar .claude settings.json",
        "tar -xC .claude -f x.tar settings.json",
        "tar xf x.tar -T names.txt",
        "gtar -x -f x.tar -- SOUL.md",
        "tar -s -xf x.tar SOUL.md",
        "tar --strip=1 -xf x.tar pkg/SOUL.md",
        "bsdtar -xf x.tar SOUL.md",
        "unzip -o x.zip SOUL.md",
        "unzip -o x.zip SOUL.md -x a.txt b.txt",
        "unzip -j x.zip deep/SOUL.md",
        "7z x x.7z SOUL.md",
        "7z e x.7z deep/SOUL.md",
        "7z x x.7z -i!SOUL.md",
        "7z x x.7z -ir!SOUL.md -y",
        "cpio -i -E names.txt < a.cpio",
        "jar xf x.jar SOUL.md",
        "ar x lib.a SOUL.md",
        "cpio -i SOUL.md < a.cpio",
        "cpio -idm SOUL.md < a.cpio",
        "cd src && cpio -i -D .. SOUL.md < ../a.cpio",
    ],
)
def test_an_extraction_of_a_named_protected_member_is_denied(root: Path, command: str) -> None:
    assert safety_in(command, root)[0] == "deny", command


@pytest.mark.parametrize(
    "command",
    [
        "tar cf SOUL.md app",
        "tar -cf .claude/settings.json app",
        "tar --create --file SOUL.md app",
        "tar -rf SOUL.md app",
        "tar czf out.tgz app --index-file=SOUL.md",
        "tar -czg SOUL.md -f out.tgz app",
        "cmake -E tar cf SOUL.md app",
        "bsdtar -cf SOUL.md app",
        "7z a SOUL.md app",
        "jar cf SOUL.md app",
        "pax -w -f SOUL.md app",
        "ar rc SOUL.md app.o",
        "python3 -m zipfile -c SOUL.md app",
        "python3 -m tarfile -c .claude/settings.json app",
        "zip SOUL.md app",
        "gunzip SOUL.md.gz",
        "gzip -d SOUL.md.gz",
        "gunzip -S .x SOUL.md.x",
        "xz -d .claude/settings.json.xz",
        "zstd -d x.zst -o SOUL.md",
    ],
)
def test_an_archive_or_decompressed_file_onto_a_protected_file_is_denied(
    root: Path, command: str
) -> None:
    assert safety_in(command, root)[0] == "deny", command


@pytest.mark.parametrize(
    "command",
    [
        "sed -e 's/.*/rm -rf app/' -e e notes.txt",
        "sed --expression='s/.*/rm -rf app/' --expression=e notes.txt",
        "sed -n -e 's/.*/rm -rf app/' -e 'e' notes.txt",
        "sed -e 's/^.*$/rm -rf app/;e' notes.txt",
        "sed -e 's/.*/rm -rf app/' -f run.sed notes.txt",
        "sed -f swap.sed notes.txt",
        "sed -e 's/.*/rm -rf app/e' -f missing.sed notes.txt",
        "sed -e 's/.*/rm -rf app/' -e e -f missing.sed notes.txt",
        "sed e cmds.txt",
        "sed -e e cmds.txt",
        "cat cmds.txt | sed e",
        "sed -i -e 's/.*/rm -rf app/' -e e notes.txt",
    ],
)
def test_sed_e_running_a_destructive_text_is_denied(root: Path, command: str) -> None:
    assert safety_in(command, root)[0] == "deny", command


@pytest.mark.parametrize(
    "command",
    [
        "tar xfI x.tar 'rm -rf app'",
        "tar xfF x.tar 'rm -rf app'",
        "tar -xF'rm -rf app' -f x.tar",
        "tar -xf x.tar -I'rm -rf app'",
        "tar --rmt-command='rm -rf app' -xf h:x.tar",
        "tar -xf x.tar --checkpoint-action 'exec=rm -rf app'",
        "bsdtar --use-compress-program='rm -rf app' -xf x.tar",
        "gtar --to-command='rm -rf app' -xf x.tar",
        "tar --to-command='rm -rf app' -xf x.tar",
        "tar --use-compress-program='sh -c \"rm -rf app\"' -xf x.tar",
        "tar --rsh-command='rm -rf app' -xf h:x.tar",
        "tar --info-script='rm -rf app' -xf x.tar",
        "tar --new-volume-script='rm -rf app' -xf x.tar",
    ],
)
def test_a_command_in_a_tar_option_is_read_as_a_script(root: Path, command: str) -> None:
    assert safety_in(command, root)[0] == "deny", command


@pytest.mark.parametrize(
    "command",
    [
        "tar -I zstd -xf x.tar.zst",
        "tar xfI x.tar.zst zstd",
        "tar --use-compress-program='zstd -19' -cf o.tar.zst app",
        "tar xf x.tar --checkpoint-action=ttyout=hi",
        "bsdtar -x -I names.txt -f x.tar",
        "tar --to-command='sha256sum' -xf x.tar",
    ],
)
def test_ordinary_tar_option_commands_stay_allowed(root: Path, command: str) -> None:
    assert safety_in(command, root)[0] == "allow", command


@pytest.mark.parametrize(
    "command",
    [
        "tar xf x.tar",
        "tar xf x.tar src/",
        "tar xzf x.tgz src/main.py",
        "tar czf out.tgz app",
        "tar cf - app",
        "tar -tf SOUL.md",
        "tar xf SOUL.md",
        "tar --checkpoint=100 -xf x.tar",
        "tar xf x.tar --exclude SOUL.md",
        "tar -xOf x.tar SOUL.md",
        "tar xf x.tar -C build",
        "unzip x.zip -d build",
        "unzip -p x.zip SOUL.md",
        "unzip -l x.zip SOUL.md",
        "unzip x.zip '*.py' -x SOUL.md",
        "cpio -it SOUL.md < a.cpio",
        "cpio -if SOUL.md < a.cpio",
        "7z l x.7z SOUL.md",
        "7z x x.7z -x!SOUL.md -obuild",
        "jar xf x.jar META-INF/MANIFEST.MF",
        "jar tf x.jar SOUL.md",
        "ar x lib.a a.o",
        "ar t lib.a SOUL.md",
        "cmake -E tar cf out.tar app",
        "7z a out.7z SOUL.md",
        "zip out.zip SOUL.md",
        "gunzip data.csv.gz",
        "gzip -dc SOUL.md.gz",
        "zcat SOUL.md.gz",
        "gzip -k notes.txt",
        "sed -e 's/a/b/' -e 's/c/d/' notes.txt",
        "sed -e 's/.*/date/' -e e notes.txt",
        "sed e dates.txt",
        "sed -n '/e/p' notes.txt",
    ],
)
def test_ordinary_archives_and_edits_stay_allowed(root: Path, command: str) -> None:
    assert safety_in(command, root)[0] == "allow", command


@pytest.mark.parametrize(
    "command",
    [
        "git log --format=%s | sed e",
        "sed -e 's/x/rm -rf app/' -e e notes.txt",
        "sed -e e missing.txt",
    ],
)
def test_sed_e_running_an_unknown_text_stays_a_warning(root: Path, command: str) -> None:
    assert safety_in(command, root)[0] == "warn", command


def test_a_named_member_lands_under_the_extraction_folder(root: Path) -> None:
    assert "build/SOUL.md" in read_command("unzip x.zip SOUL.md -d build", str(root)).writes
    assert (
        "SOUL.md" not in read_command("tar xf x.tar --transform s/a/b/ SOUL.md", str(root)).writes
    )


def test_tar_words_take_values_in_letter_order() -> None:
    words = tar_words("tar", ["xvfC", "x.tar", "out", "--exclude", "a", "m", "--", "-n"])
    assert (words.modes, words.archive, words.operands) == ("x", "x.tar", ["m", "-n"])
    assert words.value("-C") == "out" and words.extracts() and not words.creates()
    bsd = tar_words("bsdtar", ["-xs", "/a/b/", "-f", "x.tar", "m"])
    assert bsd.operands == ["m"] and bsd.value("-s") == "/a/b/"
