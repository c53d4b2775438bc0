"""Record ids: 8 lowercase hex digits that never repeat within a chain.

The reference plugin draws each id at random (``randomUUID()``'s first 8 hex digits), and 32
random bits repeat: among 8,000 records the odds of a repeat are about 1 in 130. A record id is
quoted as evidence (an escalation's trigger, a settled ask), so a repeat makes a reference
ambiguous. Here the id of the record at action index ``i`` is a keyed permutation of ``i``: a
bijection of the 32-bit integers, keyed by the session id. Distinct indexes give distinct ids for
the first 2**32 records, and every process appending to one session derives the same ids, since
the index is decided under the chain lock.
"""

from __future__ import annotations

import hashlib
from typing import Final

#: What ``prepare`` leaves in ``recordId``/``r6RequestId`` until the chain position is known.
PENDING_RECORD_ID: Final = "audit:pending"
PENDING_R6_ID: Final = "r6:pending"

_MASK: Final = 0xFFFFFFFF


def record_id_key(session_id: str) -> int:
    """The session's 32-bit key for ``record_id_at``."""
    digest = hashlib.sha256(b"record-id\x00" + session_id.encode("utf-8", "surrogatepass"))
    return int.from_bytes(digest.digest()[:4], "big")


def record_id_at(index: int, key: int) -> str:
    """The 8-hex id of the record at ``index`` in the session whose key is ``key``.

    A multiplication by an odd constant, an offset by the key and an xor-shift: each step is
    invertible on 32-bit integers, so the whole is a permutation.
    """
    value = (index * 0x9E3779B1 + key) & _MASK
    return "%08x" % (value ^ (value >> 15))
