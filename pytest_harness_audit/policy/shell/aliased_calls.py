"""Functions that run a command, called under another name.

* **Node** ``child_process``: ``const {execSync: x} = require("child_process"); x(…)``, ``const
  cp = require("node:child_process"); cp["execSync"](…)``, ``import {exec as run} from
  "child_process"``, ``import * as cp``, ``import("child_process").then(m => m.execSync(…))``,
  ``const x = cp.execSync``, ``x.call(null, …)`` (:func:`node_calls`).
* **Python** ``subprocess`` and ``os``: ``import subprocess as s; s.run(…)``, ``from subprocess
  import run as r; r(…)`` (:func:`python_calls`).

Each gives the argument text of every such call, for :mod:`.shellouts` to read as it reads
``execSync("…")``.
"""

from __future__ import annotations

import re
from typing import Final

from pytest_harness_audit.policy.shell.code_values import delimited

#: The functions of ``child_process`` that run a command (``fork`` runs a Node module).
_RUNS: Final = frozenset({"exec", "execSync", "execFile", "execFileSync", "spawn", "spawnSync"})
_MODULE: Final = r"""(?:require|import)\s*\(\s*['"`](?:node:)?child_process['"`]\s*\)"""
_FROM: Final = r"""from\s*['"](?:node:)?child_process['"]"""
_KEYWORD: Final = r"(?:\b(?:const|let|var)\s+)?"
_MODULE_NAMES: Final = (
    re.compile(_KEYWORD + r"(\w+)\s*=\s*(?:await\s+)?" + _MODULE + r"(?!\s*(?:\.|\?\.|\[))"),
    re.compile(r"\bimport\s+(?:\*\s+as\s+)?(\w+)\s*(?:,\s*\{[^}]*\}\s*)?" + _FROM),
    re.compile(_MODULE + r"\s*\.\s*then\s*\(\s*(?:async\s+)?(?:function\s*)?\(?\s*(\w+)"),
)
_ENTRIES: Final = (
    re.compile(_KEYWORD + r"\{([^}]*)\}\s*=\s*(?:await\s+)?" + _MODULE),
    re.compile(r"\bimport\s*(?:\w+\s*,\s*)?\{([^}]*)\}\s*" + _FROM),
    re.compile(_MODULE + r"\s*\.\s*then\s*\(\s*(?:async\s+)?(?:function\s*)?\(\s*\{([^}]*)\}"),
)
#: A member of the module called (``.execSync(``, ``["exec"](``, ``?.spawn(``, ``.x.call(``).
_MEMBER_CALL: Final = re.compile(
    r"""(?:\?\.)?\s*(?:\.\s*\w+|\[\s*['"`]?\w+['"`]?\s*\])\s*(?:\.\s*(?:call|apply|bind)\s*)?(?:\?\.)?\s*\("""
)
_ENTRY: Final = re.compile(r"^\s*(\w+)\s*(?:(?::|\bas\b)\s*(\w+))?\s*$")
#: Most names followed, and most calls read, in one text.
_MAX_NAMES: Final = 32
_MAX_CALLS: Final = 64


def node_calls(code: str) -> list[str] | None:
    """The argument texts of calls of ``child_process`` functions under other names; ``None``
    when the text loads the module but no call of it can be found (what it runs is not
    known)."""
    if "child_process" not in code:
        return []
    modules: set[str] = set()
    functions: set[str] = set()
    for pattern in _MODULE_NAMES:
        modules.update(pattern.findall(code)[:_MAX_NAMES])
    for pattern in _ENTRIES:
        for entries in pattern.findall(code)[:_MAX_NAMES]:
            functions.update(_entries(entries))
    for _ in range(3):  # `const x = cp.execSync`, `const y = cp`, `const {exec: z} = cp`
        before = len(modules) + len(functions)
        _aliases(code, modules, functions)
        if len(modules) + len(functions) == before:
            break
    known = "|".join([_MODULE, *(re.escape(name) for name in sorted(modules)[:_MAX_NAMES])])
    if re.search(r"(?:" + known + r")\s*(?:\?\.)?\s*\[\s*[^'\"`\s]", code):
        return None  # `cp[name](…)`: a function named at run time
    calls: list[str] = []
    names = [re.escape(name) for name in sorted(functions)[:_MAX_NAMES]]
    if names:
        called = r"(?<![\w$.])(?:" + "|".join(names) + r")\s*(?:\.\s*(?:call|apply)\s*)?(?=\()"
        calls.extend(_arguments(code, re.compile(called), bound="call" in code))
    members = [re.escape(name) for name in sorted(modules)[:_MAX_NAMES]]
    member = r"\s*(?:\??\.\s*(\w+)|(?:\?\.)?\s*\[\s*['\"`](\w+)['\"`]\s*\])\s*(?:\?\.)?\s*(?=\()"
    if members:
        pattern = re.compile(r"(?<![\w$.])(?:" + "|".join(members) + r")" + member)
        calls.extend(_arguments(code, pattern, bound=False))
    direct = re.compile(_MODULE + member)  # `require("child_process")["execSync"](…)`
    calls.extend(_arguments(code, direct, bound=False))
    if any(_escapes(code, name) for name in sorted(modules | functions)[:_MAX_NAMES]):
        return None  # `[execSync].forEach(f => f(…))`: called where the reading cannot follow
    return calls[:_MAX_CALLS]


def _escapes(code: str, name: str) -> bool:
    """Whether ``name`` (the module or one of its functions) is used other than where it is
    bound or called (``f(…)``, ``cp.execSync(…)``, ``cp["exec"](…)``, ``f.call(…)``)."""
    for match in re.finditer(r"(?<![\w$.])" + re.escape(name) + r"(?![\w$])", code):
        after = code[match.end() : match.end() + 64].lstrip()
        before = code[max(0, match.start() - 16) : match.start()].rstrip()
        if after[:1] in (".", "[", "?") and not before.endswith("="):
            if not _MEMBER_CALL.match(after):
                return True  # `Reflect.apply(cp.execSync, …)`: a function taken, not called
            continue
        if after[:1] in ("(", ".", "[", "?") or (after[:1] == "=" and after[1:2] not in "=>"):
            continue  # called, a member taken for a name, or given a value
        if after[:1] in (":", ",", "}") or before.endswith(("{", ",", ":")):
            if _in_binding(code, match.start()):
                continue  # `{execSync: x} = …`, `{exec, spawn} = …`
            return True  # `{e: x}`: put in an object
        if before.endswith(("as", "const", "let", "var", "import", "*")) or after[:4] == "from":
            continue
        if before.endswith("(") and (after[:2] == "=>" or after[:1] == ")"):
            continue  # `.then(m => …)`, `.then((m) => …)`: the parameter given the module
        return True
    return False


def _in_binding(code: str, index: int) -> bool:
    """Whether ``index`` is inside braces given a value (``{…} = …``) or imported into."""
    opener = code.rfind("{", max(0, index - 512), index)
    closer = code.find("}", index, index + 512)
    if opener < 0 or closer < 0:
        return False
    rest = code[closer + 1 : closer + 64].lstrip()
    head = code[max(0, opener - 16) : opener].rstrip()
    return (rest[:1] == "=" and rest[1:2] not in "=>") or rest[:4] == "from" or head.endswith("(")


def _entries(text: str) -> list[str]:
    """The local names of a destructuring's ``child_process`` functions (``execSync: x`` → x)."""
    names: list[str] = []
    for entry in text.split(","):
        match = _ENTRY.match(entry)
        if match is not None and match.group(1) in _RUNS:
            names.append(match.group(2) or match.group(1))
    return names


def _aliases(code: str, modules: set[str], functions: set[str]) -> None:
    """Names given the module or one of its functions from a name already known."""
    if modules:
        known = "|".join(re.escape(name) for name in sorted(modules)[:_MAX_NAMES])
        alias = re.compile(_KEYWORD + r"(\w+)\s*=\s*(?:" + known + r")\s*(?=[;\n,)]|$)")
        modules.update(alias.findall(code)[:_MAX_NAMES])
        member = re.compile(
            _KEYWORD + r"(\w+)\s*=\s*(?:(?:" + known + r")|" + _MODULE + r")"
            r"\s*(?:\.\s*(\w+)|\[\s*['\"`](\w+)['\"`]\s*\])"
        )
        for name, dotted, indexed in member.findall(code)[:_MAX_NAMES]:
            if (dotted or indexed) in _RUNS:
                functions.add(name)
        destructured = re.compile(_KEYWORD + r"\{([^}]*)\}\s*=\s*(?:" + known + r")\b")
        for entries in destructured.findall(code)[:_MAX_NAMES]:
            functions.update(_entries(entries))
    else:
        member = re.compile(
            _KEYWORD + r"(\w+)\s*=\s*" + _MODULE + r"\s*(?:\.\s*(\w+)|\[\s*['\"`](\w+)['\"`]\s*\])"
        )
        for name, dotted, indexed in member.findall(code)[:_MAX_NAMES]:
            if (dotted or indexed) in _RUNS:
                functions.add(name)
    if functions:
        known = "|".join(re.escape(name) for name in sorted(functions)[:_MAX_NAMES])
        bound = r"(?:\s*\.\s*bind\s*\([^()]*\))?"
        alias = re.compile(
            _KEYWORD + r"(\w+)\s*=\s*(?:" + known + r")" + bound + r"\s*(?=[;\n,)]|$)"
        )
        functions.update(alias.findall(code)[:_MAX_NAMES])


def _arguments(
    code: str, pattern: re.Pattern[str], bound: bool, runs: frozenset[str] = _RUNS
) -> list[str]:
    """The argument text of each call ``pattern`` finds (for ``f.call(this, …)`` and
    ``f.apply(this, […])``, the arguments after ``this``); a member call only of the functions
    that run a command."""
    found: list[str] = []
    for match in pattern.finditer(code):
        if len(found) >= _MAX_CALLS:
            break
        groups = [group for group in match.groups() if group]
        if groups and groups[0] not in runs:
            continue
        arguments = delimited(code, match.end())
        if arguments is None:
            continue
        text = arguments[0]
        if bound and re.search(r"\.\s*(?:call|apply)\s*$", match.group()):
            text = text.partition(",")[2].strip()
            if match.group().rstrip().endswith("apply") and text[:1] == "[" and text[-1:] == "]":
                text = text[1:-1]
        found.append(text)
    return found


_PY_RUNS: Final = {
    "subprocess": frozenset(
        {"run", "call", "check_call", "check_output", "Popen", "getoutput", "getstatusoutput"}
    ),
    "os": frozenset({"system", "popen", "execl", "execlp", "execv", "execvp", "execvpe",
                     "spawnl", "spawnlp", "spawnv", "spawnvp", "posix_spawn", "posix_spawnp"}),
}  # fmt: skip
_PY_MODULE: Final = re.compile(r"\bimport\s+(subprocess|os)\s+as\s+(\w+)")
_PY_FROM: Final = re.compile(r"\bfrom\s+(subprocess|os)\s+import\s+\(?([\w\s,]+)")


def python_calls(code: str) -> list[str]:
    """The argument texts of calls of ``subprocess``/``os`` functions under other names."""
    if "subprocess" not in code and "os" not in code:
        return []
    calls: list[str] = []
    for module, alias in _PY_MODULE.findall(code)[:_MAX_NAMES]:
        runs = "|".join(sorted(_PY_RUNS[module]))
        pattern = re.compile(r"(?<![\w.])" + re.escape(alias) + r"\s*\.\s*(" + runs + r")\s*(?=\()")
        calls.extend(_arguments(code, pattern, bound=False, runs=_PY_RUNS[module]))
    for module, names in _PY_FROM.findall(code)[:_MAX_NAMES]:
        for entry in names.split(","):
            parts = entry.split()
            if not parts or parts[0] not in _PY_RUNS[module]:
                continue
            local = parts[2] if len(parts) == 3 and parts[1] == "as" else parts[0]
            pattern = re.compile(r"(?<![\w.])" + re.escape(local) + r"\s*(?=\()")
            calls.extend(_arguments(code, pattern, bound=False))
    return calls[:_MAX_CALLS]


__all__ = ["node_calls", "python_calls"]
