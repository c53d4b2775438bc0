"""A real reading of shell commands for the policy: parse, expand, follow, classify.

:func:`read_command` turns a command text into a :class:`Reading` — the simple commands it runs
(argv after expansion) and the files they read, write, delete or destroy — which
:mod:`pytest_harness_audit.policy.targets` turns into targets. See :mod:`.syntax` (why a parser
of our own), :mod:`.expand`, :mod:`.reading` and :mod:`.effects`.
"""

from __future__ import annotations

from pytest_harness_audit.policy.shell.reading import Reading, read_command, read_full

__all__ = ["Reading", "read_command", "read_full"]
