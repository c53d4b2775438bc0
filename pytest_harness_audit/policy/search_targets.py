"""The sensitive files a search reads by a glob or by its folder (Grep, ``search_files``).

A content search's ``glob`` (Grep's file filter) is a file glob: ``**/.env*`` or ``.e?v`` name
``.env`` as surely as its literal name does. Such a glob adds the sensitive paths it can match
(:func:`pytest_harness_audit.policy.sensitive.glob_candidates`: ``**/.env*`` → ``**/.env``),
joined to the folder searched (``path``). A wildcard ``pattern`` is not one: Glob's pattern lists
names and reads no file (a literal name there is a target as every ``pattern`` is), and Grep's
is a regular expression over the content. A search whose folder is a credential directory
(``.ssh``, ``.aws`` …, through a workspace symlink too) reads every file in it: Grep without a
glob adds the files that live there (``.ssh/id_rsa``). A glob naming every file (``*``,
``**/*.py``) names no file in particular and adds nothing.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any, Final

from pytest_harness_audit.policy.sensitive import glob_candidates, is_credential_folder

_WILD: Final = frozenset("*?[{")
_BRACES: Final = re.compile(r"\{([^{}]*)\}")
_MAX_GLOB: Final = 1024
_MAX_ALTERNATIVES: Final = 32


def search_forms(params: Mapping[str, Any], folders: Iterable[str]) -> list[str]:
    """The sensitive paths a search's globs and folder name (module docstring); ``folders`` are
    the forms of its ``path`` (the path, normalised, where a symlink leads), empty without one."""
    globs: list[str] = []
    glob = params.get("glob")
    if type(glob) is str:
        globs.append(glob)
    places = [folder.rstrip("/") for folder in folders if folder]
    if type(glob) is not str:
        # a search of a folder with no file filter reads all of it: which names files only
        # in a credential directory (`*` names every file, so no file in particular)
        places = [place for place in places if is_credential_folder(place)]
        if not places:
            return []
        globs.append("*")
    found: list[str] = []
    for text in globs:
        if len(text) > _MAX_GLOB:
            continue
        for alternative in _alternatives(text):
            name = alternative.rpartition("/")[2]
            spelt = [alternative] if not places else []
            for place in places:
                spelt.append(f"{place}/{alternative}")
                if name != alternative:  # `**/x` below the folder: x in the folder itself too
                    spelt.append(f"{place}/{name}")
            for candidate in spelt:
                if alternative != text and candidate not in found:
                    found.append(candidate)  # `{.env,x}`: `.env` spelt out, as a target
                if _WILD.isdisjoint(alternative):
                    continue
                for path in glob_candidates(candidate):
                    if path not in found:
                        found.append(path)
    return found


def _alternatives(pattern: str) -> list[str]:
    """``pattern`` with its brace alternatives spelt out (``{.env,x}`` → ``.env``, ``x``)."""
    found = [pattern]
    if "{" not in pattern:  # (the commonest: no brace, nothing to spell out)
        return found
    for _ in range(4):  # nested or repeated braces, a few levels
        expanded: list[str] = []
        for text in found:
            match = _BRACES.search(text)
            if match is None:
                expanded.append(text)
                continue
            head, tail = text[: match.start()], text[match.end() :]
            expanded.extend(head + part + tail for part in match.group(1).split(","))
        found = expanded[:_MAX_ALTERNATIVES]
    return found
