"""The ``--harness-audit…`` options, their ini settings, and the plugin's state in
``config.stash`` / ``item.stash``.

Cheap to import: the harness and syrupy are named here for mypy only.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from pytest_harness_audit.plugin.markers import verdict_name
from pytest_harness_audit.types import VerdictName

if TYPE_CHECKING:
    from syrupy.assertion import SnapshotAssertion

    from pytest_harness_audit.plugin.summary import SessionSummary
    from pytest_harness_audit.readers.otel import SpanFile
    from pytest_harness_audit.readers.snapshot import SnapshotBaseline
    from pytest_harness_audit.session.harness import Harness


@dataclass(frozen=True)
class AuditOptions:
    """What ``--harness-audit`` and its ini settings say."""

    enabled: bool
    directory: Path
    policy: str
    expect: VerdictName
    #: Where ``--harness-audit-html`` writes the session view at the end of the run.
    html: Path | None = None
    #: How many runs' sessions the audit directory keeps (``--harness-audit-keep``; 0: all).
    keep: int = 3
    #: Where ``--harness-audit-otel`` sends each session's trace: ``otlp`` or a file.
    otel: str | None = None


#: The resolved options (``config.stash``).
OPTIONS_KEY: pytest.StashKey[AuditOptions] = pytest.StashKey()
#: The summary rows of the run so far (``config.stash``; the controller's include its workers').
SUMMARIES_KEY: pytest.StashKey[list[SessionSummary]] = pytest.StashKey()
#: The harness sessions a test made (``item.stash``), checked at the end of the test.
SESSIONS_KEY: pytest.StashKey[list[Harness]] = pytest.StashKey()
#: Where each session of a test stood when its markers were checked, by ``id`` (``item.stash``):
#: one changed after it (a call from a fixture's teardown, say) is checked again.
CHECKED_KEY: pytest.StashKey[dict[int, tuple[bool, int, str]]] = pytest.StashKey()
#: The snapshot a ``harness_snapshot`` test's sessions are compared with (``item.stash``).
SNAPSHOT_KEY: pytest.StashKey[SnapshotAssertion] = pytest.StashKey()
#: The run's snapshot files as they were before any test ran (``config.stash``; not under
#: ``--snapshot-update``).
BASELINE_KEY: pytest.StashKey[SnapshotBaseline] = pytest.StashKey()
#: The snapshot folder an ``audit_snapshot`` test compares with (``item.stash``).
SNAPSHOT_FOLDER_KEY: pytest.StashKey[str] = pytest.StashKey()
#: What the run wrote to a ``--harness-audit-otel`` file (``config.stash``), written whole at
#: its end.
SPAN_FILE_KEY: pytest.StashKey[SpanFile] = pytest.StashKey()
#: The lines the end of the run prints about the files it wrote: ``(line, failed)``.
ARTIFACT_LINES_KEY: pytest.StashKey[list[tuple[str, bool]]] = pytest.StashKey()


def add_options(parser: pytest.Parser) -> None:
    """Register the ``--harness-audit…`` option group and the ini settings."""
    group = parser.getgroup("harness-audit", "agent harness auditing")
    group.addoption(
        "--harness-audit",
        action="store_true",
        default=False,
        help="audit every harness session: keep and verify chains, print a summary",
    )
    group.addoption(
        "--harness-audit-dir",
        default=None,
        metavar="DIR",
        help="where chains are kept (default: ini harness_audit_dir or .harness-audit)",
    )
    group.addoption(
        "--harness-audit-policy",
        default=None,
        metavar="NAME|FILE",
        help="policy of harness sessions (default: ini harness_audit_policy or safety)",
    )
    group.addoption(
        "--harness-audit-html",
        default=None,
        metavar="PATH",
        help="at the end of the run, write a static HTML view of the run's harness sessions",
    )
    group.addoption(
        "--harness-audit-keep",
        default=None,
        metavar="N",
        help="keep the sessions of the last N runs in the audit directory, as pytest keeps "
        "basetemps (default: ini harness_audit_keep or 3; 0 keeps every run)",
    )
    group.addoption(
        "--harness-audit-otel",
        default=None,
        metavar="otlp|PATH.json",
        help="export each harness session as an OpenTelemetry trace (GenAI conventions): "
        "otlp (OTEL_EXPORTER_OTLP_ENDPOINT) or a JSON Lines file; needs the otel extra",
    )
    group.addoption(
        "--harness-audit-record",
        default="none",
        choices=("none", "new", "all"),
        help="cassettes of recording_proxy(cassette=…), as pytest-recording's --record-mode: "
        "none replays only (default), new records missing cassettes and what existing ones "
        "lack, all records again",
    )
    parser.addini("harness_audit_dir", "directory for kept audit chains", default=".harness-audit")
    parser.addini(
        "harness_audit_keep", "runs whose sessions the audit directory keeps", default="3"
    )
    parser.addini("harness_audit_policy", "default policy: preset name or file", default="safety")
    parser.addini(
        "harness_audit_expect",
        "verdict every unmarked session must reach at least "
        "(PASS, WARN or FAIL) under --harness-audit",
        default="PASS",
    )


def resolve_options(config: pytest.Config) -> AuditOptions:
    """The options of this run, checked once at start-up: a bad option or ini value is a
    ``pytest.UsageError`` (exit 4) naming it, before any test runs."""
    enabled = bool(config.getoption("--harness-audit"))
    dir_option = config.getoption("--harness-audit-dir")
    if dir_option and not enabled:
        raise pytest.UsageError(
            f"--harness-audit-dir {dir_option}: has no effect without --harness-audit"
        )
    directory = Path(config.invocation_params.dir, dir_option or config.getini("harness_audit_dir"))
    if enabled and directory.exists() and not directory.is_dir():
        origin = "--harness-audit-dir" if dir_option else "ini harness_audit_dir"
        raise pytest.UsageError(f"{origin} {directory}: exists and is not a directory")
    try:
        expect = verdict_name(config.getini("harness_audit_expect"))
    except ValueError as exc:
        raise pytest.UsageError(f"ini harness_audit_expect: {exc}") from None
    policy_option = config.getoption("--harness-audit-policy")
    policy = policy_option or config.getini("harness_audit_policy")
    origin = "--harness-audit-policy" if policy_option else "ini harness_audit_policy"
    _check_policy(policy, origin, Path(str(config.rootpath)))
    keep = _keep(config)
    return AuditOptions(
        keep=keep,
        enabled=enabled,
        directory=directory,
        policy=policy,
        expect=expect,
        html=_html_path(config),
        otel=_otel_target(config),
    )


def _html_path(config: pytest.Config) -> Path | None:
    value = config.getoption("--harness-audit-html")
    return Path(config.invocation_params.dir, value) if value else None


def _otel_target(config: pytest.Config) -> str | None:
    """``otlp`` or a file path; the SDK must be installed (checked without importing it)."""
    value = config.getoption("--harness-audit-otel")
    if not value:
        return None
    if value != "otlp" and not value.endswith((".json", ".jsonl")):
        raise pytest.UsageError(
            f"--harness-audit-otel {value}: expected otlp or a file ending .json or .jsonl"
        )
    import importlib.util

    needed = ["opentelemetry.sdk"] + (
        ["opentelemetry.exporter.otlp.proto.http"] if value == "otlp" else []
    )
    for module in needed:
        try:
            found = importlib.util.find_spec(module) is not None
        except ModuleNotFoundError:
            found = False
        if not found:
            raise pytest.UsageError(
                f"--harness-audit-otel: {module} is not installed; "
                "pip install 'pytest-harness-audit[otel]'"
            )
    return value if value == "otlp" else str(Path(config.invocation_params.dir, value))


def _check_policy(policy: str, origin: str, root: Path) -> None:
    """Load a policy file an option names now, so a typo stops the run once instead of failing
    every test. The default preset needs no loading (and keeps the plugin's import cheap)."""
    if policy == "safety":
        return
    from pytest_harness_audit.errors import HarnessAuditError
    from pytest_harness_audit.policy.source import resolve_policy

    try:
        resolve_policy(policy, base_dir=root)
    except HarnessAuditError as exc:
        raise pytest.UsageError(f"{origin}: {exc}") from None


def _keep(config: pytest.Config) -> int:
    option = config.getoption("--harness-audit-keep")
    text = option if option is not None else config.getini("harness_audit_keep")
    origin = "--harness-audit-keep" if option is not None else "ini harness_audit_keep"
    try:
        keep = int(text)
    except ValueError:
        keep = -1
    if keep < 0:
        raise pytest.UsageError(f"{origin} {text!r}: expected a whole number, 0 or more")
    return keep
