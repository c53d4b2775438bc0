"""A prefilter that clears most calls without deriving their targets.

Every target pattern requires some literal text in whatever it matches: ``(?i)(?:^|/)\\.env$``
cannot match a string without ``.env`` (in any case), ``/srv/**/*.sql`` none without both
``/srv/`` and ``.sql``, and ``^/$`` matches the target ``/`` only. The *necessary literals* of
every pattern a tool's rules hold go into one Aho–Corasick automaton (``ahocorasick-rs``: linear
in the text), scanned once over the raw text of a call: the values of its target parameters, and
the normalised forms of its paths when they differ. When no pattern's requirement is met, no
pattern can match any target, and the call is decided by the rules without patterns alone, as
the full evaluation would decide it.

The literals are worked out from the parsed pattern (:func:`~.requirements.requirement`); a
pattern that requires no literal (``.*``, ``^(?!/srv/)``), that runs on the fallback engine, or
whose syntax Python's parser might read differently from RE2, makes its tool take the full path
every time.
Text that is not ASCII takes the full path too, so case folding is never in question: the
automaton holds every literal case-folded and scans the text in lower case, a superset of what
either case-sensitive or case-insensitive matching would find.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from pytest_harness_audit.policy.literal_scan import Prefilter as Prefilter
from pytest_harness_audit.policy.param_targets import as_dict
from pytest_harness_audit.policy.path_forms import plain_path

# The requirement analysis lives in its own module; its names are this module's too.
from pytest_harness_audit.policy.requirements import Literal as Literal
from pytest_harness_audit.policy.requirements import Requirement as Requirement
from pytest_harness_audit.policy.requirements import pattern_requirement as pattern_requirement
from pytest_harness_audit.policy.requirements import (
    python_regex_requirement as python_regex_requirement,
)
from pytest_harness_audit.policy.requirements import requirement as requirement
from pytest_harness_audit.policy.targets import (
    CODE_KIND,
    COMMAND_KIND,
    FILE_KIND,
    KEY_KINDS,
    OTHER_KIND,
    derived_forms,
    lone_forms,
    lone_target,
)


def targets_may_match(prefilter: Prefilter, targets: list[str]) -> bool:
    """Whether a pattern of ``prefilter``'s tool could match one of the derived ``targets``."""
    text = targets[0] if len(targets) == 1 else "\n".join(targets)
    return not text.isascii() or prefilter.may_match(targets, text)


def worth_matching(prefilter: Prefilter, targets: list[str]) -> list[str]:
    """The derived ``targets`` a pattern of ``prefilter``'s tool could match, each on its own
    (a pattern matches one target, so it needs its literals in that one): a command's many
    targets then take the RE2 sets only where they can match. Empty when none can."""
    if len(targets) == 1:
        return targets if targets_may_match(prefilter, targets) else []
    text = "\n".join(targets)
    if not text.isascii():
        return targets  # case folding is left to the full path
    return prefilter.matchable(targets, text)


_GLOB_CHARS: Final = frozenset("*?[{")


def cleared(prefilter: Prefilter, params: Mapping[str, Any], root: str | None) -> bool:
    """Whether no target of the call can hold a literal of ``prefilter`` (so none can match)."""
    return screen(prefilter, params, root)[0]


def screen(
    prefilter: Prefilter, params: Mapping[str, Any], root: str | None
) -> tuple[bool, list[str] | None]:
    """:func:`cleared`, and for a call not cleared whose forms scanned are exactly its targets
    (one target parameter, no command: :func:`~.targets.screen_forms`), those targets: known
    then to be worth matching, they need no second derivation nor a second scan."""
    args = as_dict(params)
    lone = lone_target(args)
    if lone is not None:
        value, kind = lone
        if (kind == OTHER_KIND and value[:5].lower() != "file:") or (
            kind == FILE_KIND and root is None and plain_path(value)
        ):
            # the commonest shape: one path already in normal form, or one URL, whose only
            # target form is its value (as :func:`~.targets.lone_forms` finds)
            if value.isascii() and prefilter.clears(value):
                return True, None
            return False, [value]
        if kind in (COMMAND_KIND, CODE_KIND):
            return False, None  # a command's targets are known only once read (the full path)
        forms: list[str] | None = lone_forms(value, kind, root)
        exact = True
    else:
        if type(args.get("command")) is str:
            return False, None
        if root is None and len(args) == 1:
            for key, only in args.items():
                # (a glob names the sensitive files it can match: `.e?v` is `.env`, see
                # :mod:`~.search_targets`; a path in another spelling has other forms)
                if (
                    type(only) is str
                    and KEY_KINDS.get(key) == OTHER_KIND
                    and _GLOB_CHARS.isdisjoint(only)
                    and only[:5].lower() != "file:"
                ):
                    if only.isascii() and prefilter.clears(only):
                        return True, None
                    # a `pattern` or `glob` alone takes the full derivation (call_targets)
                    return False, None
        forms = derived_forms(args, root)
        exact = False
    if forms is None:
        return False, None
    if len(forms) == 1:  # one form: the one-form test (`{"file_path": …, "offset": …}`)
        text = forms[0]
        if text.isascii() and prefilter.clears(text):
            return True, None
        return False, (forms if exact else None)
    text = "\n".join(forms)
    # not ASCII: case folding (`ſ` for `s`, `K` for `k`) is left to the full path
    if text.isascii() and not prefilter.may_match(forms, text):
        return True, None
    return False, (forms if exact else None)
