"""The anchor: record count, byte size and head hash of a chain, kept current on every append.

The anchor file holds two fixed-size slots; the state after ``n`` records goes to slot ``n % 2``,
and each slot carries a CRC-32 of its contents. A slot torn by a crash fails its CRC and the
reader falls back to the other slot, which holds the state one append earlier. So after any
crash the anchor is current or exactly one append behind.

The writer updates a slot with one ``pwrite`` into the page cache: visible at once to every other
process and kept by the kernel when the writing process dies. With ``fsync`` the slot is flushed
to the device as well.

Slot layout (little-endian, 128 bytes)::

    magic "HAA1" | count u64 | size u64 | head, 64 ASCII (hex or "genesis", NUL-padded)
    | last r6 id, 24 ASCII (NUL-padded) | CRC-32 u32 of the preceding bytes | 12 zero bytes
"""

from __future__ import annotations

import os
import struct
import zlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pytest_harness_audit.audit.errors import AuditError

GENESIS = "genesis"
SLOT_SIZE = 128
ANCHOR_FILE_SIZE = 2 * SLOT_SIZE
_MAGIC = b"HAA1"
_BODY = struct.Struct("<4sQQ64s24s")
_CRC = struct.Struct("<I")
_PAD = bytes(SLOT_SIZE - _BODY.size - _CRC.size)
#: The body's bytes, its CRC-32 and the zero padding: a whole slot in one ``pack``.
_TAIL = struct.Struct(f"<{_BODY.size}sI{len(_PAD)}x")
_pack_body = _BODY.pack
_pack_crc = _CRC.pack
_pack_tail = _TAIL.pack
#: For writers that pack a slot inline (``AuditChain.append``): ``SLOT_MAGIC``, the body's
#: ``pack(magic, count, size, head, last_r6_id)``, the whole slot's ``pack(body, crc32(body))``.
SLOT_MAGIC = _MAGIC
pack_slot_body = _BODY.pack
pack_slot = _TAIL.pack
_crc32 = zlib.crc32
_pwrite = os.pwrite


@dataclass(frozen=True)
class Anchor:
    """Expected state of a chain: ``count`` records whose last line hashes to ``head``.

    ``size`` is the chain's byte length at that point and ``last_r6_id`` the ``r6RequestId`` of
    the last record (``None`` for an empty chain or when unknown).
    """

    count: int
    head: str = GENESIS
    size: int | None = None
    last_r6_id: str | None = None

    @classmethod
    def coerce(cls, value: Anchor | Mapping[str, Any] | None) -> Anchor | None:
        """Accept an ``Anchor`` or a mapping with ``count``/``recordCount`` and ``head``."""
        if value is None or isinstance(value, Anchor):
            return value
        count = value.get("count", value.get("recordCount"))
        head = value.get("head", value.get("headHash", GENESIS))
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise AuditError(f"anchor: field 'count' must be a non-negative integer, got {count!r}")
        if not isinstance(head, str):
            raise AuditError(f"anchor: field 'head' must be a string, got {head!r}")
        size = value.get("size", value.get("bytes"))
        return cls(count=count, head=head, size=size if isinstance(size, int) else None)

    def to_dict(self) -> dict[str, Any]:
        """JSON form (used in reports and the session file snapshot)."""
        return {
            "recordCount": self.count,
            "head": self.head,
            "bytes": self.size,
            "lastR6Id": self.last_r6_id,
        }


def encode_slot(count: int, size: int, head: str, last_r6_id: str | None) -> bytes:
    """The bytes of one slot (heads and ids longer than their field are cut; ids go missing)."""
    last = (last_r6_id or "").encode("utf-8")
    if len(last) > 24:
        last = b""
    body = _pack_body(_MAGIC, count, size, head.encode("ascii")[:64], last)
    return body + _pack_crc(_crc32(body)) + _PAD


def writer_slot(count: int, size: int, head: str, last_r6_id: str | None) -> bytes:
    """``encode_slot``, quicker for what the writer stores: a 64-hex head, an ``r6:<8 hex>`` id."""
    if last_r6_id is not None and len(last_r6_id) == 11 and len(head) == 64:
        body = _pack_body(_MAGIC, count, size, head.encode("ascii"), last_r6_id.encode("ascii"))
        return _pack_tail(body, _crc32(body))
    return encode_slot(count, size, head, last_r6_id)


def decode_slot(raw: bytes) -> Anchor | None:
    """Parse one slot; ``None`` if it is empty, torn or not a slot."""
    if len(raw) != SLOT_SIZE or not raw.startswith(_MAGIC):
        return None
    body = raw[: _BODY.size]
    (crc,) = _CRC.unpack_from(raw, _BODY.size)
    if _crc32(body) != crc:
        return None
    _, count, size, head, last = _BODY.unpack(body)
    try:
        head_text = head.rstrip(b"\0").decode("ascii")
        last_text = last.rstrip(b"\0").decode("utf-8")
    except UnicodeDecodeError:
        return None
    return Anchor(count=count, size=size, head=head_text, last_r6_id=last_text or None)


def decode_anchor(data: bytes, *, source: str) -> Anchor | None:
    """The newest intact slot of an anchor file's bytes; ``None`` if the file is empty.

    Raises ``AuditError`` when the file has content but no intact slot.
    """
    if not data.strip(b"\0"):
        return None
    slots = [decode_slot(data[i : i + SLOT_SIZE]) for i in (0, SLOT_SIZE)]
    intact = [slot for slot in slots if slot is not None]
    if not intact:
        raise AuditError(f"{source}: anchor file has no intact slot (corrupted)")
    return max(intact, key=lambda slot: slot.count)


def read_anchor(path: str | os.PathLike[str]) -> Anchor | None:
    """Read the anchor file at ``path``; ``None`` if it does not exist or is empty."""
    try:
        with open(path, "rb") as handle:
            data = handle.read(ANCHOR_FILE_SIZE)
    except FileNotFoundError:
        return None
    return decode_anchor(data, source=os.fspath(path))


class AnchorWriter:
    """Reads and writes the anchor slots of one open anchor file with ``pread`` / ``pwrite``.

    One ``pwrite`` of one slot per append. The file is not mapped into memory: a mapping of a
    file that someone truncates kills the writing process (``SIGBUS``) on its next update, while
    a ``pwrite`` simply writes the slot again.
    """

    __slots__ = ("_fd", "_fsync", "path")

    def __init__(self, fd: int, path: str, *, fsync: bool) -> None:
        self._fd = fd
        self._fsync = fsync
        self.path = path

    @property
    def fd(self) -> int:
        """The anchor file's descriptor (owned by the caller)."""
        return self._fd

    def read(self) -> Anchor | None:
        """The current anchor (``None`` when the file is still empty)."""
        return decode_anchor(os.pread(self._fd, ANCHOR_FILE_SIZE, 0), source=self.path)

    def write(self, count: int, size: int, head: str, last_r6_id: str | None) -> None:
        """Store the state after ``count`` records in slot ``count % 2`` (one ``pwrite``)."""
        _pwrite(self._fd, writer_slot(count, size, head, last_r6_id), (count & 1) * SLOT_SIZE)
        if self._fsync:
            os.fsync(self._fd)

    def reset(self, count: int, size: int, head: str, last_r6_id: str | None) -> None:
        """Write the same state to both slots and flush it (a new or adopted anchor)."""
        slot = encode_slot(count, size, head, last_r6_id)
        _pwrite(self._fd, slot + slot, 0)
        os.fsync(self._fd)

    def close(self) -> None:
        """Nothing to release (the descriptor belongs to the caller); kept for symmetry."""
