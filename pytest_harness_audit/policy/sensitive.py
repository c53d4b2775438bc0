"""Recognise credential-looking files and agent-memory files by path.

A file tool on a credential-looking path also counts as category ``credential_access`` for rule
matching, and both kinds produce alerts on the audit record (whether or not a rule denies them).
Matching is case-insensitive on the end of the path; the patterns are linear (no nested
quantifiers), so a hostile path cannot slow them down.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable
from typing import Final

from pytest_harness_audit.policy import wildcards
from pytest_harness_audit.policy.literal_gate import LiteralGate

_SEGMENT: Final = r"(?:^|[/\\])"
#: Extensions of source and documentation files: a file named ``secret_manager.go`` or
#: ``credentials.rs`` is code about secrets, not a secret.
SOURCE_EXTENSIONS: Final = (
    "py", "pyi", "pyx", "go", "rs", "java", "kt", "kts", "scala", "groovy", "gradle", "js",
    "jsx", "mjs", "cjs", "ts", "tsx", "rb", "php", "c", "h", "cc", "cpp", "cxx", "hpp", "hh",
    "cs", "fs", "swift", "m", "mm", "sh", "bash", "zsh", "ps1", "lua", "pl", "pm", "r", "jl",
    "ex", "exs", "erl", "hs", "ml", "clj", "dart", "vue", "svelte", "md", "markdown", "rst",
    "adoc", "html", "css", "scss", "sql", "proto", "graphql", "tf", "ipynb", "zig", "nim",
)  # fmt: skip
#: Suffixes of dotenv templates, which hold placeholders: ``.env.example`` is no secret, nor is a
#: per-environment template (``.env.local.example``, ``.env.production.sample``).
ENV_TEMPLATE_SUFFIXES: Final = ("example", "sample", "template", "dist", "defaults")
_SOURCE: Final = "|".join(SOURCE_EXTENSIONS)
#: The credential stores of common tools, by the path their tool gives them (lower case): the
#: GitHub, hub and GitLab command lines' tokens, Vault's token, boto's and s3cmd's keys, old
#: Docker logins, Windows' ``_netrc``, rclone, MySQL's login path, Terraform's token and state,
#: Apache's passwords, Sentry's token, Maven's and Gradle's user settings (repository passwords,
#: signing keys), kubeconfigs, the Azure command line's tokens, an editor's backup of ``.env``,
#: a Bitcoin wallet and the SFTP settings of editors; and the platform's own: the secrets a
#: container platform mounts (``/run/secrets/NAME``, a Kubernetes service account's token
#: under ``/var/run/secrets``), the system's password hashes (``/etc/shadow``), SSH host
#: keys, ``pass``'s store and SOPS's age keys.
TOOL_CREDENTIAL_NAMES: Final = (
    r"\.config[/\\]gh[/\\]hosts\.yml",
    r"\.config[/\\]hub",
    r"\.config[/\\]glab-cli[/\\]config\.yml",
    r"\.vault-token",
    r"\.boto",
    r"\.s3cfg",
    r"\.dockercfg",
    r"_netrc",
    r"\.?rclone\.conf",
    r"\.mylogin\.cnf",
    r"\.terraformrc",
    r"[^/\\]+\.tfstate(?:\.backup)?",
    r"\.htpasswd",
    r"\.sentryclirc",
    r"\.m2[/\\]settings(?:-security)?\.xml",
    r"\.gradle[/\\]gradle\.properties",
    r"kubeconfig(?:\.ya?ml)?",
    r"[^/\\]+\.kubeconfig",
    r"\.azure[/\\](?:accesstokens\.json|msal_token_cache\.(?:json|bin))",
    r"\.env~",
    r"wallet\.dat",
    r"sftp-config\.json",
    r"\.ftpconfig",
    r"run[/\\]secrets[/\\](?:[^/\\]+[/\\])*[^/\\]+",
    r"etc[/\\]g?shadow-?",
    r"ssh_host_[^/\\]*_key",
    r"\.password-store[/\\](?:[^/\\]+[/\\])*[^/\\]+\.gpg",
    r"sops[/\\]age[/\\]keys\.txt",
)
_CREDENTIAL: Final = re.compile(
    _SEGMENT + r"(?:"
    # a template: its last part (after `.`, `_` or `-`) a template suffix (`.env.local.example`)
    r"\.env(?:[._-](?!(?:[^/\\]*[._-])?(?:" + "|".join(ENV_TEMPLATE_SUFFIXES) + r")$)[^/\\]*)?"
    r"|[^/\\]+\.env"
    r"|[^/\\]*(?:secret|credential|apikey)(?![^/\\]*\.(?:" + _SOURCE + r")$)[^/\\]*"
    r"|tokens?(?:[._-][^/\\]*)?\.json|[^/\\]*[._-]tokens?\.json|auth(?:[._-][^/\\]*)?\.json"
    r"|[^/\\]+\.(?:pem|key|p12|pfx|jks|keystore)"
    r"|id_(?:rsa|dsa|ecdsa|ed25519)(?:_sk)?(?!\.pub$)[^/\\.]*"
    r"|\.aws[/\\](?:credentials|config)"
    r"|\.ssh[/\\](?:id_[^/\\]*(?<!\.pub)|config|known_hosts)"
    r"|\.netrc|\.pgpass|\.npmrc|\.pypirc|\.my\.cnf"
    r"|\.docker[/\\]config\.json|\.kube[/\\]config"
    r"|\.gnupg[/\\][^/\\]*|\.gpg[/\\][^/\\]*"
    r"|" + "|".join(TOOL_CREDENTIAL_NAMES) + r""
    r")$",
    re.IGNORECASE,
)
#: The credential-looking path pattern (searched on the end of a path; case-insensitive).
CREDENTIAL_PATTERN: Final = _CREDENTIAL
_CREDENTIAL_GATE: Final = LiteralGate(_CREDENTIAL)  # (most paths hold none of its names)
_MEMORY: Final = re.compile(
    r"(?:" + _SEGMENT + r"memory\.md"
    r"|" + _SEGMENT + r"memory[/\\](?:[^/\\]+[/\\])*[^/\\]+\.md"
    r"|"
    + _SEGMENT
    + r"\.(?:moltbot|clawdbot|openclaw|web4|claude)[/\\](?:[^/\\]+[/\\])*memory[^/\\]*"
    r")$",
    re.IGNORECASE,
)
# Credential files with a fixed dotted name (`.env`, `.ssh/id_rsa` …): their name in another case
# is no ordinary file but the same file on a case-insensitive file system (macOS, Windows).
# Substring names (`*secret*`, `token*.json`, `credentials.*`) are left alone: `SecretStore.java`
# or `Credentials.kt` are ordinary source files.
_FOLDABLE: Final = re.compile(
    _SEGMENT + r"(?:"
    r"\.env(?:[._-][^/\\]*)?"
    r"|\.aws[/\\](?:credentials|config)"
    r"|\.ssh[/\\](?:id_[^/\\]*|config)"
    r"|id_(?:rsa|dsa|ecdsa|ed25519)[^/\\]*"
    r"|\.netrc|\.pgpass|\.npmrc|\.pypirc|\.my\.cnf"
    r"|\.docker[/\\]config\.json|\.kube[/\\]config"
    r"|\.gnupg[/\\][^/\\]*"
    r")$",
    re.IGNORECASE,
)
_MAX_CHECKED: Final = 4096  # longer strings are not file paths; checking their tail suffices


def is_credential_path(path: str) -> bool:
    """Whether ``path`` looks like a credential or secret file."""
    return _CREDENTIAL_GATE.search(path[-_MAX_CHECKED:]) is not None


def is_memory_path(path: str) -> bool:
    """Whether ``path`` looks like an agent-memory file (``MEMORY.md``, ``memory/**/*.md`` …)."""
    return _MEMORY.search(path[-_MAX_CHECKED:]) is not None


#: Files that run code or let someone in after the session, by being there: shell start-up files
#: (a login, a new shell, ``cd`` with direnv), a desktop session's autostart entries, user
#: service units, session environment files, ssh's per-login script and authorized keys.
_STARTUP: Final = re.compile(
    r"(?:^|/)(?:\.(?:bashrc|bash_profile|bash_login|bash_logout|bash_aliases|profile|zshrc"
    r"|zprofile|zshenv|zlogin|zlogout|envrc|xprofile|xsessionrc|xinitrc|pam_environment)"
    r"|\.ssh/(?:authorized_keys2?|rc)|\.config/fish/(?:config\.fish|conf\.d/[^/]+)"
    r"|\.config/autostart/[^/]+|\.config/systemd/user/.+|\.config/environment\.d/[^/]+)$"
)


def is_startup_path(path: str) -> bool:
    """Whether ``path`` (a posix path) is a start-up file: code or access that outlives the
    session (``.bashrc``, ``.config/autostart/x.desktop``, ``~/.ssh/authorized_keys`` …)."""
    return _STARTUP.search(path[-_MAX_CHECKED:]) is not None


def any_credential(targets: Iterable[str]) -> bool:
    """Whether any of ``targets`` looks like a credential file."""
    return any(_CREDENTIAL_GATE.search(t[-_MAX_CHECKED:]) is not None for t in targets)


def folded_credential_path(path: str) -> str | None:
    """``path`` with a fixed-name credential file at its end in lower case (``.ENV`` → ``.env``).

    ``None`` when ``path`` names no such file or is already in lower case. Only the credential
    part is folded, so the rest of the path keeps its case.
    """
    # every such file is a dotfile, sits in a dot-directory or is an `id_*` key: most paths
    # stop at this test
    if path.islower() or (
        "/." not in path and path[:1] != "." and "\\." not in path and "_" not in path
    ):
        return None
    offset = max(0, len(path) - _MAX_CHECKED)
    match = _FOLDABLE.search(path, offset)
    if match is None:
        return None
    start = match.start()
    folded = path[:start] + path[start:].lower()
    return None if folded == path else folded


#: Sensitive file names a glob is matched against when the disk cannot tell what it expands to:
#: credential files and persona files. ``~/.[e]nv`` is read as ``~/.env``, ``S*L.md`` as
#: ``SOUL.md``.
GLOB_CANDIDATE_NAMES: Final = (
    ".env", ".env.local", ".env.production", ".netrc", ".pgpass", ".npmrc", ".pypirc",
    ".my.cnf", "credentials", "credentials.json", "secrets.yaml", "secrets.json", "id_rsa",
    "id_ed25519", "id_ecdsa", "SOUL.md", "IDENTITY.md", "MEMORY.md", "soul.md", "identity.md",
)  # fmt: skip
_DIRECTORY_CANDIDATES: Final = {
    ".ssh": ("id_rsa", "id_ed25519", "id_ecdsa", "id_dsa", "config"),
    ".aws": ("credentials", "config"),
    ".docker": ("config.json",),
    ".kube": ("config",),
    ".gnupg": ("secring.gpg", "private-keys-v1.d"),
}


def is_credential_folder(path: str) -> bool:
    """Whether the folder ``path`` (its last part: ``.ssh``, ``.aws`` …) holds credential files
    by their usual names: a glob below it names them (:func:`glob_candidates`)."""
    return path.rpartition("/")[2] in _DIRECTORY_CANDIDATES


def _without_wildcards(text: str) -> tuple[str, bool]:
    r"""``text`` without its wildcards (``*``, ``?``, a ``[…]`` with no ``/`` in it), and
    whether it had any, as the expression ``\[[^\]/]*\]|[*?]`` finds them, in one pass (the
    expression scans on from every ``[`` that closes nowhere: a part of 20,000 of them took a
    second)."""
    kept: list[str] = []
    found = False
    size = len(text)
    slash = -2  # the next ``/`` after the place read (-1: none)
    literal_until = 0  # a ``[`` before here opens no bracket expression
    at = 0
    while at < size:
        char = text[at]
        if char == "[" and at >= literal_until:
            if slash != -1 and slash <= at:
                slash = text.find("/", at + 1)
            stop = size if slash == -1 else slash
            close = text.find("]", at + 1, stop)
            if close >= 0:
                found = True
                at = close + 1
                continue
            literal_until = stop  # every ``[`` up to the stop finds no ``]`` before it either
        elif char in "*?":
            found = True
            at += 1
            continue
        kept.append(char)
        at += 1
    return "".join(kept), found


def glob_candidates(pattern: str, dotglob: bool = False) -> list[str]:
    """The sensitive paths a shell glob could expand to (``.e*`` → ``.env``).

    ``pattern`` is a shell glob (``*``, ``?``, ``[…]``); its last part is matched against
    :data:`GLOB_CANDIDATE_NAMES` (in a credential directory such as ``.ssh``, against the files
    that live there). A leading dot must be spelt out, as for the shell. A glob whose name has no
    literal character besides a literal extension (``*``, ``.*``, ``*.md``) names every file and
    so no file in particular: it yields nothing. ``dotglob``: the shell lets a wildcard match
    the leading dot (``shopt -s dotglob``: ``?env`` → ``.env``).
    """
    head, slash, last = pattern.rpartition("/")
    folder = head.rpartition("/")[2]
    names = _DIRECTORY_CANDIDATES.get(folder)
    if names is None:
        stem, _ = _without_wildcards(last.rsplit(".", 1)[0] if "." in last[1:] else last)
        if not stem.strip(".") or not _without_wildcards(last)[1]:
            return []
        names = GLOB_CANDIDATE_NAMES
    found = []
    closed = wildcards.closed_brackets(last)  # (once, not once a name)
    for name in names:
        if name.startswith(".") and not last.startswith(".") and not dotglob:
            continue
        if fnmatch.fnmatchcase(name, closed):
            found.append(head + slash + name)
    return found
