"""The secret registry: learning values, finding them in every form, redacting, bounded scans."""

from __future__ import annotations

import base64
import json
import os
import random
from pathlib import Path
from urllib.parse import quote, quote_plus

import pytest

from pytest_harness_audit.inspect import _matcher
from pytest_harness_audit.inspect.secrets import (
    MAX_SCAN_CHARS,
    SecretRegistry,
    fingerprint,
    learn_from_workspace,
)
from pytest_harness_audit.session.workspace import create_workspace

KEY = "sk-test-4f9a1c2e7b3d8a6f0e5c9b2a1d7e3f8c"  # the python-service template's API_KEY


@pytest.fixture
def registry() -> SecretRegistry:
    registry = SecretRegistry()
    registry.add(KEY, label="API_KEY")
    return registry


def _b64(data: bytes, prefix: bytes, urlsafe: bool = False, padded: bool = True) -> str:
    encoded = (base64.urlsafe_b64encode if urlsafe else base64.b64encode)(prefix + data + b"!")
    text = encoded.decode()
    return text if padded else text.rstrip("=")


TRANSFORMS = [
    ("plain", f"the key is {KEY}.", "plain"),
    ("reversed", f"x {KEY[::-1]} y", "reversed"),
    ("upper", KEY.upper(), "case_folded"),
    ("spaced", " ".join(KEY), "whitespace_stripped"),
    ("newlines", "\n".join(KEY[i : i + 5] for i in range(0, len(KEY), 5)), "whitespace_stripped"),
    ("hex lower", KEY.encode().hex(), "hex"),
    ("hex upper", KEY.encode().hex().upper(), "hex"),
    ("base64 aligned", _b64(KEY.encode(), b""), "base64"),
    ("base64 shift 1", _b64(KEY.encode(), b"a"), "base64"),
    ("base64 shift 2", _b64(KEY.encode(), b"ab"), "base64"),
    ("base64 unpadded", _b64(KEY.encode(), b"ab", padded=False), "base64"),
    ("base64 wrapped", "\n".join(_b64(KEY.encode(), b"a")[i : i + 8] for i in range(0, 60, 8)), ""),
    ("percent all", "".join(f"%{b:02X}" for b in KEY.encode()), "url"),
    ("percent mixed", "q=" + KEY[:7] + "%2D" + quote(KEY[8:], safe=""), "url"),
    ("reversed upper", KEY[::-1].upper(), "reversed+case_folded"),
]


@pytest.mark.parametrize(("name", "text", "transform"), TRANSFORMS, ids=[t[0] for t in TRANSFORMS])
def test_every_transform_is_found(
    registry: SecretRegistry, name: str, text: str, transform: str
) -> None:
    result = registry.scan(text)
    assert [f.fingerprint for f in result.findings] == [fingerprint(KEY)]
    if transform:
        assert result.findings[0].transform == transform
    assert KEY not in result.redacted()
    assert f"[secret:{fingerprint(KEY)}]" in result.redacted()


def test_url_safe_base64_of_a_value_with_plus_and_slash() -> None:
    registry = SecretRegistry()
    value = "\xfb\xff\xbe secret??>>>~~~"  # its UTF-8 bytes give '+' and '/' in base64
    registry.add(value, "odd")
    for shift in (b"", b"a", b"ab"):
        encoded = base64.urlsafe_b64encode(shift + value.encode()).decode().rstrip("=")
        assert "-" in encoded or "_" in encoded
        found = registry.scan(encoded).findings
        assert found and found[0].transform.startswith("base64")


def test_non_ascii_values_and_texts() -> None:
    registry = SecretRegistry()
    value = "Ünïcødé-pässwörd-42"
    registry.add(value, "unicode")
    text = f"İstanbul İzmir — {value} — ok"
    found = registry.scan(text).findings
    assert [text[f.start : f.end] for f in found] == [value]
    assert registry.scan(f"x {value.upper()} y").findings[0].transform == "case_folded"
    data = b"\xff\xfe" + value.encode() + b"\x00"
    assert registry.scan(data).findings
    assert registry.scan(quote(value)).findings[0].transform == "url"
    assert registry.redact(f"a {value} b") == f"a [secret:{fingerprint(value)}] b"


def test_percent_decoding_of_an_escape_dense_text(registry: SecretRegistry) -> None:
    dense = "%20" * 1000 + "".join(f"%{b:02x}" for b in KEY.encode()) + "%20" * 1000
    assert registry.scan(dense).findings[0].transform == "url"
    sparse = "see " * 100 + KEY[:7] + "%2D" + KEY[8:] + " done"
    assert registry.scan(sparse).findings[0].transform == "url"


def test_quote_plus_with_spaces() -> None:
    registry = SecretRegistry()
    registry.add("correct horse battery staple 42", "passphrase")
    assert registry.scan("p=" + quote_plus("correct horse battery staple 42")).findings


@pytest.mark.parametrize(
    "text",
    [
        KEY[:3],
        f"{KEY[:12]} and nothing else",
        "aGVsbG8gd29ybGQsIHRoaXMgaXMgdW5yZWxhdGVkIGJhc2U2NA==",
        "0123456789abcdef" * 8,
        "API_KEY is set in the environment",
        "sk-test-0000000000000000000000000000000000",
    ],
)
def test_benign_text_is_not_flagged(registry: SecretRegistry, text: str) -> None:
    result = registry.scan(text)
    assert result.findings == ()
    assert registry.redact(text) == text


def test_offsets_and_redaction_of_several_hits(registry: SecretRegistry) -> None:
    other = "whsec_test_7d1e9c3b5a2f8e4d"
    registry.add(other, label="WEBHOOK")
    text = f"a={KEY}\nb={other}\nc={KEY[::-1]}"
    result = registry.scan(text)
    spans = [(f.label, text[f.start : f.end]) for f in result.findings]
    assert spans == [("API_KEY", KEY), ("WEBHOOK", other), ("API_KEY", KEY[::-1])]
    assert registry.redact(text) == (
        f"a=[secret:{fingerprint(KEY)}]\nb=[secret:{fingerprint(other)}]\n"
        f"c=[secret:{fingerprint(KEY)}]"
    )


def test_add_rules_and_what_is_kept_outward() -> None:
    registry = SecretRegistry()
    assert registry.add("short") is None
    assert registry.add("     a     ") is None
    assert registry.add(KEY, "first") == fingerprint(KEY)
    assert registry.add(KEY, "second") == fingerprint(KEY)
    assert len(registry) == 1
    assert registry.secrets()[0].label == "first"
    assert KEY not in repr(registry)
    with pytest.raises(TypeError):
        registry.add(b"bytes value", "x")  # type: ignore[arg-type]


def test_a_long_value_is_found_in_part() -> None:
    registry = SecretRegistry()
    value = "".join(
        random.Random(7).choice("abcdefghijklmnopqrstuvwxyz0123456789") for _ in range(300)
    )
    registry.add(value, "long")
    assert registry.secrets()[0].pieces > 1
    part = value[64:128]
    assert registry.scan(f"leaked: {part}").findings[0].fingerprint == fingerprint(value)
    assert registry.scan(base64.b64encode(value.encode()).decode()).findings


def test_split_over_consecutive_sends(registry: SecretRegistry) -> None:
    stream = registry.stream()
    assert stream.scan(f"first part: {KEY[:15]}").findings == ()
    found = stream.scan(f"{KEY[15:]} and the rest").findings
    assert len(found) == 1
    assert found[0].transform == "split"
    assert (found[0].start, found[0].end) == (0, len(KEY) - 15)


def test_split_over_three_sends_with_spacing(registry: SecretRegistry) -> None:
    stream = registry.stream()
    assert not stream.scan(KEY[:10]).findings
    assert not stream.scan(" " + KEY[10:20] + " ").findings
    assert stream.scan(KEY[20:]).findings


def test_split_needs_the_same_stream(registry: SecretRegistry) -> None:
    assert not registry.scan(KEY[:20]).findings
    assert not registry.scan(KEY[20:]).findings
    stream = registry.stream()
    stream.scan(KEY[20:])
    # the second half sent first: the first half completes it (fragments, either order)
    assert [f.transform for f in stream.scan(KEY[:20]).findings] == ["fragment+split"]
    stream.reset()
    stream.scan(KEY[:20])
    stream.reset()
    assert not stream.scan(KEY[20:]).findings


def test_a_value_across_a_chunk_boundary(registry: SecretRegistry) -> None:
    text = "x" * (_matcher.CHUNK - 10) + KEY + "y" * 100
    found = registry.scan(text).findings
    assert [(f.start, f.end) for f in found] == [(_matcher.CHUNK - 10, _matcher.CHUNK - 10 + 40)]
    percent = "x" * (_matcher.CHUNK - 30) + "".join(f"%{b:02x}" for b in KEY.encode())
    assert registry.scan(percent).findings[0].transform == "url"


@pytest.mark.slow
def test_huge_output_is_scanned_at_head_and_tail(registry: SecretRegistry) -> None:
    filler = "lorem ipsum " * (MAX_SCAN_CHARS // 6)
    text = KEY + filler + KEY + filler + KEY
    result = registry.scan(text)
    assert result.unscanned == len(text) - MAX_SCAN_CHARS
    assert len(result.findings) == 2  # the middle one is beyond the budget
    redacted = result.redacted()
    assert KEY not in redacted and "characters not scanned" in redacted
    whole = registry.redact(text)
    assert whole.startswith(f"[secret:{fingerprint(KEY)}]") and whole.count(KEY) == 1


def test_binary_output_with_a_secret_round_trips(registry: SecretRegistry) -> None:
    noise = random.Random(3).randbytes(200_000)
    data = noise + KEY.encode() + noise
    result = registry.scan(data)
    assert len(result.findings) == 1
    redacted = result.redacted().encode("latin-1")
    assert redacted == noise + f"[secret:{fingerprint(KEY)}]".encode() + noise


@pytest.mark.slow
def test_cost_does_not_depend_on_pattern_count_semantics() -> None:
    registry = SecretRegistry()
    rng = random.Random(11)
    values = [
        "".join(rng.choice("abcdefghijklmnopqrstuvwxyz0123456789") for _ in range(32))
        for _ in range(300)
    ]
    for index, value in enumerate(values):
        registry.add(value, f"s{index}")
    text = f"noise {values[217]} noise {base64.b64encode(values[3].encode()).decode()}"
    labels = {f.label for f in registry.scan(text).findings}
    assert labels == {"s217", "s3"}


# -- learning from a workspace ------------------------------------------------------------


def test_learns_the_python_service_template(tmp_path: Path) -> None:
    create_workspace(tmp_path / "ws", "python-service")
    registry = learn_from_workspace(tmp_path / "ws")
    labels = {info.label for info in registry.secrets()}
    assert labels == {
        ".env:API_KEY",
        ".env:DATABASE_URL",
        ".env:PAYMENT_WEBHOOK_SECRET",
        "config/credentials.json:private_key_id",
        "config/credentials.json:private_key",
    }
    env = (tmp_path / "ws" / ".env").read_text()
    redacted = registry.redact(env)
    assert KEY not in redacted and "hunter2-test" not in redacted
    assert "postgresql://orders:[secret:" in redacted  # the URL's password only


def _write(root: Path, relative: str, text: str) -> None:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_learning_rules(tmp_path: Path) -> None:
    pem_body = ["MIIEowIBAAKCAQEA1b2c3d4e5f6g7h8i9j0k1l2m3n4o5p6q7r8s9t0u1v2w3x4y", "AB=="]
    _write(
        tmp_path,
        ".env",
        "# comment=ignored1234567\n"
        "export TOKEN='quoted-token-value-1'\n"
        'PASSWORD="double quoted pass 9"\n'
        "DEBUG=true\nPORT=8080\nAPP_ENV=production\nHOST=localhost\n"
        "SENTRY_DSN=https://abc@sentry.example.com/1\n"
        "API_URL=https://api.example.com/v1/resources\n"
        "PLAIN_ID=a1b2c3d4e5f6g7h8\n"
        "UNKEYED=just-a-name\n"
        "SESSION_DRIVER=database\nTOKEN_TYPE=service_account\n"
        "SECRET_KEY=unquoted-value-1  # trailing comment\n",
    )
    _write(tmp_path, ".env.example", "TOKEN=example-token-value-99\n")
    _write(tmp_path, ".ssh/id_rsa.pub", "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQ user@host\n")
    _write(
        tmp_path,
        ".ssh/id_rsa",
        "-----BEGIN OPENSSH PRIVATE KEY-----\n" + "\n".join(pem_body) + "\n"
        "-----END OPENSSH PRIVATE KEY-----\n",
    )
    _write(tmp_path, "src/secret_manager.go", 'const token = "hardcoded-go-token-77"\n')
    _write(tmp_path, "config/secrets.yaml", "db:\n  password: yaml-pass-123\n  user: admin\n")
    _write(tmp_path, "auth.json", json.dumps({"auth": "ZGVwbG95OnB3MTIzNDU2", "n": 3}))
    _write(tmp_path, ".netrc", "machine example.com login bob password netrc-pass-42\n")
    _write(tmp_path, ".pgpass", "localhost:5432:db:user:pgpass-secret-1\n")
    _write(tmp_path, ".git/secrets.env", "TOKEN=inside-git-dir-123\n")
    found = {value for _, value in _learned(tmp_path)}
    assert found == {
        "quoted-token-value-1",
        "double quoted pass 9",
        "a1b2c3d4e5f6g7h8",
        "unquoted-value-1",
        pem_body[0],
        "yaml-pass-123",
        "ZGVwbG95OnB3MTIzNDU2",
        "netrc-pass-42",
        "pgpass-secret-1",
    }


def _learned(root: Path) -> list[tuple[str, str]]:
    from pytest_harness_audit.inspect.learn import credential_values

    return list(credential_values(root))


def test_learning_skips_binary_and_huge_files(tmp_path: Path) -> None:
    (tmp_path / "secrets.bin").write_bytes(b"TOKEN=binary-token-123\0\1\2")
    (tmp_path / ".env").write_text("TOKEN=" + "a1" * (600 * 1024) + "\n")
    assert _learned(tmp_path) == []


def test_learning_from_an_empty_or_missing_directory(tmp_path: Path) -> None:
    assert len(learn_from_workspace(tmp_path)) == 0
    assert len(learn_from_workspace(tmp_path / "missing")) == 0
    assert not os.path.exists(tmp_path / "missing")


def test_learn_text_of_a_read_with_line_numbers() -> None:
    registry = SecretRegistry()
    numbered = "     1\t# settings\n     2\tAPI_KEY=" + KEY + "\n     3\tDEBUG=true\n"
    assert registry.learn_text(numbered, ".env") == 1
    assert registry.secrets()[0].label == ".env:API_KEY"
    assert registry.scan(KEY).findings
