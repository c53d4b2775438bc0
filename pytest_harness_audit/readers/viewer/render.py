"""The viewer's HTML: Jinja2 templates shipped with the package, autoescaped.

Everything an agent controls (tool names, targets, parameters, error text) reaches the page
only through the templates' autoescaping; no HTML is assembled by string concatenation. Before
escaping, every value printed has its terminal and bidirectional controls written as ``\\uXXXX``
(:func:`~pytest_harness_audit.wording.visible`): a right-to-left override in a target would
otherwise reorder the rest of its line, the status and verdict badges after it included.
"""

from __future__ import annotations

import functools
from datetime import datetime, timezone
from typing import TYPE_CHECKING

from pytest_harness_audit.errors import UsageError
from pytest_harness_audit.readers.viewer.palette import TONES, VERDICT_TONES
from pytest_harness_audit.wording import visible

if TYPE_CHECKING:
    import jinja2

    from pytest_harness_audit.readers.viewer.model import RunView

MISSING_JINJA = (
    "the session viewer needs Jinja2: pip install 'jinja2>=3.1' "
    "(it is a dependency of pytest-harness-audit; reinstall the package)"
)


@functools.cache
def environment() -> jinja2.Environment:
    """The Jinja2 environment: package templates, autoescape on, undefined names are errors."""
    try:
        import jinja2
    except ModuleNotFoundError:
        raise UsageError(MISSING_JINJA) from None
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("pytest_harness_audit.readers.viewer", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        finalize=_shown,
    )
    env.globals.update(tones=TONES, verdict_tones=VERDICT_TONES)
    return env


def _shown(value: object) -> object:
    """A printed value, its controls made visible (text only: numbers print as they are)."""
    return visible(value) if isinstance(value, str) else value


def render_html(run: RunView) -> str:
    """The whole page for ``run``: one self-contained HTML document."""
    generated = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return environment().get_template("report.html.j2").render(run=run, generated=generated)
