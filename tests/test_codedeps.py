"""Derived code inputs and per-entry digests, on small packages written for the test."""

import json
from pathlib import Path

import pytest

from softmax_ood.codedeps import (
    class_params,
    code_inputs,
    entry_digest,
    entry_files,
    registry_entries,
)

ROOT = Path(__file__).resolve().parents[1]


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)


@pytest.fixture()
def tree(tmp_path):
    src = tmp_path / "src"
    _write(
        src,
        {
            "softmax_ood/__init__.py": "",
            "softmax_ood/a.py": "from .b import f\n",
            "softmax_ood/b.py": "def f():\n    from . import c\n",  # import inside a function
            "softmax_ood/c.py": "import numpy\n",
            "softmax_ood/unused.py": "",
            "softmax_ood/pkg/__init__.py": "",
            "softmax_ood/pkg/d.py": "from ..a import f\n",
        },
    )
    return tmp_path, src


def test_code_inputs_follow_imports_transitively(tree):
    root, src = tree
    (root / "script.py").write_text("from softmax_ood.pkg.d import f\nimport os\n")
    found = [Path(p).relative_to(src).as_posix() for p in code_inputs(root / "script.py", src)]
    assert found == [
        "softmax_ood/__init__.py",
        "softmax_ood/a.py",
        "softmax_ood/b.py",
        "softmax_ood/c.py",
        "softmax_ood/pkg/__init__.py",
        "softmax_ood/pkg/d.py",
    ]
    excluded = code_inputs(root / "script.py", src, exclude=[src / "softmax_ood/c.py"])
    assert str(src / "softmax_ood/c.py") not in excluded and len(excluded) == 5


def test_code_inputs_read_notebook_code_cells(tree):
    root, src = tree
    nb = {
        "cells": [
            {"cell_type": "markdown", "source": ["import softmax_ood.unused\n"]},
            {
                "cell_type": "code",
                "source": ["%matplotlib inline\n", "from softmax_ood import c\n"],
            },
        ]
    }
    (root / "r.ipynb").write_text(json.dumps(nb))
    found = [Path(p).name for p in code_inputs(root / "r.ipynb", src)]
    assert found == ["__init__.py", "c.py"]


def test_entry_digest_tracks_one_entry_and_shared_code(tmp_path):
    f = tmp_path / "m.py"
    base = "def helper():\n    return 1\n\n\nclass A:\n    x = 1\n\n\nclass B:\n    y = 2\n\n\nREG = {'a': A, 'b': B}\n"
    f.write_text(base)
    a, b = entry_digest(f, "REG", "a"), entry_digest(f, "REG", "b")
    f.write_text(base.replace("y = 2", "y = 3"))  # edit B only
    assert entry_digest(f, "REG", "a") == a and entry_digest(f, "REG", "b") != b
    f.write_text(base.replace("return 1", "return 2"))  # shared helper: both change
    assert entry_digest(f, "REG", "a") != a and entry_digest(f, "REG", "b") != b
    assert registry_entries(f, "REG") == {"a": "A", "b": "B"}
    with pytest.raises(ValueError, match="has no entry 'c'"):
        entry_digest(f, "REG", "c")


def test_real_registries_resolve():
    src = ROOT / "src/softmax_ood"
    assert registry_entries(src / "losses.py", "LOSSES")["logitnorm"] == "LogitNormLoss"
    files = entry_files(src / "models/__init__.py", "MODELS")
    assert files["wrn"] == src / "models/wrn.py" and files["cnn"] == src / "models/cnn.py"
    assert class_params(src / "losses.py", "LogitNormLoss") == (["tau", "eps"], ["tau"])
    assert class_params(src / "scores.py", "OdinScore") == (
        ["temperature", "eps"],
        ["temperature", "eps"],
    )
