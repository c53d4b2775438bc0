from __future__ import annotations

import os
from pathlib import Path

import git
import pytest

from pytest_harness_audit.errors import HarnessAuditError
from pytest_harness_audit.session import workspace
from pytest_harness_audit.session.workspace import (
    WorkspaceError,
    base_revision,
    changed_files,
    create_workspace,
    diff,
    list_templates,
)


@pytest.fixture
def fresh_seeds(monkeypatch: pytest.MonkeyPatch) -> None:
    """Forget the seed repositories built so far, so the next workspace is built with git."""
    monkeypatch.setattr(workspace, "_SEEDS", workspace._SeedCache())


# -- creation --------------------------------------------------------------------------------


def test_shipped_templates() -> None:
    assert list_templates() == ["empty", "node-package", "python-service"]


def test_python_service_carries_its_secrets_and_agent_files(tmp_path: Path) -> None:
    repo = create_workspace(tmp_path / "ws", "python-service")
    root = Path(repo.working_dir)
    tracked = set(repo.git.ls_files().splitlines())
    for name in [
        ".env",
        "config/credentials.json",
        "MEMORY.md",
        "SOUL.md",
        "README.md",
        "pyproject.toml",
        "app/pricing.py",
        "tests/test_pricing.py",
    ]:
        assert name in tracked, name
    assert "API_KEY=sk-test-" in (root / ".env").read_text()


def test_node_package_carries_its_token(tmp_path: Path) -> None:
    repo = create_workspace(tmp_path / "ws", "node-package")
    tracked = set(repo.git.ls_files().splitlines())
    assert {".npmrc", "package.json", "src/index.js", "README.md"} <= tracked
    assert any(name.startswith("test/") for name in tracked)


def test_initial_commit_is_by_the_harness_on_main_at_a_fixed_date(tmp_path: Path) -> None:
    repo = create_workspace(tmp_path / "ws", "python-service")
    commit = repo.head.commit
    assert repo.active_branch.name == "main"
    assert (commit.author.name, commit.author.email) == ("Harness Audit", "harness@example.invalid")
    assert (commit.committer.name, commit.committer.email) == (
        "Harness Audit",
        "harness@example.invalid",
    )
    assert commit.authored_date == commit.committed_date == 1704067200
    assert commit.message == "Initial commit: python-service workspace\n"
    assert len(list(repo.iter_commits())) == 1
    assert base_revision(repo) == commit.hexsha
    # the workspace holds no ref of the auditor's: its history is the agent's and the user's
    assert repo.git.for_each_ref("--format=%(refname)") == "refs/heads/main"
    assert not repo.is_dirty(untracked_files=True)


@pytest.mark.parametrize("template", ["python-service", "node-package", "empty"])
def test_same_template_gives_the_same_commit_id(
    tmp_path: Path, template: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(workspace, "_SEEDS", workspace._SeedCache())
    built = create_workspace(tmp_path / "a", template).head.commit.hexsha
    copied = create_workspace(tmp_path / "b", template).head.commit.hexsha
    monkeypatch.setattr(workspace, "_SEEDS", workspace._SeedCache())
    rebuilt = create_workspace(tmp_path / "c", template).head.commit.hexsha
    assert built == copied == rebuilt


def test_different_templates_give_different_commits(tmp_path: Path) -> None:
    first = create_workspace(tmp_path / "a", "python-service").head.commit.hexsha
    second = create_workspace(tmp_path / "b", "node-package").head.commit.hexsha
    assert first != second


def test_workspaces_are_independent(tmp_path: Path) -> None:
    first = create_workspace(tmp_path / "a", "python-service")
    second = create_workspace(tmp_path / "b", "python-service")
    (Path(first.working_dir) / "README.md").write_text("changed\n")
    first.git.commit("-am", "change")
    assert changed_files(second) == []
    assert second.head.commit.hexsha != first.head.commit.hexsha


def test_none_is_the_empty_template(tmp_path: Path) -> None:
    repo = create_workspace(tmp_path / "ws")
    assert repo.git.ls_files().splitlines() == ["README.md"]
    assert repo.head.commit.message == "Initial commit: empty workspace\n"


def test_template_from_a_path(tmp_path: Path, fresh_seeds: None) -> None:
    template = tmp_path / "my-template"
    (template / "src").mkdir(parents=True)
    (template / "src" / "main.py").write_text("print('hi')\n")
    (template / ".git").mkdir()  # a template's own repository is not copied
    (template / ".git" / "HEAD").write_text("garbage\n")
    repo = create_workspace(tmp_path / "ws", template)
    assert repo.git.ls_files().splitlines() == ["src/main.py"]
    assert repo.head.commit.message == "Initial commit: my-template workspace\n"
    assert create_workspace(tmp_path / "ws2", str(template)).head.commit == repo.head.commit


def test_a_changed_template_gives_a_new_commit(tmp_path: Path, fresh_seeds: None) -> None:
    template = tmp_path / "tpl"
    template.mkdir()
    (template / "a.txt").write_text("one\n")
    before = create_workspace(tmp_path / "ws1", template).head.commit.hexsha
    (template / "a.txt").write_text("two, longer\n")
    after = create_workspace(tmp_path / "ws2", template)
    assert after.head.commit.hexsha != before
    assert (Path(after.working_dir) / "a.txt").read_text() == "two, longer\n"


def test_executable_bits_and_symlinks_survive(tmp_path: Path, fresh_seeds: None) -> None:
    template = tmp_path / "tpl"
    template.mkdir()
    script = template / "run.sh"
    script.write_text("#!/bin/sh\necho hi\n")
    script.chmod(0o755)
    (template / "link").symlink_to("run.sh")
    repo = create_workspace(tmp_path / "ws", template)
    entries = {
        line.split("\t")[1]: line.split()[0] for line in repo.git.ls_files("-s").splitlines()
    }
    assert entries == {"link": "120000", "run.sh": "100755"}


def test_unknown_template_lists_the_available_ones(tmp_path: Path) -> None:
    with pytest.raises(WorkspaceError) as caught:
        create_workspace(tmp_path / "ws", "django-app")
    assert str(caught.value) == (
        "unknown workspace template 'django-app' (available: empty, node-package, python-service)"
    )
    assert isinstance(caught.value, HarnessAuditError)
    assert not (tmp_path / "ws").exists()


def test_missing_template_directory(tmp_path: Path) -> None:
    with pytest.raises(WorkspaceError, match="workspace template is not a directory: "):
        create_workspace(tmp_path / "ws", tmp_path / "nowhere")


def test_destination_must_be_empty(tmp_path: Path) -> None:
    dest = tmp_path / "ws"
    dest.mkdir()
    create_workspace(dest, "empty")  # an empty directory is fine
    with pytest.raises(WorkspaceError, match="exists and is not empty"):
        create_workspace(dest, "empty")


def test_user_git_configuration_does_not_leak_in(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fresh_seeds: None
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / ".gitconfig").write_text(
        "[diff]\n\tnoprefix = true\n[core]\n\tautocrlf = true\n"
        "[user]\n\tname = Somebody Else\n[init]\n\tdefaultBranch = trunk\n"
    )
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("GIT_CONFIG_GLOBAL", raising=False)
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    reference = create_workspace(tmp_path / "ref", "python-service").head.commit.hexsha
    monkeypatch.setattr(workspace, "_SEEDS", workspace._SeedCache())
    repo = create_workspace(tmp_path / "ws", "python-service")
    assert repo.head.commit.hexsha == reference
    assert repo.active_branch.name == "main"
    assert repo.head.commit.author.name == "Harness Audit"
    (Path(repo.working_dir) / "README.md").write_text("new\n")
    assert "--- a/README.md\n+++ b/README.md\n" in diff(repo)


# -- what changed ----------------------------------------------------------------------------


@pytest.fixture
def service(tmp_path: Path) -> git.Repo:
    return create_workspace(tmp_path / "ws", "python-service")


def root_of(repo: git.Repo) -> Path:
    return Path(repo.working_dir)


def test_nothing_changed_at_first(service: git.Repo) -> None:
    assert changed_files(service) == []
    assert diff(service) == ""


def test_changed_files_covers_every_kind_of_change(service: git.Repo) -> None:
    root = root_of(service)
    (root / "app" / "pricing.py").write_text("# rewritten\n")
    (root / ".env").unlink()
    (root / "notes").mkdir()
    (root / "notes" / "todo.md").write_text("- a\n")
    (root / "staged.txt").write_text("staged\n")
    service.git.add("staged.txt")
    (root / "app" / "__pycache__").mkdir()
    (root / "app" / "__pycache__" / "x.pyc").write_bytes(b"ignored by .gitignore")
    assert changed_files(service) == [
        ".env",
        "app/pricing.py",
        "notes/todo.md",
        "staged.txt",
    ]


def test_committed_changes_still_count(service: git.Repo) -> None:
    root = root_of(service)
    (root / "MEMORY.md").write_text("poisoned\n")
    (root / "extra.txt").write_text("x\n")
    service.git.add("--all")
    service.git.commit("-m", "agent commit")
    assert changed_files(service) == ["MEMORY.md", "extra.txt"]
    assert "+poisoned" in diff(service)


def test_a_repository_the_auditor_did_not_make_counts_from_head(tmp_path: Path) -> None:
    root = tmp_path / "own"
    repo = git.Repo.init(root)
    (root / "kept.txt").write_text("x\n")
    repo.git.add("kept.txt")
    repo.git.commit(
        "-m",
        "one",
        env={
            "GIT_AUTHOR_NAME": "a",
            "GIT_AUTHOR_EMAIL": "a@b",
            "GIT_COMMITTER_NAME": "a",
            "GIT_COMMITTER_EMAIL": "a@b",
        },
    )
    (root / "a.txt").write_text("x\n")
    assert changed_files(repo) == ["a.txt"]


def test_changed_files_in_a_repository_without_commits(tmp_path: Path) -> None:
    repo = git.Repo.init(tmp_path / "bare-start")
    (tmp_path / "bare-start" / "b.txt").write_text("x\n")
    (tmp_path / "bare-start" / "a.txt").write_text("x\n")
    repo.git.add("a.txt")
    assert changed_files(repo) == ["a.txt", "b.txt"]


def test_diff_shows_modifications_deletions_and_untracked_additions(service: git.Repo) -> None:
    root = root_of(service)
    pricing = root / "app" / "pricing.py"
    pricing.write_text(pricing.read_text().replace("* 20 // 100", "* TAX // 100"))
    (root / "SOUL.md").unlink()
    (root / "new.txt").write_text("hello\nworld\n")
    text = diff(service)
    assert text.index("diff --git a/SOUL.md b/SOUL.md") < text.index("diff --git a/app/pricing.py")
    assert "-    return discounted + discounted * 20 // 100\n" in text
    assert "+    return discounted + discounted * TAX // 100\n" in text
    assert "deleted file mode 100644\n" in text
    assert text.endswith(
        "diff --git a/new.txt b/new.txt\nnew file mode 100644\n"
        "index 0000000..94954ab\n--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1,2 @@\n+hello\n+world\n"
    )


def test_diff_and_changed_files_leave_the_staging_area_alone(service: git.Repo) -> None:
    root = root_of(service)
    (root / "new.txt").write_text("x\n")
    (root / "README.md").write_text("changed\n")
    staged_before = service.git.ls_files("--stage")
    diff(service)
    changed_files(service)
    assert service.git.ls_files("--stage") == staged_before
    assert service.git.status("--porcelain") == " M README.md\n?? new.txt"


def test_commits_made_inside_the_workspace_use_the_harness_identity(service: git.Repo) -> None:
    env = {"HOME": service.working_dir, "PATH": os.environ["PATH"]}
    root = root_of(service)
    (root / "x.txt").write_text("x\n")
    service.git.add("x.txt")
    service.git.execute(["git", "commit", "-qm", "by the agent"], env=env)
    assert service.head.commit.author.email == "harness@example.invalid"
