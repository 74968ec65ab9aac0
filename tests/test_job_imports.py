"""No fixed cost where no work is done: the jobs that neither train nor evaluate (tables,
figures, claims, the results section) do not import torch (a second or more of start-up CPU per
job). Checked on the import chain of each shared script and of every study function it calls;
the jobs themselves record it too (``torch_imported`` in ``<benchmark>.cpu.json``)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import yaml

from softmax_ood.codedeps import code_inputs, module_inputs
from softmax_ood.config import validate_config
from softmax_ood.studies.registry import registered_studies

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
LIGHT_SCRIPTS = (
    "study_table.py",
    "study_figure.py",
    "study_claims.py",
    "results_claims.py",
    "results_latex.py",
    "results_audit.py",
)


def _module(path: str) -> str:
    rel = Path(path).resolve().relative_to(SRC).with_suffix("")
    parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
    return ".".join(parts)


def _study_refs() -> list[str]:
    cfg = yaml.safe_load((ROOT / "config/default.yaml").read_text())
    studies = registered_studies()
    config = validate_config(cfg, ROOT / "workflow/schemas/config.schema.yaml", studies)
    refs = []
    for study in studies.values():
        for hook in ("table_job", "figure_job"):
            items = getattr(study, hook)(config)
            if items is not None:
                refs.append(items.functions)
                refs += [items.labels] if items.labels else []
        refs.append(study.claims_job(config).function)
    return refs


def _first_torch_import(modules: list[str]) -> str | None:
    code = textwrap.dedent(
        f"""
        import importlib, sys
        for m in {modules!r}:
            importlib.import_module(m)
            if "torch" in sys.modules:
                print(m)
                break
        """
    )
    proc = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=300,
        env={"PYTHONPATH": str(SRC), "PATH": "/usr/bin:/bin"},
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout.strip() or None


@pytest.mark.parametrize("script", LIGHT_SCRIPTS)
def test_a_light_scripts_import_chain_does_not_import_torch(script):
    modules = [
        "pandas",
        *(_module(p) for p in code_inputs(ROOT / "workflow/scripts" / script, SRC)),
    ]
    assert _first_torch_import(modules) is None


def test_no_study_table_figure_or_claims_module_imports_torch():
    refs = _study_refs()
    assert refs
    modules = sorted({_module(p) for ref in refs for p in module_inputs(ref, SRC)})
    assert _first_torch_import(modules) is None
