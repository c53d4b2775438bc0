"""The git configuration keys that make git run something: one list for the reading of
``git config`` writes (:mod:`.shell.git_redirect`) and for the judging of a configuration file
after a call (:mod:`pytest_harness_audit.inspect.exec_config`), so that neither knows a key the
other misses.
"""

from __future__ import annotations

import re

#: Keys (``section.key`` or ``section.*.key``, lower case) whose value is a command git (or a
#: program git starts: ``git lfs``, ``git imap-send``, ``git gui``) runs, or a file or directory
#: it takes commands from, or (``core.worktree``) the directory git checks files out into,
#: cleans and stashes from instead of the workspace.
COMMAND_KEYS = re.compile(
    r"core\.(?:fsmonitor|hookspath|pager|editor|sshcommand|askpass|gitproxy"
    r"|alternaterefscommand|worktree)"
    r"|sequence\.editor|pager\..*|interactive\.difffilter|diff\.external"
    r"|diff\..*\.(?:textconv|command)|merge\..*\.driver|filter\..*|alias\..*"
    r"|include\.path|includeif\..*|credential\.(?:.*\.)?helper|gpg\.(?:.*\.)?program"
    r"|gpg\.ssh\.defaultkeycommand|imap\.tunnel|guitool\..*\.cmd|instaweb\.httpd"
    r"|lfs\.customtransfer\..*\.path|lfs\.extension\..*\.(?:clean|smudge)"
    r"|uploadpack\.packobjectshook|remote\..*\.(?:uploadpack|receivepack|vcs)"
    r"|protocol\.(?:.*\.)?allow|(?:difftool|mergetool|man|browser)\..*\.(?:cmd|path)"
    r"|web\.browser|hook\..*|init\.templatedir|submodule\..*\.update"
    r"|trailer\..*\.(?:command|cmd)|sendemail\..*"
)
#: An alias value that runs a command (``!cmd``) or sets configuration (``-c core.pager=…``).
ALIAS_RUNS = re.compile(r'^[\s"]*!|(?:^|[\s"])(?:-c|--config-env)(?:[\s=]|$)')


def command_key(key: str, value: str) -> bool:
    """Whether setting ``key`` to ``value`` makes git run something (an alias only when it
    runs a command)."""
    lowered = key.lower()
    if COMMAND_KEYS.fullmatch(lowered) is None:
        return False
    return not lowered.startswith("alias.") or ALIAS_RUNS.search(value) is not None
