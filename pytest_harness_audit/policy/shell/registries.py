"""Package managers sent to an index or registry the command names: a network exchange with
that address, as ``curl URL`` is.

``pip``/``uv`` ``--index-url``/``-i``, ``--extra-index-url``, ``--find-links``/``-f``,
``--index``, ``--default-index`` (``python -m pip`` too), ``pipenv --pypi-mirror``, ``npm``/
``pnpm``/``yarn``/``bun`` ``--registry`` (``--@scope:registry=``), ``poetry source add NAME
URL``, ``gem --source``/``-s``, ``cargo --index``, ``conda -c URL``, and the variables that set
them for the command (``PIP_INDEX_URL=…``, ``npm_config_registry=…``). The standard public
registries (``pypi.org``, ``registry.npmjs.org``, ``rubygems.org``, ``index.crates.io`` …) and
local indexes (a folder, ``file://``) are the usual installs: no exchange noted. An index or
registry the install reads from a file (``-r requirements.txt``, ``pip.conf``, ``pyproject.toml``,
``.npmrc`` …) is noted the same way (:mod:`.index_files`).
"""

from __future__ import annotations

from typing import Final
from urllib.parse import urlsplit

from pytest_harness_audit.policy.shell.context import Context
from pytest_harness_audit.policy.shell.embedded import NETWORK_NOTE

_PYTHON_OPTIONS: Final = frozenset({"--index-url", "-i", "--extra-index-url", "--find-links", "-f",
                             "--index", "--default-index", "--pypi-mirror"})  # fmt: skip
_OPTIONS: Final[dict[str, frozenset[str]]] = {
    "pip": _PYTHON_OPTIONS,
    "uv": _PYTHON_OPTIONS,
    "pipenv": frozenset({"--pypi-mirror", "--index", "-i", "--extra-index-url"}),
    "pdm": frozenset({"--index-url", "-i"}),
    "npm": frozenset({"--registry"}),
    "gem": frozenset({"--source", "-s"}),
    "cargo": frozenset({"--index"}),
    "conda": frozenset({"-c", "--channel"}),
}
_ALIASES: Final = {"pip3": "pip", "pnpm": "npm", "yarn": "npm", "bun": "npm", "npx": "npm",
            "pnpx": "npm", "bunx": "npm", "uvx": "uv", "mamba": "conda",
            "micromamba": "conda"}  # fmt: skip
#: Variables that name an index or registry for the command.
_VARIABLES: Final = ("PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_FIND_LINKS", "UV_INDEX_URL",
              "UV_EXTRA_INDEX_URL", "UV_DEFAULT_INDEX", "UV_INDEX", "NPM_CONFIG_REGISTRY",
              "npm_config_registry", "YARN_REGISTRY", "YARN_NPM_REGISTRY_SERVER",
              "PIPENV_PYPI_MIRROR")  # fmt: skip
#: Hosts of the standard public registries.
_PUBLIC: Final = frozenset({"pypi.org", "pypi.python.org", "files.pythonhosted.org",
                     "registry.npmjs.org", "registry.yarnpkg.com", "rubygems.org",
                     "index.crates.io", "crates.io", "conda.anaconda.org",
                     "repo.anaconda.com"})  # fmt: skip
#: Every name read here (the cheap test before any parsing).
NAMES: Final = frozenset(_OPTIONS) | frozenset(_ALIASES) | {"poetry"}


def registries(name: str, args: list[str], ctx: Context) -> None:
    """Note a network exchange with the index or registry ``name args`` is sent to (module
    doc); its address becomes a target of the command."""
    client = _client(name, args)
    if client is None:
        return
    kind = client[0]
    words = client[1]
    urls = [v for v in _values(kind, words) if elsewhere(v)]
    if kind == "poetry" and words[:2] == ["source", "add"]:
        urls.extend(w for w in words[2:] if elsewhere(w))
    for variable in _VARIABLES:
        value = ctx.variable(variable)
        if value and kind != "poetry":
            urls.extend(v for v in value.split() if elsewhere(v))
    exchange(urls, ctx)


def exchange(urls: list[str], ctx: Context) -> None:
    """Note the network exchange with each of ``urls`` that is an index or registry other
    than the public ones (:func:`elsewhere`): the note, and the address as a target."""
    found = [url for url in urls if elsewhere(url)]
    if found:
        ctx.note(NETWORK_NOTE)
        ctx.reading.reads.extend(u for u in dict.fromkeys(found) if u not in ctx.reading.reads)


def _client(name: str, args: list[str]) -> tuple[str, list[str]] | None:
    """The package manager ``name args`` runs and its words (``python -m pip …``)."""
    if name.startswith("python"):
        if len(args) < 2 or args[0] != "-m" or args[1] not in ("pip", "pip3"):
            return None
        return "pip", args[2:]
    if name.startswith("pip") and name[3:].replace(".", "").isdigit():
        name = "pip"  # `pip3.11`
    kind = _ALIASES.get(name, name)
    return (kind, args) if kind in _OPTIONS or kind == "poetry" else None


def _values(kind: str, words: list[str]) -> list[str]:
    """The values of the options of ``kind`` that name an index or registry."""
    names = _OPTIONS.get(kind, frozenset())
    found: list[str] = []
    for index, word in enumerate(words):
        if word == "--":
            break
        option, equals, value = word.partition("=")
        if option in names or (kind == "npm" and option.endswith(":registry")):
            if not equals:
                value = words[index + 1] if index + 1 < len(words) else ""
            found.append(value)
        elif any(len(n) == 2 and word.startswith(n) and len(word) > 2 for n in names):
            found.append(word[2:])  # `-ihttps://…`
    return found


def elsewhere(value: str) -> bool:
    """Whether ``value`` is the URL of an index or registry other than the public ones."""
    scheme, separator, _rest = value.partition("://")
    scheme = scheme.lower().rpartition("+")[2]  # `sparse+https://`, `git+https://`
    if not separator or scheme == "file" or not scheme.isalpha():
        return False
    try:
        parts = urlsplit(value[value.index("://") - len(scheme) :])
        host = (parts.hostname or "").lower()
        port = parts.port
    except ValueError:
        return True  # no address it could be read as: anywhere
    return host not in _PUBLIC or port is not None


__all__ = ["NAMES", "elsewhere", "exchange", "registries"]
