"""Native libraries program text loads itself are unreadable, as ``LD_PRELOAD=./x.so ls`` is
(``policy/shell/native_code.py``); the system's, by a bare name or a system folder, are not."""

from __future__ import annotations

from pathlib import Path

import pytest
from policy_support import safety_in, secret_workspace

from pytest_harness_audit.policy.shell.native_code import native_load

UNREADABLE = ("warn", "unreadable-command")
ALLOWED = ("allow", None)

FILES = {
    "load.py": "import ctypes\nctypes.CDLL('./x.so')\n",
    "addon.js": "module.exports = require('./build/addon.node')\n",
    "fiddle.rb": "require 'fiddle'\nFiddle.dlopen('./x.so')\n",
    "lib/loader.rb": "require 'fiddle'\nFiddle::Handle.new('./x.so')\n",
    "libc.py": "import ctypes\nctypes.CDLL('libc.so.6').getpid()\n",
    "plain.js": "module.exports = require('./lib.json')\n",
}


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return secret_workspace(tmp_path_factory.mktemp("native"), FILES)


@pytest.mark.parametrize(
    "command",
    [
        # Python: ctypes, cffi, the extension module loaders
        "python3 -c \"import ctypes; ctypes.CDLL('./x.so')\"",
        "python3 -c \"import ctypes; ctypes.cdll.LoadLibrary('./x.so')\"",
        "python3 -c \"import ctypes; ctypes.PyDLL('/tmp/x.so')\"",
        "python3 -c \"from ctypes import CDLL; CDLL('build/x.so')\"",
        "python3 -c \"import ctypes; ctypes.cdll['./x.so']\"",
        "python3 -c \"import ctypes; getattr(ctypes.cdll, './x.so')\"",
        "python3 -c \"import ctypes; getattr(ctypes, 'CD' + 'LL')('./x.so')\"",
        'python3 -c "import ctypes, sys; ctypes.CDLL(sys.argv[1])" ./x.so',
        "python3 -c \"import ctypes, os; ctypes.CDLL(os.path.abspath('x.so'))\"",
        "python3 -c \"import _ctypes; _ctypes.dlopen('./x.so')\"",
        "python3 -c \"import cffi; ffi = cffi.FFI(); ffi.dlopen('./x.so')\"",
        "python3 -c \"import imp; imp.load_dynamic('x', './x.so')\"",
        "python3 -c \"import importlib.machinery as m; m.ExtensionFileLoader('x', './x.so')\"",
        "python3 -c \"import ctypes; ctypes.CDLL('/usr/lib/../../tmp/x.so')\"",
        "python3 load.py",
        # the loader called by another name
        "python3 -c \"from ctypes import CDLL as L; L('./x.so')\"",
        "python3 -c \"import ctypes; L = ctypes.CDLL; L('./x.so')\"",
        "python3 -c \"import ctypes; list(map(ctypes.CDLL, ['./x.so']))\"",
        "python3 -c \"from ctypes import cdll as c; c.LoadLibrary('/tmp/x.so')\"",
        "python3 -c \"exec('L = ctypes.CDLL'); L('./x.so')\"",
        # Node: an addon file, process.dlopen
        "node -e \"require('./x.node')\"",
        "node -e \"process.dlopen(module, './x.node')\"",
        "node -e \"process.dlopen(module, require('path').resolve('x.node'))\"",
        "node addon.js",
        # Ruby, Perl, PHP
        'ruby -e \'require "fiddle"; Fiddle.dlopen("./x.so")\'',
        'ruby -e \'require "fiddle"; Fiddle::Handle.new "/tmp/x.so"\'',
        'ruby -e \'require "ffi"; module M; extend FFI::Library; ffi_lib "./x.so"; end\'',
        "ruby fiddle.rb",
        "ruby -e 'require_relative \"lib/loader\"'",
        "perl -e 'require DynaLoader; DynaLoader::dl_load_file(\"./x.so\")'",
        "perl -MFFI::Platypus -e 'FFI::Platypus->new(lib => \"./x.so\")'",
        'php -r \'$f = FFI::cdef("int f();", "./x.so");\'',
        "php -r 'FFI::load(\"x.h\");'",
    ],
)
def test_native_code_loaded_by_program_text_is_unreadable(root: Path, command: str) -> None:
    assert safety_in(command, root) == UNREADABLE


@pytest.mark.parametrize(
    "command",
    [
        "python3 -c \"import ctypes; ctypes.CDLL('libc.so.6')\"",
        "python3 -c \"import ctypes; print(ctypes.cdll.LoadLibrary('libm.so.6').cos)\"",
        "python3 -c \"import ctypes, ctypes.util; ctypes.CDLL(ctypes.util.find_library('c'))\"",
        'python3 -c "import ctypes; ctypes.CDLL(None)"',
        "python3 -c \"import ctypes; ctypes.CDLL('/usr/lib/x86_64-linux-gnu/libm.so.6')\"",
        'python3 -c "import ctypes; print(ctypes.sizeof(ctypes.c_int))"',
        'python3 -c "import cffi; ffi = cffi.FFI(); ffi.dlopen(None)"',
        "python3 -c \"print('ctypes.CDLL loads ./x.so')\"",
        "python3 libc.py",
        "python3 -c \"import ctypes; from ctypes import CDLL; CDLL('libc.so.6')\"",
        "python3 -c \"import ctypes as c; c.CDLL(r'/usr/lib/x86_64-linux-gnu/libm.so.6')\"",
        "node -e \"require('./plain.js')\"",
        'ruby -e \'require "fiddle"; Fiddle.dlopen("libc.so.6")\'',
        'ruby -e \'require "ffi"; module M; extend FFI::Library; ffi_lib "c"; end\'',
        "php -r '$f = FFI::cdef(\"int printf(const char *, ...);\");'",
        "python3 -c 'for dl in range(3): print(dl)'",
    ],
)
def test_system_libraries_and_look_alikes_stay_allowed(root: Path, command: str) -> None:
    assert safety_in(command, root) == ALLOWED


def test_the_reason_names_the_library() -> None:
    assert native_load("import ctypes; ctypes.CDLL('./x.so')") == (
        "its program loads native code it cannot read: ./x.so"
    )
    assert native_load("ctypes.CDLL(path)") == (
        "its program loads native code it cannot read: a library named at run time"
    )
    assert native_load("print('hello')") is None
