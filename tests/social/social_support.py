"""Shared inputs of the social-harness tests."""

from __future__ import annotations

from collections.abc import Mapping

SLOT_SCHEMA: dict[str, object] = {
    "type": "object",
    "properties": {"slot": {"type": "string", "enum": ["mon", "tue"]}},
    "required": ["slot"],
}


def gather(deadline: int = 60, schema: Mapping[str, object] | None = None) -> dict[str, object]:
    """A gather collective with the slot form."""
    return {"op": "gather", "deadline": deadline, "requestedSchema": schema or SLOT_SCHEMA}


def all_gather(deadline: int = 60, schema: Mapping[str, object] | None = None) -> dict[str, object]:
    """An all_gather collective with the slot form."""
    return {"op": "all_gather", "deadline": deadline, "requestedSchema": schema or SLOT_SCHEMA}


#: Prints ``sender|conversation|text`` of every post in the database named by argv[1].
READ_POSTS_SCRIPT = """
import sqlite3, sys
connection = sqlite3.connect(sys.argv[1])
for row in connection.execute("SELECT sender, conversation, text FROM posts ORDER BY seq"):
    print("|".join(row))
"""
