"""The architecture stays as it is drawn: the import-linter contracts of
``pyproject.toml`` (``[tool.importlinter]``) hold. Data flows one way (the command
line, then the engines and integrations, comparing, evaluating, scoring a partition,
the steps, the kernels), each layer importing only the layers below it, and
``fastndcg.reference`` imports nothing of the package."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def test_import_contracts_hold():
    importlinter = pytest.importorskip("importlinter")
    from importlinter.cli import lint_imports

    config = str(ROOT / "pyproject.toml")
    assert importlinter is not None
    assert lint_imports(config_filename=config) == 0, (
        "an import breaks the layers of [tool.importlinter] in pyproject.toml: run "
        "lint-imports to see which")
