"""A Python script file run as the program is judged by what running it runs
(``policy/shell/import_time.py``'s :func:`main_time_code`): its top level, its ``__main__``
block and the functions those name, not a function it only defines."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_harness_audit.policy import Policy

SAFETY = Policy.preset("safety")
HELPER = "import shutil\n\ndef clean(d):\n    shutil.rmtree(d)\n"
DENIED = ("deny", "deny-destructive-commands")


def _decision(
    root: Path, text: str, command: str = "python3 app/util.py"
) -> tuple[str, str | None]:
    (root / "app").mkdir(exist_ok=True)
    (root / "app" / "util.py").write_text(text)
    evaluation = SAFETY.evaluate("Bash", {"command": command}, root=str(root))
    return evaluation.decision, evaluation.rule_id


@pytest.mark.parametrize(
    "text",
    [
        HELPER + "clean('app')\n",
        HELPER + "if __name__ == '__main__':\n    clean('app')\n",
        HELPER + "def main():\n    clean('app')\n\nif __name__ == '__main__':\n    main()\n",
        HELPER + "def main():\n    for d in ['app']:\n        if d:\n            clean(d)\n"
        "    else:\n        pass\nif __name__ == '__main__':\n    main()\n",
        HELPER + "import atexit\natexit.register(clean, 'app')\n",
        HELPER + "ACTIONS = {'clean': clean}\nimport sys\nACTIONS[sys.argv[1]]('app')\n",
        HELPER + "import sys\nglobals()[sys.argv[1]]('app')\n",
        HELPER + "import cProfile\ncProfile.run(\"clean('app')\")\n",
        # a function registered by a decorator runs when the program dispatches to it
        "import shutil, argparse\nCOMMANDS = {}\ndef command(f):\n    COMMANDS[f.__name__] = f\n"
        "    return f\n@command\ndef clean():\n    shutil.rmtree('app')\n"
        "if __name__ == '__main__':\n    import sys\n    COMMANDS[sys.argv[1]]()\n",
        # a test case class: unittest finds its methods itself
        "import shutil, unittest\nclass T(unittest.TestCase):\n    def test_x(self):\n"
        "        shutil.rmtree('app')\nif __name__ == '__main__':\n    unittest.main()\n",
        # a function reached through the script's own namespace, frames or objects
        HELPER + "from __main__ import clean as c\nc('app')\n",
        HELPER + "import sys\nsys._getframe().f_globals['cle' + 'an']('app')\n",
        HELPER + "import gc\n[o for o in gc.get_objects() if type(o).__name__ == 'function'"
        " and o.__name__ == 'cle' + 'an'][0]('app')\n",
        HELPER + "run = lambda: 0\nrun.__globals__['cle' + 'an']('app')\n",
        HELPER.replace("def clean(d)", "def __getattr__(d)") + "import __main__\n__main__.app\n",
        HELPER + "def noted(x: clean('app')) -> None:\n    pass\n",
        HELPER + "def noted() -> clean('app'):\n    pass\n",
        # a text this Python cannot parse is judged whole
        HELPER + "print(f'{'a'}')\nmatch = (\n",
    ],
)
def test_what_running_a_script_runs_is_judged(tmp_path: Path, text: str) -> None:
    assert _decision(tmp_path, text) == DENIED


def test_a_module_run_with_dash_m_runs_its_main_block(tmp_path: Path) -> None:
    text = HELPER + "if __name__ == '__main__':\n    clean('app')\n"
    assert _decision(tmp_path, text, "python3 -m app.util") == DENIED
    assert _decision(tmp_path, HELPER, "python3 -m app.util") == ("allow", None)


@pytest.mark.parametrize(
    "text",
    [
        HELPER,
        HELPER + "if __name__ == '__main__':\n    print('usage: import clean')\n",
        HELPER + "def main():\n    print('ok')\n\nif __name__ == '__main__':\n    main()\n",
        HELPER
        + "import functools\n@functools.lru_cache\ndef size():\n    return 1\nprint(size())\n",
    ],
)
def test_a_function_a_script_only_defines_is_not_judged(tmp_path: Path, text: str) -> None:
    assert _decision(tmp_path, text) == ("allow", None)


@pytest.mark.parametrize(
    "tail",
    [
        "exec(open(__file__).read().split('    ')[1])\n",
        "import sys\nexec(open(sys.argv[0]).read().split('    ')[1])\n",
        "import inspect\nexec(inspect.getsource(clean).split('    ')[1])\n",
    ],
)
def test_a_script_reading_its_own_text_is_judged_whole(tmp_path: Path, tail: str) -> None:
    assert _decision(tmp_path, HELPER.replace("rmtree(d)", "rmtree('app')") + tail) == DENIED
