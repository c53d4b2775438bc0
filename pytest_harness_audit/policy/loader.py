"""Read policy files (YAML or JSON) and resolve ``preset:`` references."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import yaml

try:  # libyaml's parser, ten times faster: every hook event and session reads its policy
    from yaml import CSafeLoader as _SafeLoader
except ImportError:  # pragma: no cover - PyYAML built without libyaml
    from yaml import SafeLoader as _SafeLoader  # type: ignore[assignment]

from pytest_harness_audit._data import data_dir
from pytest_harness_audit.errors import PolicyError
from pytest_harness_audit.policy.model import LineOf, unwrap_reference_config

PRESET_NAMES = ("permissive", "safety", "strict", "audit-only")


class _LineLoader(_SafeLoader):
    """A safe YAML loader that remembers the line of every mapping of the document."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self.lines: dict[int, int] = {}

    def construct_line_map(self, node: yaml.MappingNode) -> Iterator[dict[Any, Any]]:
        # The dict yielded here is the one that ends up in the document (construct_mapping
        # builds a temporary one), so its id is what a later line look-up sees.
        data: dict[Any, Any] = {}
        self.lines[id(data)] = node.start_mark.line + 1
        yield data
        data.update(self.construct_mapping(node))


_LineLoader.add_constructor("tag:yaml.org,2002:map", _LineLoader.construct_line_map)


def _load_with_lines(text: str) -> tuple[Any, dict[int, int]]:
    loader = _LineLoader(text)
    try:
        return loader.get_single_data(), loader.lines
    finally:
        loader.dispose()


def _pair_lines(value: Any, node: yaml.Node, lines: dict[int, int]) -> None:
    """Record the line of every mapping of ``value`` from its YAML node tree ``node``."""
    if isinstance(value, dict) and isinstance(node, yaml.MappingNode):
        lines[id(value)] = node.start_mark.line + 1
        for key_node, value_node in node.value:
            key = key_node.value if isinstance(key_node, yaml.ScalarNode) else None
            if isinstance(key, str) and key in value:
                _pair_lines(value[key], value_node, lines)
    elif isinstance(value, list) and isinstance(node, yaml.SequenceNode):
        for item, item_node in zip(value, node.value, strict=False):
            _pair_lines(item, item_node, lines)


def _json_with_lines(text: str, source: str) -> tuple[Any, dict[int, int]]:
    """Parse JSON with the JSON parser (YAML 1.1 reads ``1e5`` as a string) and take the lines
    of its mappings from the YAML node tree of the same text, when YAML can read it."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise PolicyError(
            f"invalid JSON: {exc.msg} (column {exc.colno})", source=source, line=exc.lineno
        ) from None
    lines: dict[int, int] = {}
    try:
        node = yaml.compose(text, Loader=_SafeLoader)
    except yaml.YAMLError:
        return data, lines
    if node is not None:
        _pair_lines(data, node, lines)
    return data, lines


def read_document(path: Path) -> tuple[Any, LineOf]:
    """Parse a YAML or JSON file; return the data and a line look-up for its mappings."""
    source = str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise PolicyError("file not found", source=source) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise PolicyError(f"cannot read: {exc}", source=source) from None
    if path.suffix.lower() == ".json":
        data, lines = _json_with_lines(text, source)
    else:
        try:
            data, lines = _load_with_lines(text)
        except yaml.MarkedYAMLError as exc:
            mark = exc.problem_mark
            line = mark.line + 1 if mark is not None else None
            raise PolicyError(f"invalid YAML: {exc.problem}", source=source, line=line) from None
        except yaml.YAMLError as exc:  # a reader error (a NUL byte …) spans lines: join them
            raise PolicyError(
                f"invalid YAML: {' '.join(str(exc).split())}", source=source
            ) from None

    def line_of(node: object) -> int | None:
        return lines.get(id(node))

    return data, line_of


def preset_path(name: str) -> Path:
    """The file of a shipped preset; unknown names raise a PolicyError listing the available."""
    if name not in PRESET_NAMES:
        raise PolicyError(
            f"Unknown policy preset: {name!r}. Available: {', '.join(PRESET_NAMES)}", field="preset"
        )
    return data_dir("rules") / f"{name}.yaml"


def merge_over_preset(base: Mapping[str, Any], data: Mapping[str, Any]) -> dict[str, Any]:
    """Apply a document's keys over its preset: rules and command tools are appended, tool
    categories merged, the rest overrides."""
    merged = dict(base)
    merged.pop("preset", None)
    for key, value in data.items():
        if key == "preset":
            continue
        if key == "rules":
            merged["rules"] = list(base.get("rules") or []) + list(value or [])
        elif key == "commandTools" and isinstance(value, list):
            merged["commandTools"] = list(base.get("commandTools") or []) + value
        elif key == "toolCategories" and isinstance(value, Mapping):
            merged["toolCategories"] = {**(base.get("toolCategories") or {}), **value}
        else:
            merged[key] = value
    merged["preset"] = data["preset"]
    return merged


def resolve_document(data: Any, *, source: str | None, seen: tuple[str, ...] = ()) -> Any:
    """Unwrap the reference config and resolve a ``preset:`` key (recursively, no cycles)."""
    data = unwrap_reference_config(data, source=source)
    if not isinstance(data, Mapping) or "preset" not in data:
        return data
    name = data["preset"]
    if not isinstance(name, str):
        raise PolicyError(f"must be a preset name, got {name!r}", source=source, field="preset")
    if name in seen:
        raise PolicyError(
            f"preset cycle: {' -> '.join((*seen, name))}", source=source, field="preset"
        )
    try:
        base_path = preset_path(name)
    except PolicyError as exc:
        raise PolicyError(exc.detail, source=source, field="preset") from None
    base_data, _ = read_document(base_path)
    base = resolve_document(base_data, source=str(base_path), seen=(*seen, name))
    return merge_over_preset(base, data)
