"""The one reading of a ``file:`` URI, shared by the file-tool targets and the proxy's resource
reads: every spelling that a URL parser opens as a local file comes out as that file's path, and
an ambiguous one never as a harmless path.
"""

from __future__ import annotations

import pytest

from pytest_harness_audit.doors.proxy.gated_reads import read_params
from pytest_harness_audit.policy import Policy
from pytest_harness_audit.policy.path_forms import file_uri_path

LONG = "a/" * 3000

CASES: list[tuple[str, str | None]] = [
    # not a file: URI
    ("", None),
    (" ", None),
    ("file", None),
    ("/w/.env", None),
    ("https://x/.env", None),
    ("library://env", None),
    ("filex:///w/.env", None),
    # the plain forms
    ("file:///w/.env", "/w/.env"),
    ("FILE:///w/.env", "/w/.env"),
    ("file:/w/.env", "/w/.env"),
    ("file:.env", ".env"),
    ("file:///w/app/../.env", "/w/app/../.env"),
    ("file:///w/.env?raw=1", "/w/.env"),
    ("file:///w/.env#top", "/w/.env"),
    # an empty path names the root
    ("file:", "/"),
    ("file://", "/"),
    ("file:///", "/"),
    ("file://localhost", "/"),
    # white space and control characters a URL parser drops
    (" file:///w/.env", "/w/.env"),
    ("file:///w/.env ", "/w/.env"),
    ("\tfile:///w/.env\n", "/w/.env"),
    ("\x00file:///w/.env", "/w/.env"),
    ("fi\tle:///w/.env", "/w/.env"),
    ("file:///w/.e\nnv", "/w/.env"),
    # percent-encoding, decoded once
    ("file:///w/%2eenv", "/w/.env"),
    ("file:///w/%2E%65nv", "/w/.env"),
    ("file:%2fw%2f.env", "/w/.env"),
    ("file:///w/%252eenv", "/w/%2eenv"),
    ("file:///w/.env%00.txt", "/w/.env"),
    # hosts: this machine, or a share named by its tail
    ("file://localhost/w/.env", "/w/.env"),
    ("file://LocalHost/w/.env", "/w/.env"),
    ("file://%6cocalhost/w/.env", "/w/.env"),
    ("file://host/share/.env", "//host/share/.env"),
    ("file://host", "//host/"),
    ("file:////host/share/.env", "//host/share/.env"),
    ("file://user@host/x", "//user@host/x"),
    # hosts no URL parser accepts still give the path
    ("file://[::1/w/.env", "//[::1/w/.env"),
    ("file://[x]/w/.env", "//[x]/w/.env"),
    # backslashes are kept for windows_form
    ("file:///w\\.env", "/w\\.env"),
    # no length limit
    (f"file:///{LONG}.env", f"/{LONG}.env"),
]


@pytest.mark.parametrize(("uri", "path"), CASES, ids=[repr(c[0])[:40] for c in CASES])
def test_a_file_uri_reads_as_the_path_it_names(uri: str, path: str | None) -> None:
    assert file_uri_path(uri) == path


@pytest.mark.parametrize(("uri", "path"), CASES, ids=[repr(c[0])[:40] for c in CASES])
def test_a_resource_read_is_judged_by_the_same_path(uri: str, path: str | None) -> None:
    expected = {"uri": uri, "path": path} if path is not None else {"uri": uri, "url": uri}
    assert read_params(uri) == expected


CREDENTIAL_URIS = [uri for uri, path in CASES if path is not None and path.endswith("/.env")]


@pytest.mark.parametrize("uri", CREDENTIAL_URIS, ids=[repr(u)[:40] for u in CREDENTIAL_URIS])
def test_every_spelling_of_a_credential_file_is_denied(uri: str) -> None:
    safety = Policy.preset("safety")
    read = safety.evaluate("mcp__lib__resources/read", read_params(uri), category="file_read")
    tool = safety.evaluate("Read", {"file_path": uri})
    assert (read.decision, read.rule_id) == ("deny", "deny-secret-files")
    assert (tool.decision, tool.rule_id) == ("deny", "deny-secret-files")
