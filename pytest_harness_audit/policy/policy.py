"""The public :class:`Policy`: load, combine with presets, evaluate."""

from __future__ import annotations

import contextvars
import hashlib
import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from pytest_harness_audit.immune.config import ImmuneConfig
from pytest_harness_audit.policy import views
from pytest_harness_audit.policy.categories import FILE_WRITE, KNOWN_CATEGORIES
from pytest_harness_audit.policy.effects import EffectRules
from pytest_harness_audit.policy.engine import CompiledPolicy
from pytest_harness_audit.policy.evaluation import Evaluation
from pytest_harness_audit.policy.loader import (
    PRESET_NAMES,
    merge_over_preset,
    preset_path,
    read_document,
    resolve_document,
)
from pytest_harness_audit.policy.model import LineOf, PolicySpec, Rule, parse_policy
from pytest_harness_audit.policy.tool_names import BASH

#: Set while an inner call (:mod:`.embedded_calls`) is evaluated: its own inner calls were
#: found with it, so they are not looked for again.
_INNER: contextvars.ContextVar[bool] = contextvars.ContextVar("harness_audit_inner", default=False)


class Policy(CompiledPolicy):
    """A compiled policy: ``defaultPolicy``, ``enforce`` and priority-ordered rules.

    Build one with :meth:`load` (YAML or JSON file, bare or the reference plugin's config),
    :meth:`from_dict` or :meth:`preset`; then call :meth:`evaluate` for each tool call.
    """

    def __init__(
        self, spec: PolicySpec, *, name: str | None = None, source: str | None = None
    ) -> None:
        super().__init__(spec, source=source)
        self.source = source
        self.name = name or spec.name or spec.preset or "custom"
        #: The rules that judge what a call did after it ran (``match.effects``).
        self.effect_rules = EffectRules(spec)
        #: The categories a command is judged in too (:mod:`.views`): what its rules ask for.
        self.views = views.wanted(spec)
        self.immune_config = (
            ImmuneConfig.from_dict(
                spec.immune,
                source=source,
                known_categories=KNOWN_CATEGORIES | spec.extra_categories,
            )
            if spec.immune is not None
            else ImmuneConfig.disabled()
        )

    # -- construction -------------------------------------------------------------------------
    @classmethod
    def from_dict(
        cls,
        data: Mapping[str, Any],
        *,
        source: str | None = None,
        name: str | None = None,
        line_of: LineOf | None = None,
    ) -> Policy:
        """Build a policy from a parsed document (may say ``preset: NAME`` and add rules)."""
        resolved = resolve_document(data, source=source)
        if line_of is None:
            spec = parse_policy(resolved, source=source)
        else:
            spec = parse_policy(resolved, source=source, line_of=line_of)
        return cls(spec, name=name, source=source)

    @classmethod
    def load(cls, path: str | Path) -> Policy:
        """Load a policy file (``.yaml``, ``.yml`` or ``.json``)."""
        path = Path(path)
        data, line_of = read_document(path)
        name = data.get("name") if isinstance(data, Mapping) else None
        return cls.from_dict(data, source=str(path), name=name or path.stem, line_of=line_of)

    @classmethod
    def preset(
        cls,
        name: str,
        *,
        default_policy: str | None = None,
        enforce: bool | None = None,
        rules: Iterable[Rule | Mapping[str, Any]] = (),
    ) -> Policy:
        """A shipped preset, optionally overriding ``defaultPolicy``/``enforce`` and appending
        ``rules`` after the preset's own."""
        path = preset_path(name)
        overrides: dict[str, Any] = {"preset": name}
        if default_policy is not None:
            overrides["defaultPolicy"] = default_policy
        if enforce is not None:
            overrides["enforce"] = enforce
        extra = [r.to_dict() if isinstance(r, Rule) else dict(r) for r in rules]
        if extra:
            overrides["rules"] = extra
        return cls.from_dict(overrides, source=str(path) if not extra else None, name=name)

    def _judged_as_command(
        self, evaluation: Evaluation, tool: str, params: Mapping[str, Any], root: str | None
    ) -> Evaluation:
        """A shell command is judged too as the network exchange and the file writes it
        amounts to (:mod:`.views`); a command tool named after a built-in one as that tool
        (:func:`.views.with_spelled_view`); a call of a command tool that gives it no command (a
        gateway's ``execute`` taking a tool's name and arguments) as each inner call whose
        arguments it carries (:func:`.views.with_embedded_views`)."""
        if self.views:
            evaluation = views.with_views(
                evaluation, tool, params, root, self.views, self._view_evaluation
            )
        if tool != BASH:  # a command tool named after a built-in one (`mcp__x__run_command`)
            evaluation = views.with_spelled_view(
                evaluation, tool, params, root, self._spelled_evaluation
            )
        if _INNER.get() or views.names_command(params):
            return evaluation
        return views.with_embedded_views(
            evaluation, tool, params, root, self._inner_evaluation, self._spelled_evaluation
        )

    def _judged_as_uncategorised(
        self, evaluation: Evaluation, tool: str, params: Mapping[str, Any], root: str | None
    ) -> Evaluation:
        """A call of a tool with no category is judged too as the shell command it is given
        (:func:`.views.with_command_view`), as a write of each path it names
        (:func:`.views.with_write_views`), when a rule is about writes, and as each inner call
        whose arguments it carries (:func:`.views.with_embedded_views`); a tool named after a
        built-in one under another spelling (``bash``, ``Bash ``, ``functions.Bash``, a shell's
        or PowerShell's name) as that tool too (:func:`.views.with_spelled_view`)."""
        if views.names_command(params):
            evaluation = views.with_command_view(
                evaluation, tool, params, root, self._command_evaluation
            )
        if FILE_WRITE in self.views:
            evaluation = views.with_write_views(
                evaluation, tool, params, root, self._view_evaluation
            )
        evaluation = views.with_spelled_view(
            evaluation, tool, params, root, self._spelled_evaluation
        )
        if _INNER.get():
            return evaluation
        return views.with_embedded_views(
            evaluation, tool, params, root, self._inner_evaluation, self._spelled_evaluation
        )

    def _spelled_evaluation(
        self, tool: str, spelled: str, params: Mapping[str, Any], *, root: str | None
    ) -> Evaluation:
        # as the built-in tool itself, by its name and in its category (a rule naming `Bash`
        # judges `bash` too; PowerShell's cmdlets read as POSIX commands); its inner calls are
        # judged by the caller's own evaluation, not again here
        token = _INNER.set(True)
        try:
            return self.evaluate(spelled, params, root=root)
        finally:
            _INNER.reset(token)

    def _inner_evaluation(
        self, tool: str, params: Mapping[str, Any], *, root: str | None
    ) -> Evaluation:
        token = _INNER.set(True)
        try:
            return self.evaluate(tool, params, root=root)
        finally:
            _INNER.reset(token)

    def _view_evaluation(
        self, tool: str, params: Mapping[str, Any], *, root: str | None, category: str
    ) -> Evaluation:
        return super().evaluate(tool, params, root=root, category=category)

    def _command_evaluation(
        self, tool: str, params: Mapping[str, Any], *, root: str | None, category: str
    ) -> Evaluation:
        # the full evaluation of a command (its network and write views included)
        return self.evaluate(tool, params, root=root, category=category)

    @staticmethod
    def preset_names() -> tuple[str, ...]:
        """Names of the shipped presets."""
        return PRESET_NAMES

    @staticmethod
    def preset_description(name: str) -> str:
        """The one-line description of a shipped preset."""
        data, _ = read_document(preset_path(name))
        return str(data.get("description", ""))

    # -- introspection ------------------------------------------------------------------------
    @property
    def default_policy(self) -> str:
        """Decision when no rule matches."""
        return self.spec.default_policy

    @property
    def enforce(self) -> bool:
        """``False`` means dry-run: denials are recorded but not enforced."""
        return self.spec.enforce

    @property
    def rules(self) -> tuple[Rule, ...]:
        """Rules in evaluation order (ascending priority, stable)."""
        # effect rules after the call rules of their priority: they judge later
        return tuple(
            sorted(
                self.spec.rules,
                key=lambda rule: (rule.priority, rule.match.effects is not None),
            )
        )

    @property
    def immune(self) -> Mapping[str, Any] | None:
        """The raw ``immune:`` section, if any."""
        return self.spec.immune

    @property
    def firewall(self) -> Mapping[str, Any] | None:
        """The raw ``firewall:`` section, if any."""
        return self.spec.firewall

    @property
    def audit_level(self) -> str:
        """``minimal``, ``standard`` or ``verbose``."""
        return self.spec.audit_level

    @property
    def show_r6_status(self) -> bool:
        """``showR6Status``: whether the doors print the session's chain status line."""
        return self.spec.show_r6_status

    @property
    def storage_path(self) -> Path | None:
        """``storagePath`` with ``~`` expanded; a relative path is relative to the policy file's
        directory (the current directory for a policy not read from a file)."""
        given = self.spec.storage_path
        if given is None:
            return None
        path = Path(given).expanduser()
        if not path.is_absolute() and self.source and Path(self.source).is_file():
            path = Path(self.source).parent / path
        return path

    def to_dict(self) -> dict[str, Any]:
        """The resolved policy as a bare policy document (rules in evaluation order)."""
        out: dict[str, Any] = {"defaultPolicy": self.default_policy, "enforce": self.enforce}
        if self.spec.tool_categories:
            out["toolCategories"] = dict(self.spec.tool_categories)
        if self.spec.command_tools:
            out["commandTools"] = list(self.spec.command_tools)
        out["rules"] = [rule.to_dict() for rule in self.rules]
        if self.spec.immune is not None:
            out["immune"] = self.spec.immune
        if self.spec.firewall is not None:
            out["firewall"] = self.spec.firewall
        if self.spec.protect:
            out["protect"] = list(self.spec.protect)
        return out

    @property
    def protect(self) -> tuple[str, ...]:
        """Globs of files whose change is the ``protected_file_changed`` effect."""
        return self.spec.protect

    @property
    def content_hash(self) -> str:
        """SHA-256 (hex) of the canonical JSON of :meth:`to_dict` — every rule field counts."""
        canonical = json.dumps(
            self.to_dict(), sort_keys=True, separators=(",", ":"), ensure_ascii=False
        )
        return hashlib.sha256(canonical.encode("utf-8")).hexdigest()

    def __repr__(self) -> str:
        return (
            f"Policy(name={self.name!r}, default={self.default_policy!r}, "
            f"enforce={self.enforce!r}, rules={len(self.rules)})"
        )


__all__ = ["Policy", "merge_over_preset"]
