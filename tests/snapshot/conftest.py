"""The in-process pytest runs of these tests (``pytester.runpytest``) unload, when each ends,
the modules it loaded: PyYAML, loaded again by the next run, no longer reads a policy file
(libyaml's parser stays bound to the first load). Loaded here, it stays for every run, so a
file of this folder passes alone as in the whole suite."""

import yaml  # noqa: F401
