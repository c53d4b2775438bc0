"""The watches a door whose calls run in its own process puts on its gate (one list).

What a call *did* is judged by inspectors around it (DESIGN §2, inspect), and every door of that
kind — the harness (scripted calls, scenarios, function tools, agent runs, ``start_proxy``)
and ``harness-audit proxy`` — takes them from :func:`watch_calls`, so no door misses one the
others have:

* the workspace's effects and known secrets (:class:`~.gate.inspection.SessionInspection`),
  with a note when the kernel cannot watch its credential files (:mod:`.kernel_watch`);
* the seeds this process copies workspaces from (:class:`~.seed_watch.SeedWatch`);
* the auditor's installation and policy file (:class:`~.gate.install_watch.InstallWatch`);
* the session's post store, where it serves sends (:class:`~.gate.post_store_watch.PostStoreWatch`);
* the submodules' git configurations and hooks (:class:`~.gate.module_git_watch.ModuleGitWatch`).

Each applies where its object exists: a workspace (effects, submodules), seeds (only a process
that builds workspaces from templates has any), a post store (only a door that serves
``send_message``). The installation always exists: a door without a workspace (a proxy in front
of upstream servers only) still watches it. :data:`STANDARD_WATCHES` names what each needs;
the gate's own watch of lifts (:class:`~.gate.lift_watch.LiftWatch`) comes with every gate.
The hook door runs ``pre`` and ``post`` in two processes and keeps the same watches its own way
(:mod:`~pytest_harness_audit.doors.hook_effects`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pytest_harness_audit.gate import Gate
from pytest_harness_audit.gate.inspection import SessionInspection
from pytest_harness_audit.gate.install_watch import InstallWatch
from pytest_harness_audit.gate.module_git_watch import ModuleGitWatch
from pytest_harness_audit.gate.post_store_watch import PostStoreWatch
from pytest_harness_audit.gate.record_scrub import KeptSecrets
from pytest_harness_audit.inspect import Inspector
from pytest_harness_audit.session.kernel_watch import note_unwatched_reads
from pytest_harness_audit.session.seed_watch import SeedWatch
from pytest_harness_audit.social.store import DATABASE_NAME

#: What a watch needs to apply to a door: always, a workspace, seeds, or a post store.
Needs = Literal["always", "workspace", "seeds", "post store"]

#: Every standard watch and what it needs (see the module doc).
STANDARD_WATCHES: Mapping[type, Needs] = {
    SessionInspection: "workspace",
    SeedWatch: "seeds",
    InstallWatch: "always",
    PostStoreWatch: "post store",
    ModuleGitWatch: "workspace",
}


def post_store_of(storage_dir: str | Path, session_id: str) -> Path:
    """The database of a session's post store (``<storage>/social/<session>/``)."""
    return Path(storage_dir) / "social" / session_id / DATABASE_NAME


@dataclass(frozen=True)
class DoorWatches:
    """The watches :func:`watch_calls` put on a gate (``None``: not applicable there)."""

    kept: KeptSecrets
    inspection: SessionInspection | None
    seed_watch: SeedWatch | None
    install_watch: InstallWatch


def watch_calls(
    gate: Gate,
    *,
    root: str | Path | None,
    post_store: Path | None = None,
    seeds: bool = False,
    origins: Sequence[str | Path] = (),
) -> DoorWatches:
    """Append the standard watches that apply to ``gate``'s inspectors, in a fixed order.

    ``root``: the workspace (``None``: the door has none); ``post_store``: the database of the
    post store the door serves sends from; ``seeds``: this process builds workspaces from
    template seeds; ``origins``: the copies a workspace was made from (their secrets are known).
    """
    kept = KeptSecrets()
    inspection = None
    if root is not None:
        inspector = Inspector(
            Path(root), secrets=kept, protect=gate.policy.protect, origins=origins
        )
        if gate.store_guard.in_workspace is not None:
            inspector.own_folders = (gate.store_guard.in_workspace,)
        inspection = SessionInspection(inspector, gate.policy)
        gate.inspectors.append(inspection)
        note_unwatched_reads(gate, inspector)  # a check the kernel cannot make is said
    seed_watch = SeedWatch() if seeds else None
    if seed_watch is not None:
        gate.inspectors.append(seed_watch)
    install_watch = InstallWatch.of(gate.install_guard.paths)
    gate.inspectors.append(install_watch)
    if post_store is not None:
        gate.inspectors.append(PostStoreWatch(post_store))
    if root is not None:
        gate.inspectors.append(ModuleGitWatch(root))
    return DoorWatches(kept, inspection, seed_watch, install_watch)


__all__ = [
    "STANDARD_WATCHES",
    "DoorWatches",
    "post_store_of",
    "watch_calls",
]
