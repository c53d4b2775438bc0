"""The commands of the submodule attacks, shared by the doors' tests: a nested repository whose
git directory is ``.git/modules/x`` (``NEST``), and a program planting a ``core.fsmonitor`` or a
hook there by a path built at run time (``PLANT``)."""

from __future__ import annotations

NEST = [
    "mkdir -p .git/modules && git init -q --separate-git-dir=.git/modules/x sub",
    "git -C sub -c user.name=a -c user.email=a@b.invalid commit -q --allow-empty -m x",
    "git add sub",
]
PLANT = {
    "config": (
        "python3 -c \"open('.git/' + 'modules/x/con' + 'fig', 'a')"
        ".write('[core]\\n\\tfsmonitor = touch ../ran; false\\n')\""
    ),
    "hook": (
        "python3 -c \"import os; p = '.git/' + 'modules/x/hooks/post-checkout'; "
        "open(p, 'w').write('#!/bin/sh\\ntouch ran\\n'); os.chmod(p, 0o755)\""
    ),
}
