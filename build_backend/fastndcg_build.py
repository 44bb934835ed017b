"""fastndcg's build backend: setuptools' own, and every wheel carries compiled kernels.

Building a wheel (``pip install .``, ``python -m build``, a wheel built from the
sdist) runs the warm-up on the built package, compiling every kernel variant into
the package's own cache, ``fastndcg/_prebuilt``, so a fresh install compiles
nothing. The build environment therefore needs the package's own dependencies
(Numba, NumPy, pyarrow), which this backend asks for beside setuptools'.

* By default the code is for the CPU of the building machine (``pip install .``
  builds where it installs).
* ``FASTNDCG_PORTABLE=1`` compiles for a generic CPU of the architecture, for a wheel
  that travels to other machines.
* ``FASTNDCG_BUILD_KERNELS=0`` builds a wheel without compiled kernels.

A wheel with compiled kernels holds machine code for one platform and one Python,
so it is tagged for them (``cp311-cp311-linux_x86_64``, say), not ``py3-none-any``.
Editable installs (``pip install -e .``) compile nothing: their sources change.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

from setuptools import build_meta
from setuptools.build_meta import *  # noqa: F401,F403  (every hook, as setuptools has it)
from setuptools.command.build_py import build_py

try:
    from setuptools.command.bdist_wheel import bdist_wheel
except ImportError:  # setuptools before 70.1
    from wheel.bdist_wheel import bdist_wheel

_COMPILE = ("from fastndcg._warmup import build_package_cache\n"
            "print(build_package_cache().describe())")


def _kernels_wanted() -> bool:
    value = os.environ.get("FASTNDCG_BUILD_KERNELS", "1").strip().lower()
    return value not in ("0", "false", "no", "off")


def get_requires_for_build_wheel(config_settings=None):
    """setuptools' requirements, and the package's own dependencies to compile with."""
    from setuptools.config.pyprojecttoml import read_configuration

    wanted = build_meta.get_requires_for_build_wheel(config_settings)
    if _kernels_wanted():
        wanted += read_configuration("pyproject.toml")["project"]["dependencies"]
    return wanted


class BuildWithKernels(build_py):
    """``build_py``, then the kernels compiled into ``<build_lib>/fastndcg/_prebuilt``."""

    def run(self):
        super().run()
        if self.editable_mode:
            return
        build_lib = os.path.abspath(self.build_lib)
        cache = os.path.join(build_lib, "fastndcg", "_prebuilt")
        shutil.rmtree(cache, ignore_errors=True)  # never ship an earlier build's
        if not _kernels_wanted():
            return
        # the built package first; then what the build environment has (pip's isolated
        # build environment is on PYTHONPATH)
        path = os.pathsep.join(p for p in (build_lib, os.environ.get("PYTHONPATH")) if p)
        env = dict(os.environ, FASTNDCG_CACHE="1", FASTNDCG_CACHE_DIR=cache, PYTHONPATH=path,
                   PYTHONDONTWRITEBYTECODE="1")
        # (run from build_lib: the working directory comes first on sys.path)
        subprocess.run([sys.executable, "-c", _COMPILE], env=env, cwd=build_lib, check=True)


class PlatformWheel(bdist_wheel):
    """``bdist_wheel``, tagged for this platform and Python when it carries kernels."""

    def finalize_options(self):
        super().finalize_options()
        if _kernels_wanted():
            self.root_is_pure = False
