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
    """`import fastndcg` loads no Numba and no pyarrow.dataset; the public functions
    are functions, their modules private (no module shadows a public name), and
    ``dir(fastndcg)`` lists ``__all__`` only."""
    import subprocess
    import sys

    code = ("import sys, importlib, fastndcg, fastndcg._evaluate, fastndcg._compare\n"
            "assert callable(fastndcg.evaluate) and type(fastndcg.evaluate).__name__ == 'function'\n"
            "assert type(fastndcg.compare).__name__ == 'function'\n"
            "for name in ('evaluate', 'compare', 'agreement', 'warmup'):\n"
            "    try:\n"
            "        importlib.import_module('fastndcg.' + name)\n"
            "    except ModuleNotFoundError:\n"
            "        pass\n"
            "    else:\n"
            "        raise AssertionError('a module named fastndcg.' + name)\n"
            "    assert type(getattr(fastndcg, name)).__name__ == 'function', name\n"
            "assert fastndcg.Comparison.__name__ == 'Comparison'\n"
            "assert fastndcg.evaluate_runs.__name__ == 'evaluate_runs'\n"
            "assert issubclass(fastndcg.RunidClash, ValueError)\n"
            "assert dir(fastndcg) == sorted(fastndcg.__all__)\n"
            "assert 'matplotlib' not in sys.modules and 'scipy' not in sys.modules\n"
            "assert fastndcg.Report.__name__ == 'Report' and callable(fastndcg.ndcg)\n"
            "assert 'numba' not in sys.modules, 'numba imported'\n"
            "assert 'pyarrow.dataset' not in sys.modules, 'pyarrow.dataset imported'\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=ROOT)
    assert done.returncode == 0, done.stderr
