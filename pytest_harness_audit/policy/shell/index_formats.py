"""The index and registry addresses a package manager's files name, by file format
(:mod:`.index_files` finds the files; :func:`~.registries.elsewhere` keeps the non-public
ones).

Each reader takes a file's text and returns the addresses it sets, in the order written; a
text that does not parse (TOML, an INI section) sets none, as the tool would fail on it. A
comment is never an address.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator
from typing import Any, Final, NamedTuple

from pytest_harness_audit.policy.shell.tomlfiles import parse_toml, table

#: pip's requirement-file options naming an index, and those naming another file.
_PIP_INDEX: Final = frozenset({"-i", "--index-url", "--extra-index-url", "-f", "--find-links"})
_PIP_FIND: Final = frozenset({"-f", "--find-links"})
_PIP_NESTED: Final = frozenset({"-r", "--requirement", "-c", "--constraint"})
#: pip's configuration keys naming an index (``_`` spellings too).
_PIP_KEYS: Final = frozenset({"index-url", "extra-index-url", "find-links"})
_INI_SETTING: Final = re.compile(r"([^=:\s]+)\s*[=:]\s*(.*)$")
#: uv's settings naming an index (``uv.toml``, ``[tool.uv]``, their ``pip`` table).
_UV_KEYS: Final = ("index-url", "extra-index-url", "find-links", "default-index")
_COMMENT: Final = re.compile(r"(^|\s)#.*$")
_GEM_SOURCE: Final = re.compile(r"""(?:^|[\s,(])source[:\s(]\s*["']([^"']+)["']""")
_YARN_SERVER: Final = re.compile(r"""^\s*npmRegistryServer\s*:\s*["']?([^"'\s#]+)""")


class Requirements(NamedTuple):
    """What a pip requirements file sets: ``indexes`` (``--index-url`` and the rest, with
    ``find`` the ``--find-links`` ones) and ``nested`` (the files ``-r``/``-c`` name)."""

    indexes: list[str]
    find: list[str]
    nested: list[str]


def requirements(text: str) -> Requirements:
    """The options of a pip (or uv, pip-tools) requirements or constraints file."""
    found = Requirements([], [], [])
    for line in _logical_lines(text):
        line = _COMMENT.sub("", line).strip()
        if not line.startswith("-"):
            continue
        try:
            words = shlex.split(line)
        except ValueError:
            words = line.split()
        for index, word in enumerate(words):
            option, equals, value = word.partition("=")
            if not equals and option[:2] in ("-i", "-f", "-r", "-c") and len(option) > 2:
                option, value = option[:2], option[2:]  # `-ihttps://…`
            elif not equals:
                value = words[index + 1] if index + 1 < len(words) else ""
            if option in _PIP_INDEX and value:
                (found.find if option in _PIP_FIND else found.indexes).append(value)
            elif option in _PIP_NESTED and value:
                found.nested.append(value)
    return found


def _logical_lines(text: str) -> Iterator[str]:
    """pip's lines: a ``\\`` at the end joins the next one."""
    pending = ""
    for line in text.splitlines():
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        yield pending + line
        pending = ""
    if pending:
        yield pending


def pip_config(text: str) -> list[str]:
    """``index-url``/``extra-index-url``/``find-links`` of a ``pip.conf`` (any section; a
    value may go on over indented lines, several addresses apart)."""
    found: list[str] = []
    current = False
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or stripped[0] in "#;":
            continue
        if line[:1] in (" ", "\t"):
            if current:
                found.extend(stripped.split())
            continue
        if stripped.startswith("["):
            current = False
            continue
        setting = _INI_SETTING.match(stripped)
        current = setting is not None and setting.group(1).lower().replace("_", "-") in _PIP_KEYS
        if setting is not None and current:
            found.extend(setting.group(2).split())
    return found


def uv_settings(settings: object) -> list[str]:
    """The indexes of uv settings (``uv.toml``, or the ``[tool.uv]`` table): ``index-url``,
    ``extra-index-url``, ``find-links``, ``default-index``, ``[[index]]`` ``url``, and the same
    in their ``pip`` table."""
    if not isinstance(settings, dict):
        return []
    found: list[str] = []
    for key in _UV_KEYS:
        found.extend(_strings(settings.get(key)))
    found.extend(_urls(settings.get("index")))
    if isinstance(settings.get("pip"), dict):
        found.extend(uv_settings({k: v for k, v in settings["pip"].items() if k != "pip"}))
    return found


def uv_toml(text: str) -> list[str]:
    """The indexes a ``uv.toml`` sets."""
    return uv_settings(parse_toml(text))


def uv_pyproject(text: str) -> list[str]:
    """The indexes of a ``pyproject.toml``'s ``[tool.uv]`` (:func:`uv_settings`)."""
    return uv_settings(table(parse_toml(text), "tool").get("uv"))


def poetry_pyproject(text: str) -> list[str]:
    """The ``[[tool.poetry.source]]`` ``url`` of a ``pyproject.toml``."""
    return _urls(table(parse_toml(text), "tool", "poetry").get("source"))


def pdm_pyproject(text: str) -> list[str]:
    """The ``[[tool.pdm.source]]`` ``url`` of a ``pyproject.toml``."""
    return _urls(table(parse_toml(text), "tool", "pdm").get("source"))


def pipfile(text: str) -> list[str]:
    """The ``[[source]]`` ``url`` of a ``Pipfile``."""
    document = parse_toml(text)
    return _urls(document.get("source")) if document is not None else []


def pdm_toml(text: str) -> list[str]:
    """``[pypi] url`` (and ``[pypi.NAME] url``) of a project's ``pdm.toml``."""
    pypi = table(parse_toml(text), "pypi")
    found = _strings(pypi.get("url"))
    for value in pypi.values():
        if isinstance(value, dict):
            found.extend(_strings(value.get("url")))
    return found


def npm_registries(text: str) -> list[str]:
    """``registry=`` and ``@scope:registry=`` of an ``.npmrc`` (yarn 1's ``.yarnrc`` too:
    ``registry "URL"``)."""
    found: list[str] = []
    for line in text.splitlines():
        line = line.strip()
        if not line or line[0] in "#;[":
            continue
        key, equals, value = line.partition("=")
        if not equals:
            key, _, value = line.partition(" ")
        key = key.strip().strip("\"'").lower()
        if key == "registry" or key.endswith(":registry"):
            found.append(_ini_value(value.strip()))
    return found


def _ini_value(value: str) -> str:
    """A quoted value's text, or an unquoted one up to its comment (``;`` or ``#``)."""
    if value[:1] in ("'", '"') and value[0] in value[1:]:
        return value[1 : value.index(value[0], 1)]
    return re.split(r"(?<!\\)[;#]", value, maxsplit=1)[0].strip()


def yarnrc_yml(text: str) -> list[str]:
    """Every ``npmRegistryServer`` of a ``.yarnrc.yml`` (its ``npmScopes`` too)."""
    return [found.group(1) for line in text.splitlines() if (found := _YARN_SERVER.match(line))]


def bunfig(text: str) -> list[str]:
    """``[install] registry`` (a URL or ``{ url = … }``) and ``[install.scopes]`` of a
    ``bunfig.toml``."""
    install = table(parse_toml(text), "install")
    found = _strings(install.get("registry")) + _urls([install.get("registry")])
    for value in table(install, "scopes").values():
        found.extend(_strings(value) + _urls([value]))
    return found


def cargo_config(text: str) -> list[str]:
    """``[registries.NAME] index``, ``[source.NAME] registry`` and the old ``[registry] index``
    of a ``.cargo/config.toml``: where ``replace-with`` or a dependency's ``registry`` sends
    cargo."""
    document = parse_toml(text)
    if document is None:
        return []
    found = _strings(table(document, "registry").get("index"))
    for value in table(document, "registries").values():
        if isinstance(value, dict):
            found.extend(_strings(value.get("index")))
    for value in table(document, "source").values():
        if isinstance(value, dict):
            found.extend(_strings(value.get("registry")))
    return found


def gemfile(text: str) -> list[str]:
    """``source 'URL'`` (a block's too) and ``gem …, source: 'URL'`` of a ``Gemfile``."""
    found: list[str] = []
    for line in text.splitlines():
        code = _ruby_code(line)
        found.extend(match.group(1) for match in _GEM_SOURCE.finditer(code))
    return found


def _ruby_code(line: str) -> str:
    """``line`` without its comment (a ``#`` outside quotes)."""
    quote = ""
    for index, char in enumerate(line):
        if quote:
            quote = "" if char == quote else quote
        elif char in "\"'":
            quote = char
        elif char == "#":
            return line[:index]
    return line


def conda_environment(text: str) -> list[str]:
    """The ``channels:`` list of a conda ``environment.yml`` (a channel may be a URL)."""
    found: list[str] = []
    in_channels = False
    for line in text.splitlines():
        code = _COMMENT.sub("", line).rstrip()
        if not code.strip():
            continue
        if code[:1] not in (" ", "\t", "-"):
            in_channels = code.startswith("channels:")
            inline = code.partition(":")[2].strip()
            if in_channels and inline.startswith("["):
                found.extend(part.strip(" \"'") for part in inline.strip("[]").split(","))
        elif in_channels and code.strip().startswith("-"):
            found.append(code.strip()[1:].strip().strip("\"'"))
    return found


def _strings(value: object) -> list[str]:
    """A setting that is one address or a list of them."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [item for item in value if isinstance(item, str)]
    return []


def _urls(value: object) -> list[str]:
    """The ``url`` of each table of a list (``[[tool.uv.index]]``, ``[[source]]`` …)."""
    items: list[Any] = value if isinstance(value, list) else []
    return [
        item["url"] for item in items if isinstance(item, dict) and isinstance(item.get("url"), str)
    ]


__all__ = [
    "Requirements",
    "bunfig",
    "cargo_config",
    "conda_environment",
    "gemfile",
    "npm_registries",
    "pdm_pyproject",
    "pdm_toml",
    "pip_config",
    "pipfile",
    "poetry_pyproject",
    "requirements",
    "uv_pyproject",
    "uv_settings",
    "uv_toml",
    "yarnrc_yml",
]
