"""Secret values in the output of any call, not only of a credential read.

An agent can learn a secret from a source file (``GITHUB_TOKEN = "ghp_…"``), from ``git remote
-v`` (``https://x-access-token:…@github.com``), from an MCP tool that returns a token, or from a
``Grep`` of a settings file: none of these is a credential read, yet what they returned must not
go on to another agent. :func:`output_secrets` finds them with a stricter heuristic than the one
for credential files, since ordinary outputs are full of identifiers and hashes:

* a value assigned to a key that names a secret (``api_key``, ``authToken``, ``DB_PASSWORD``;
  ``key`` alone only with a qualifier such as ``api``, ``access`` or ``private``), when the value
  is token-like: at least :data:`MIN_OUTPUT_VALUE` characters of letters, digits and
  ``_-+/=.~``, mixing letters and digits, and no path — so ``os.environ["API_KEY"]`` or
  ``${TOKEN}`` never counts;
* a token in a vendor's format anywhere (GitHub, GitLab, Slack, Stripe, OpenAI/Anthropic,
  AWS access key ids, Google API keys, npm, PyPI, Hugging Face, JSON web tokens);
* the password of a URL with credentials, and the body of a PEM private key.

Commit ids, hashes, UUIDs and base64 of other data carry no such key or format and are left out.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Mapping

from pytest_harness_audit.inspect.learn import judged, pem_lines, secret_key

#: An output is read for secrets up to this many characters (its head).
MAX_OUTPUT_CHARS = 256 * 1024
#: A keyed value in an ordinary output counts from this length.
MIN_OUTPUT_VALUE = 12

_KEYED = re.compile(
    r"""(?<![A-Za-z0-9_.\-])(?P<key>[A-Za-z_][A-Za-z0-9_.\-]{0,80})["']?[ \t]{0,8}"""
    r"""(?:=>|:=|:|=)[ \t]{0,8}["'`]?"""
    r"""(?P<value>[A-Za-z0-9_\-+/=.~]{12,512})(?![A-Za-z0-9_\-+/=.~:(\[])"""
)
_VALUE = re.compile(r"[A-Za-z0-9_\-+/=.~]{12,512}")
_VENDOR = re.compile(
    r"(?<![A-Za-z0-9_])(?:"
    r"gh[pousr]_[A-Za-z0-9]{30,255}|github_pat_[A-Za-z0-9_]{40,255}"
    r"|glpat-[A-Za-z0-9_\-]{20,}"
    r"|xox[abposr]-[A-Za-z0-9\-]{10,}"
    r"|(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}|whsec_[A-Za-z0-9_]{16,}"
    r"|sk-(?:ant-|proj-|live-|test-)?[A-Za-z0-9_\-]{20,}"
    r"|(?:AKIA|ASIA)[0-9A-Z]{16}|AIza[0-9A-Za-z_\-]{35}"
    r"|npm_[A-Za-z0-9]{36}|pypi-[A-Za-z0-9_\-]{40,}|hf_[A-Za-z0-9]{30,}"
    r"|eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"
    r")(?![A-Za-z0-9_])"
)
_URL_WITH_PASSWORD = re.compile(
    r"(?<![A-Za-z0-9+.\-])[A-Za-z][A-Za-z0-9+.\-]{0,30}://"
    r"[^\s/@:\"'<>]{1,256}:[^\s/@\"'<>]{1,256}@[^\s\"'<>/]{1,256}"
)
_KEY_WORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+")
# ``key`` (and ``session``, ``salt`` …) name a secret in a credential file; in other outputs
# (``cache_key``, ``sort_key``, ``session_id``) only with one of these beside them
_GENERIC = frozenset({"key", "keys", "session", "salt", "signature", "cookie", "pin", "pass"})
_QUALIFIERS = frozenset(
    {
        "api", "access", "secret", "private", "signing", "client", "master", "encryption",
        "auth", "service", "app", "license", "account", "ssh", "deploy", "admin", "root",
        "webhook", "bot", "hmac", "jwt", "aws", "stripe", "openai", "github", "gitlab", "slack",
        "twilio", "sendgrid", "mailgun",
    }
)  # fmt: skip


def _names_secret(key: str) -> bool:
    """Whether ``key`` names a secret in an ordinary output (see the module doc)."""
    words = {word.lower() for word in _KEY_WORD.findall(key[-200:])}
    if words & {"public", "pub"}:
        return False
    if any(word not in _GENERIC and secret_key(word) for word in words):
        return True  # token, password, apikey, secret …
    return bool(words & _GENERIC) and bool(words & _QUALIFIERS)


def _token_like(value: str) -> bool:
    if len(value) < MIN_OUTPUT_VALUE or _VALUE.fullmatch(value) is None:
        return False
    if value.startswith(("/", "./", "../", "~/")):
        return False  # a path (``SSH_AUTH_SOCK=/tmp/ssh-…/agent.1``)
    return any(c.isdigit() for c in value) and any(c.isalpha() for c in value)


def _leaves(output: object) -> tuple[list[tuple[str, str]], list[str]]:
    """The keyed string values and the texts of an output (a string, bytes, or a JSON-like
    value such as an MCP result), within :data:`MAX_OUTPUT_CHARS` characters."""
    pairs: list[tuple[str, str]] = []
    texts: list[str] = []
    left = MAX_OUTPUT_CHARS
    stack: list[tuple[str, object, int]] = [("", output, 0)]
    while stack and left > 0:
        key, item, depth = stack.pop()
        if isinstance(item, bytes):
            item = item[:left].decode("utf-8", "replace")
        if isinstance(item, str):
            text = item[:left]
            left -= len(text)
            texts.append(text)
            pairs.append((key, text.strip()))
            if depth == 0 and text.lstrip().startswith(("{", "[")):
                with contextlib.suppress(ValueError):
                    stack.append((key, json.loads(text), 1))
        elif depth < 64 and isinstance(item, Mapping):
            stack.extend((str(name), child, depth + 1) for name, child in item.items())
        elif depth < 64 and isinstance(item, (list, tuple)):
            stack.extend((key, child, depth + 1) for child in item)
    return pairs, texts


def output_secrets(output: object) -> list[str]:
    """The secret values in the output of a call that is no credential read (see the module
    doc), each once: keyed values, vendor tokens, URL passwords, PEM private-key lines."""
    pairs, texts = _leaves(output)
    found = [value for key, value in pairs if _names_secret(key) and _token_like(value)]
    for text in texts:
        for match in _KEYED.finditer(text):
            if _names_secret(match.group("key")) and _token_like(match.group("value")):
                found.append(match.group("value"))
        found.extend(match.group(0) for match in _VENDOR.finditer(text))
        for match in _URL_WITH_PASSWORD.finditer(text):
            found.extend(judged("url", match.group(0)))
        found.extend(pem_lines(text))
    return list(dict.fromkeys(found))
