"""Secret values a session has read, so the message firewall can refuse to send them on.

When a call with a ``credential_access`` alert succeeds (reading ``.env``, ``credentials.json``,
``cat .env`` …), :meth:`SecretLedger.note_from` takes the secret values out of its output with
:func:`secret_values` and keeps them in memory. A social session forwards them to its
:class:`~.firewall.MessageFirewall` and writes them into its audit records only as
``[secret:<fingerprint>]``.

Extraction is a heuristic tuned against false alarms: the value of ``KEY=value`` / ``key: value``
lines and the string values of JSON documents count when the key names a secret (``KEY``,
``TOKEN``, ``PASSWORD`` …) or the value looks like one (a token of 8 or more characters mixing
letters and digits, or of 20 or more characters); a URL's password counts on its own; in other
text, every such token counts. The values :func:`~pytest_harness_audit.inspect.learn.file_values`
finds (as the workspace's credential files are read at the start: ``PIN``, ``.netrc``, ``.pgpass``
…) count too.

Any other successful call's output is read with the stricter heuristic of :mod:`.output_secrets`
(keyed token-like values, vendor tokens, URL passwords, private keys): a secret learned from a
source file, ``git remote -v`` or an MCP tool's result is refused on like one read from ``.env``.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from pytest_harness_audit.inspect.learn import file_values
from pytest_harness_audit.inspect.secrets import fingerprint
from pytest_harness_audit.social.firewall import MINIMUM_SECRET_LENGTH
from pytest_harness_audit.social.output_secrets import output_secrets

#: The alert a credential read carries (see ``pytest_harness_audit.immune.alerts``).
CREDENTIAL_ACCESS = "credential_access"
#: A token shorter than this is never taken for a secret unless its key names one.
MINIMUM_TOKEN_LENGTH = 8
#: A token at least this long counts even without digits (base64 blobs, PEM lines).
LONG_TOKEN_LENGTH = 20
REDACTED = "[secret:{fingerprint}]"

_NUMBERED_LINE = re.compile(r"^\s*\d+\t")
_ASSIGNMENT = re.compile(r"^(?:export\s+)?([A-Za-z_][A-Za-z0-9_.\-]*)\s*[=:]\s*(.*)$")
_SECRET_KEY = re.compile(
    r"(?i)key|token|secret|passw|pwd|pass$|credential|auth(?!or)|private|salt|signature|dsn|cookie"
    r"|session|bearer|webhook"
)
_TOKEN = re.compile(r"""[^\s"'`,;()<>\[\]{}]+""")
_COMMENT_PREFIXES = ("#", ";", "//")


def _looks_secret(token: str) -> bool:
    if len(token) < MINIMUM_TOKEN_LENGTH:
        return False
    if len(token) >= LONG_TOKEN_LENGTH:
        return True
    return any(c.isdigit() for c in token) and any(c.isalpha() for c in token)


def _unquote(value: str) -> str:
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        return value[1:-1]
    # an unquoted value ends at an inline comment
    return re.split(r"\s+#", value, maxsplit=1)[0].strip()


def _url_password(value: str) -> str | None:
    if "://" not in value:
        return None
    try:
        return urlsplit(value).password
    except ValueError:
        return None


def _value_secrets(key: str, value: str) -> Iterator[str]:
    """The secrets of one keyed value: the value itself and its secret-looking parts."""
    secret_key = _SECRET_KEY.search(key) is not None
    stripped = value.strip()
    keyed = secret_key and len(stripped) >= MINIMUM_SECRET_LENGTH
    if keyed or (_looks_secret(stripped) and not any(c.isspace() for c in stripped)):
        yield stripped
    password = _url_password(stripped)
    if password and len(password) >= MINIMUM_SECRET_LENGTH:
        yield password
    if secret_key and ("\n" in stripped or " " in stripped):
        for token in _TOKEN.findall(stripped):
            if _looks_secret(token):
                yield token


def _json_secrets(data: object, key: str = "") -> Iterator[str]:
    if isinstance(data, Mapping):
        for name, value in data.items():
            yield from _json_secrets(value, str(name))
    elif isinstance(data, list):
        for item in data:
            yield from _json_secrets(item, key)
    elif isinstance(data, str):
        yield from _value_secrets(key, data)


def _text_secrets(text: str) -> Iterator[str]:
    for raw_line in text.splitlines():
        line = raw_line.strip()
        if not line or line.startswith(_COMMENT_PREFIXES) or line.startswith("["):
            continue
        assignment = _ASSIGNMENT.match(line)
        if assignment is not None:
            value = _unquote(assignment.group(2))
            if value:
                yield from _value_secrets(assignment.group(1), value)
            continue
        for token in _TOKEN.findall(line):
            if _looks_secret(token):
                yield token


def _strip_line_numbers(text: str) -> str:
    """Undo ``cat -n`` numbering (the ``Read`` tool's output) when every line has it."""
    lines = text.splitlines()
    if lines and all(_NUMBERED_LINE.match(line) for line in lines if line.strip()):
        return "\n".join(_NUMBERED_LINE.sub("", line, count=1) for line in lines)
    return text


def secret_values(text: str) -> list[str]:
    """The secret values in the text of a credential file, each once, in order of appearance.

    Understands ``.env``/INI/YAML-style ``KEY=value`` and ``key: value`` lines, JSON documents
    and ``cat -n`` numbered output (what the ``Read`` tool returns); anything else is scanned for
    secret-looking tokens.
    """
    text = _strip_line_numbers(text)
    try:
        document = json.loads(text)
    except ValueError:
        document = None
    is_document = isinstance(document, (dict, list))
    found = _json_secrets(document) if is_document else _text_secrets(text)
    return [value for value in dict.fromkeys(found) if len(value) >= MINIMUM_SECRET_LENGTH]


def output_text(output: object) -> str:
    """The readable text of a call's output: a string, an MCP tool result's text blocks (and
    structured content), or JSON for anything else."""
    if output is None:
        return ""
    if isinstance(output, str):
        return output
    if isinstance(output, bytes):
        return output.decode("utf-8", "replace")
    if isinstance(output, Mapping) and isinstance(output.get("content"), list):
        parts = [
            str(block.get("text", ""))
            for block in output["content"]
            if isinstance(block, Mapping) and block.get("type") == "text"
        ]
        structured = output.get("structuredContent")
        if structured is not None:
            parts.append(json.dumps(structured, ensure_ascii=False, default=str))
        return "\n".join(parts)
    return json.dumps(output, ensure_ascii=False, default=str)


@dataclass(frozen=True)
class NotedSecret:
    """One secret value, where it was read, and the fingerprint records show instead of it."""

    value: str
    source: str
    fingerprint: str


def _record_and_output(result: object, output: object) -> tuple[Mapping[str, Any], object]:
    record = getattr(result, "record", None)
    if isinstance(record, Mapping) and hasattr(result, "output"):
        return record, result.output
    if isinstance(result, Mapping):
        return result, output
    raise TypeError(
        f"expected a call result (with .record and .output) or a record mapping, got {result!r}"
    )


def _record_source(record: Mapping[str, Any]) -> str:
    params = record.get("request", {}).get("params")
    if isinstance(params, Mapping):
        for key in ("file_path", "path", "command", "url"):
            value = params.get(key)
            if isinstance(value, str):
                return value
    return str(record.get("target") or record.get("tool") or "credential read")


class SecretLedger:
    """The secret values one session has read, in memory only (never written anywhere).

    Thread-safe: the test thread and a proxy thread may note secrets at the same time.
    """

    def __init__(self) -> None:
        self._secrets: list[NotedSecret] = []
        self._lock = threading.Lock()
        #: Called with ``(value, label)`` for every secret a user adds (the session's
        #: inspection registers it, so outputs and payloads are scanned for it too).
        self.on_add: Callable[[str, str], object] | None = None

    def add(self, value: str, label: str = "added") -> bool:
        """Add a secret of your own (``harness.secrets.add(value, label=…)``): sends carrying
        it are refused, and outputs and payloads are scanned for it in every common encoding.
        Only its fingerprint is ever recorded. False for a repeat or a too-short value."""
        added = self.note(value, label)
        if self.on_add is not None and isinstance(value, str):
            self.on_add(value, label)
        return added

    def __len__(self) -> int:
        return len(self._secrets)

    def items(self) -> tuple[NotedSecret, ...]:
        """Every noted secret, oldest first."""
        with self._lock:
            return tuple(self._secrets)

    def note(self, value: str, source: str) -> bool:
        """Keep ``value`` (read from ``source``); False for a repeat or a too-short value."""
        if not isinstance(value, str) or len(value) < MINIMUM_SECRET_LENGTH:
            return False
        with self._lock:
            if any(secret.value == value for secret in self._secrets):
                return False
            self._secrets.append(NotedSecret(value, str(source), fingerprint(value)))
            return True

    def note_text(self, text: str, source: str) -> list[str]:
        """Note every secret value of the text of a credential file (see :func:`secret_values`,
        and what the workspace's credential files are read for); return the new ones."""
        values = secret_values(text)
        values.extend(value for _, value in file_values(text, source) if value not in values)
        return [value for value in values if self.note(value, source)]

    def note_from(self, result: object, output: object = None) -> list[str]:
        """Note the secrets a successful call returned; return the new ones.

        ``result`` is a call result (``.record`` and ``.output``, as ``Harness.call`` returns) or
        a chain record with the call's ``output`` beside it. A credential read (its
        ``credential_access`` alert) is read as a credential file; any other output for the
        secrets :func:`~.output_secrets.output_secrets` finds. Calls that did not succeed are
        ignored.
        """
        record, output = _record_and_output(result, output)
        status = record.get("result", {}).get("status")
        if status != "success":
            return []
        source = _record_source(record)
        if CREDENTIAL_ACCESS not in record.get("alerts", ()):
            return [value for value in output_secrets(output) if self.note(value, source)]
        return self.note_text(output_text(output), source)

    def redact(self, value: object) -> object:
        """``value`` (strings, lists, mappings with their keys, recursively) with every noted
        secret replaced by ``[secret:<fingerprint>]``, longest secrets first."""
        secrets = sorted(self.items(), key=lambda secret: -len(secret.value))
        if not secrets:
            return value
        return _redacted(value, secrets)


def _redacted(value: object, secrets: list[NotedSecret]) -> object:
    if isinstance(value, str):
        for secret in secrets:
            if secret.value in value:
                value = value.replace(secret.value, REDACTED.format(fingerprint=secret.fingerprint))
        return value
    if isinstance(value, Mapping):
        # a key is sent and recorded like a value (a gather's property name, a tool's argument)
        return {_redacted(key, secrets): _redacted(item, secrets) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_redacted(item, secrets) for item in value]
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        text = str(value)  # a numeric secret sent as a number
        changed = _redacted(text, secrets)
        return value if changed == text else changed
    return value
