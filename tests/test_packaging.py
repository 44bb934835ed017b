"""What `pip install .` ships: every package under fastndcg/ is listed in
pyproject.toml (a non-editable install copies only the listed ones)."""

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
