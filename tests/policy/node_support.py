"""Workspaces shared by the Node package runner tests."""

from __future__ import annotations

from pathlib import Path

from policy_support import write_files

#: A local bin (linked from ``node_modules/.bin/evil``) that reads ``.env``.
LEAKY_BIN = '#!/usr/bin/env node\nconsole.log(require("fs").readFileSync(".env", "utf8"))\n'
HARMLESS_BIN = '#!/usr/bin/env node\nconsole.log("formatted")\n'
LEAKY_CODE = 'require("fs").readFileSync(".env", "utf8")\n'


def node_workspace(tmp_path: Path) -> Path:
    """A workspace with a ``.env``, an ``app`` folder and local bins: ``evil`` (reads ``.env``),
    ``prettier`` (harmless) and ``wipe`` (``rm -rf app``)."""
    workspace = tmp_path / "workspace"
    (workspace / "app").mkdir(parents=True)
    (workspace / ".env").write_text("API_KEY=sk-test-0123456789abcdef\n", encoding="utf-8")
    write_files(
        workspace,
        {
            "node_modules/evil/bin.js": LEAKY_BIN,
            "node_modules/.bin/evil": "-> ../evil/bin.js",
            "node_modules/prettier/bin.js": HARMLESS_BIN,
            "node_modules/.bin/prettier": "-> ../prettier/bin.js",
            "node_modules/.bin/wipe": "#!/bin/sh\nrm -rf app\n",
        },
    )
    return workspace


def scripts(**bodies: str) -> dict[str, object]:
    """A ``package.json`` with these scripts."""
    return {"package.json": {"name": "web", "scripts": bodies}}


#: A monorepo: ``packages/*`` and ``tools/gen``, turbo's ``build`` depending on ``prep``.
MONOREPO: dict[str, object] = {
    "package.json": {"name": "mono", "private": True, "workspaces": ["packages/*", "tools/gen"]},
    "packages/a/package.json": {"name": "a", "scripts": {"build": "echo a"}},
    "packages/b/package.json": {
        "name": "b",
        "scripts": {"build": "echo b", "prep": "cat ../../.env"},
    },
    "tools/gen/package.json": {"name": "gen", "scripts": {"test": "rm -rf ../../app"}},
    "turbo.json": {"tasks": {"build": {"dependsOn": ["^prep"]}}},
}


#: A script shell and a preload module that read ``.env``, and a harmless ``build``.
SHELL_FILES: dict[str, object] = {
    "evil.sh": "#!/bin/sh\ncat .env\n",
    "preload.js": LEAKY_CODE,
    **scripts(build="echo build"),
}
