"""Which values of a workspace's credential files are secrets.

A credential file is what :func:`pytest_harness_audit.policy.sensitive.is_credential_path` says
it is, less the files that hold no secret by their nature: templates (``.env.example``,
``.env.sample``, ``.env.template``, ``.env.dist``), public keys (``*.pub``, PEM ``PUBLIC KEY``
and ``CERTIFICATE`` blocks), ``known_hosts`` and ``.ssh/config``, and source or documentation
files whose name merely contains ``secret`` or ``credential`` (``secret_manager.go``).

From each such file (up to :data:`MAX_FILE_BYTES`, binary files skipped):

* JSON and YAML documents: every string value, judged with its key;
* other text: ``KEY=value`` / ``export KEY="value"`` / ``key = value`` / ``key: value`` lines
  (quotes removed, an unquoted value ends at `` #``), a line of one word (a token file such as
  ``.vault-token``), ``.netrc`` ``password``/``login`` words and the password field of
  ``.pgpass`` lines;
* anywhere: the body of a PEM private-key block, line by line (so a partial leak is found), and
  the password of a URL (``postgres://user:pw@host``).

A value counts when its key names a secret (``KEY``, ``TOKEN``, ``PASSWORD``, ``AUTH`` …) and it
is at least :data:`MIN_KEYED` characters, or when it looks like one on its own: no whitespace,
at least :data:`MIN_UNKEYED` characters, letters and digits mixed. Trivial values (``true``,
``localhost``, numbers shorter than 16 digits, words of letters, ``-`` and ``_`` shorter than 16
characters such as ``database`` or ``service_account``), URLs without a password, e-mail
addresses and paths never count. Labels are ``<path>:<key>``: names, never values.
"""

from __future__ import annotations

import itertools
import json
import os
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from urllib.parse import urlsplit

import yaml

from pytest_harness_audit.inspect.regular_files import read_regular
from pytest_harness_audit.policy.sensitive import is_credential_path

MAX_FILE_BYTES = 1024 * 1024
MAX_FILES = 50_000
MIN_KEYED = 8
MIN_UNKEYED = 12
MAX_LINE = 4096
_WORDLIKE = 16
#: Folders the walk for credential files does not enter.
SKIPPED_DIRS = {".git", "node_modules", ".venv", "venv", "__pycache__", ".tox", ".mypy_cache"}
_TEMPLATE = re.compile(
    r"(?:^|[/\\])\.env[._-](?:[^/\\]*[._-])?(?:example|sample|template|dist|defaults?)$", re.I
)
_NOT_SECRET_FILE = re.compile(r"(?:\.pub|[/\\]known_hosts|\.ssh[/\\]config)$", re.I)
_SOURCE_SUFFIXES = {
    ".py", ".go", ".rs", ".js", ".mjs", ".cjs", ".ts", ".tsx", ".jsx", ".java", ".kt", ".rb",
    ".c", ".h", ".cc", ".cpp", ".hpp", ".cs", ".swift", ".php", ".scala", ".md", ".rst",
    ".html", ".css", ".sh",
}  # fmt: skip
_KEY_WORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+")
_SECRET_WORDS = frozenset(
    {
        "key", "token", "secret", "password", "passwd", "pwd", "pass", "passphrase", "credential",
        "credentials", "auth", "private", "salt", "signature", "dsn", "cookie", "session",
        "bearer", "webhook", "pin", "otp",
    }
)  # fmt: skip
_SECRET_ENDINGS = ("key", "token", "secret", "password", "passwd", "pwd")
_ASSIGNMENT = re.compile(r"^(?:export\s+)?([^\s=:#][^=]*?)\s*(?:=|:\s)\s*(.*)$")
_PEM = re.compile(
    r"-----BEGIN ([A-Z0-9 ]{1,40})-----(.{0,65536}?)-----END \1-----", re.DOTALL | re.ASCII
)
_TRIVIAL = {
    "true", "false", "null", "none", "localhost", "production", "development", "changeme",
    "disabled", "enabled", "undefined", "required", "optional", "password", "username",
}  # fmt: skip
_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[A-Za-z]{2,}$")
_NUMBERED_LINE = re.compile(r"^\s*\d+\t")
_NETRC_WORDS = {"password", "passwd", "login", "account"}


def is_secret_file(relative: str) -> bool:
    """Whether the workspace file at ``relative`` is one secrets are learned from."""
    if not is_credential_path(relative) or _TEMPLATE.search(relative):
        return False
    if _NOT_SECRET_FILE.search(relative):
        return False
    return os.path.splitext(relative)[1].lower() not in _SOURCE_SUFFIXES


def _plain_value(value: str) -> bool:
    lowered = value.lower()
    if lowered in _TRIVIAL or (lowered.isdigit() and len(value) < 16):
        return True
    if _EMAIL.match(value) or value.startswith(("/", "./", "../", "~/")):
        return True
    if len(value) < _WORDLIKE and value.replace("-", "").replace("_", "").isalpha():
        return True  # `database`, `service_account`: a setting, not a secret
    return len(set(value)) <= 2


def url_password(value: str) -> str | None:
    """The password of a URL with credentials (``scheme://user:pw@host``), else ``None``."""
    if "://" not in value or "@" not in value:
        return None
    try:
        return urlsplit(value.strip()).password
    except ValueError:
        return None


def judged(key: str, value: str) -> Iterator[str]:
    """The secrets a ``key``/``value`` pair holds (the value, a URL's password, PEM lines)."""
    stripped = value.strip()
    if "-----BEGIN" in stripped:
        yield from pem_lines(stripped)
        return
    password = url_password(stripped)
    if password is not None:
        if len(password) >= MIN_KEYED // 2 + 2 and not _plain_value(password):
            yield password
        return
    if "://" in stripped or _plain_value(stripped):
        return
    if secret_key(key):
        if len(stripped) >= MIN_KEYED:
            yield stripped
        return
    if (
        len(stripped) >= MIN_UNKEYED
        and not any(c.isspace() for c in stripped)
        and any(c.isdigit() for c in stripped)
        and any(c.isalpha() for c in stripped)
    ):
        yield stripped


def secret_key(key: str) -> bool:
    """Whether ``key`` names a secret: one of its words (``API_KEY``, ``authToken``,
    ``db.password``) is ``key``, ``token``, ``password`` …, or ends like one (``apikey``)."""
    for word in _KEY_WORD.findall(key[-200:]):
        lowered = word.lower()
        if lowered in _SECRET_WORDS or lowered.endswith(_SECRET_ENDINGS):
            return True
    return False


def pem_lines(text: str) -> Iterator[str]:
    """The body lines of every PEM block in ``text`` but public keys and certificates."""
    for match in _PEM.finditer(text):
        kind = match.group(1)
        if "PUBLIC" in kind or "CERTIFICATE" in kind:
            continue
        for line in match.group(2).replace("\\n", "\n").splitlines():
            line = line.strip()
            if line and ":" not in line and len(line) >= MIN_KEYED:
                yield line


def _document_values(data: object, key: str = "", depth: int = 0) -> Iterator[tuple[str, str]]:
    if depth > 64:
        return
    if isinstance(data, Mapping):
        for name, item in data.items():
            yield from _document_values(item, str(name), depth + 1)
    elif isinstance(data, list):
        for item in data:
            yield from _document_values(item, key, depth + 1)
    elif isinstance(data, str):
        yield key, data


def _unquote(value: str) -> str:
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        return value[1:-1]
    return re.split(r"\s+#", value, maxsplit=1)[0].strip()


def _text_values(text: str, name: str) -> Iterator[tuple[str, str]]:
    lowered = name.lower()
    pgpass = lowered.endswith(".pgpass")
    netrc = lowered.endswith(("netrc", ".authinfo"))
    for raw in text.splitlines():
        line = raw.strip()[:MAX_LINE]
        if not line or line.startswith(("#", ";", "[")):
            continue
        if pgpass and line.count(":") >= 4:
            yield "password", line.split(":", 4)[4]
            continue
        words = line.split()
        if netrc:
            for word, following in itertools.pairwise(words):
                if word in _NETRC_WORDS:
                    yield word, following
            continue
        assignment = _ASSIGNMENT.match(line)
        if assignment is not None:
            yield assignment.group(1), _unquote(assignment.group(2))
        elif len(words) == 1:  # a file of one token (`.vault-token`): judged by its look
            yield "", words[0]


def strip_line_numbers(text: str) -> str:
    """Undo ``cat -n`` numbering (what a ``Read`` tool returns) when every line has it."""
    lines = text.splitlines()
    if lines and all(_NUMBERED_LINE.match(line) for line in lines if line.strip()):
        return "\n".join(_NUMBERED_LINE.sub("", line, count=1) for line in lines)
    return text


def file_values(text: str, name: str) -> Iterator[tuple[str, str]]:
    """``(key, secret)`` for every secret in the text of the credential file ``name``."""
    seen: set[str] = set()
    text = strip_line_numbers(text)
    document: object = None
    stripped = text.lstrip()
    if stripped.startswith(("{", "[")):
        try:
            document = json.loads(text)
        except ValueError:
            document = None
    elif name.lower().endswith((".yaml", ".yml")):
        try:
            document = yaml.safe_load(text)
        except yaml.YAMLError:
            document = None
    pairs = (
        _document_values(document)
        if isinstance(document, (Mapping, list))
        else _text_values(text, name)
    )
    for key, value in pairs:
        for secret in judged(key, value):
            if secret not in seen:
                seen.add(secret)
                yield key, secret
    for line in pem_lines(text):
        if line not in seen:
            seen.add(line)
            yield "PEM", line


def credential_files(root: str | os.PathLike[str]) -> Iterator[Path]:
    """The files of ``root`` secrets are learned from (see :func:`is_secret_file`)."""
    base = Path(root)
    count = 0
    for directory, dirnames, filenames in os.walk(base):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIPPED_DIRS)
        for filename in sorted(filenames):
            count += 1
            if count > MAX_FILES:
                return
            path = Path(directory, filename)
            if is_secret_file(path.relative_to(base).as_posix()):
                yield path


def _credential_texts(root: str | os.PathLike[str]) -> Iterator[tuple[str, str]]:
    """``(relative path, text)`` of each of ``root``'s credential files that can be learned
    from (a regular text file within the size limit)."""
    base = Path(root)
    for path in credential_files(base):
        data = read_regular(path, MAX_FILE_BYTES, follow=False)  # a FIFO must not hang us
        if data is None or len(data) > MAX_FILE_BYTES or b"\0" in data:
            continue
        yield path.relative_to(base).as_posix(), data.decode("utf-8", "replace")


def credential_values(root: str | os.PathLike[str]) -> Iterator[tuple[str, str]]:
    """``(label, value)`` for every secret in ``root``'s credential files."""
    for relative, text in _credential_texts(root):
        for key, value in file_values(text, relative):
            yield f"{relative}:{key}"[:200], value


def secret_files(root: str | os.PathLike[str]) -> list[str]:
    """The credential files of ``root`` (relative paths) that hold at least one secret."""
    return [
        relative
        for relative, text in _credential_texts(root)
        if next(file_values(text, relative), None) is not None
    ]


def workspace_credentials(
    root: str | os.PathLike[str],
) -> list[tuple[str, list[tuple[str, str]]]]:
    """``(relative path, [(label, value) …])`` of each of ``root``'s credential files that
    can be learned from, in one walk: :func:`credential_values` and :func:`secret_files`
    together."""
    return [
        (
            relative,
            [(f"{relative}:{key}"[:200], value) for key, value in file_values(text, relative)],
        )
        for relative, text in _credential_texts(root)
    ]
