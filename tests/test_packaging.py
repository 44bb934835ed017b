"""What `pip install .` ships (every package under fastndcg/ is listed in
pyproject.toml: a non-editable install copies only the listed ones) and what
`import fastndcg` loads."""

from __future__ import annotations

import os
import tomllib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_every_subpackage_is_installed():
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        listed = set(tomllib.load(f)["tool"]["setuptools"]["packages"])
    on_disk = set()
    for folder, _, files in os.walk(os.path.join(ROOT, "fastndcg")):
        if "__init__.py" in files and "__pycache__" not in folder:
            on_disk.add(os.path.relpath(folder, ROOT).replace(os.sep, "."))
    assert on_disk == listed, f"pyproject.toml [tool.setuptools] packages should be {sorted(on_disk)}"


def test_public_names_load_lazily_and_stay_functions():
    """`import fastndcg` loads no Numba and no pyarrow.dataset; `fastndcg.evaluate` is
    the function even when the submodule of that name was imported first."""
    import subprocess
    import sys

    code = ("import sys, fastndcg.evaluate, fastndcg.compare, fastndcg\n"
            "assert callable(fastndcg.evaluate) and type(fastndcg.evaluate).__name__ == 'function'\n"
            "assert type(fastndcg.compare).__name__ == 'function'\n"
            "assert fastndcg.Comparison.__name__ == 'Comparison'\n"
            "assert 'matplotlib' not in sys.modules and 'scipy' not in sys.modules\n"
            "assert fastndcg.Report.__name__ == 'Report' and callable(fastndcg.ndcg)\n"
            "assert 'numba' not in sys.modules, 'numba imported'\n"
            "assert 'pyarrow.dataset' not in sys.modules, 'pyarrow.dataset imported'\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=ROOT)
    assert done.returncode == 0, done.stderr
