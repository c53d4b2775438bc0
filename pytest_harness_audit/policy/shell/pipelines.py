"""The commands whose output a command substitution gives, when they are one pipeline.

``$(a | b)``: the pipeline, without the commands of substitutions inside it; ``$(f)`` of a
function the script defined (``f(){ echo .env; }; cat "$(f)"``): its body's, when that is one
pipeline.
"""

from __future__ import annotations

import itertools

from pytest_harness_audit.policy.shell.filters import MAX_FILTERS
from pytest_harness_audit.policy.shell.nodes import Command, Sub


def own_commands(sub: Sub) -> list[Command]:
    """The commands of ``sub`` without those of the substitutions inside them."""
    commands = sub.commands
    if len(commands) > 1:
        inner = {
            id(nested)
            for command in commands
            for word in command.words
            for part in word
            if type(part) is Sub
            for nested in part.commands
        }
        commands = [command for command in commands if id(command) not in inner]
    return commands


def own_pipeline(sub: Sub) -> list[Command] | None:
    """The pipeline whose output ``sub`` gives (``None``: none, or more than one command)."""
    commands = sub.commands
    if sub.arithmetic or not commands or len(commands) > MAX_FILTERS * 2:
        return None
    if len(commands) > 1:  # those of a substitution inside it are not its own
        commands = own_commands(sub)
        if len(commands) > MAX_FILTERS:
            return None
    body = commands[0].body if len(commands) == 1 else None
    if body is not None and 0 < len(body) <= MAX_FILTERS:  # `$(f)`: what its body prints
        commands = body
    if any(later.stdin is not earlier for earlier, later in itertools.pairwise(commands)):
        return None  # not one pipeline
    return commands


__all__ = ["own_commands", "own_pipeline"]
