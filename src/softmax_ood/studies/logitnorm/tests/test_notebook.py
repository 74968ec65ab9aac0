"""The LogitNorm report notebook executes with papermill on synthetic study outputs."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest

from softmax_ood.studies.logitnorm.claims import evaluate_logitnorm_claims
from softmax_ood.studies.logitnorm.figures import FIGURES
from softmax_ood.studies.logitnorm.study import spec as study_spec
from softmax_ood.studies.logitnorm.tables import TABLES, tau_ablation

from . import world
from .study_frames import make_spec, make_study


def _config():
    import yaml

    from softmax_ood.config import validate_config
    from softmax_ood.studies.registry import registered_studies

    cfg = yaml.safe_load((ROOT / "config/default.yaml").read_text())
    return validate_config(cfg, ROOT / "workflow/schemas/config.schema.yaml", registered_studies())


ROOT = Path(__file__).resolve().parents[5]
STUDY = Path(__file__).resolve().parents[1]
NOTEBOOK = STUDY / "report.ipynb"


def test_notebook_parameters_cell():
    nb = nbformat.read(NOTEBOOK, as_version=4)
    tagged = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
    assert len(tagged) == 1
    for name in (
        "tables_dir",
        "claims_path",
        "paper_values_path",
        "figures_dir",
        "provenance_path",
    ):
        assert f"{name} =" in tagged[0].source
    assert nb.metadata["kernelspec"]["name"] == "python3"


def _write_inputs(tmp_path, logitnorm_better: bool):
    """The report's inputs from synthetic study frames: tables and figures folders, claims."""
    f, spec = make_study(logitnorm_better=logitnorm_better), make_spec()
    tables, figures = tmp_path / "tables", tmp_path / "figures"
    tables.mkdir()
    for name, build in {**TABLES, "tau_ablation": tau_ablation}.items():
        build(f["runs"], f["ood"], spec).to_parquet(tables / f"{name}.parquet", index=False)
    for name, draw in FIGURES.items():
        draw(f, spec, figures / f"{name}.png")
    ws = world.spec_for(study_spec(_config()))
    fpr = {"ce": 0.5, "logitnorm": 0.15 if logitnorm_better else 0.6, "logitpenalty": 0.6}
    w = world.build(ws, None, fpr=fpr)
    claims = evaluate_logitnorm_claims(
        w["runs"], w["ood"], w["curves"], w["samples"], w["floor"], ws
    )
    claims.to_parquet(tmp_path / "claims.parquet", index=False)
    return tables, figures, claims


@pytest.mark.slow  # executes a notebook (the fast loop stays under 2 min)
@pytest.mark.parametrize("logitnorm_better", [True, False])
def test_notebook_executes(tmp_path, monkeypatch, logitnorm_better):
    papermill = pytest.importorskip("papermill")
    tables, figures, claims = _write_inputs(tmp_path, logitnorm_better)
    (tmp_path / "prov.json").write_text(json.dumps({"config_sha256": "abc", "seeds": [0, 1, 2]}))
    monkeypatch.setenv("PYTHONPATH", str(ROOT / "src"))  # the kernel imports softmax_ood
    out = tmp_path / "out.ipynb"
    papermill.execute_notebook(
        str(NOTEBOOK),
        str(out),
        cwd=str(tmp_path),
        kernel_name="python3",
        progress_bar=False,
        parameters={
            "tables_dir": str(tables),
            "figures_dir": str(figures),
            "claims_path": str(tmp_path / "claims.parquet"),
            "paper_values_path": str(STUDY / "paper_values.csv"),
            "provenance_path": str(tmp_path / "prov.json"),
        },
    )
    nb = nbformat.read(out, as_version=4)
    text = "\n".join(
        o.get("text", "") + "".join(o.get("data", {}).get("text/markdown", ""))
        for c in nb.cells
        if c.cell_type == "code"
        for o in c.get("outputs", [])
    )
    images = sum(
        "image/png" in o.get("data", {})
        for c in nb.cells
        if c.cell_type == "code"
        for o in c.get("outputs", [])
    )
    assert images == 5
    assert "52.00 ± 2.00" in text and "49.52" in text  # ours beside the paper (Table 1 avg)
    assert '"config_sha256": "abc"' in text
    verdict = "Verdict: HOLDS" if logitnorm_better else "Verdict: DOES NOT HOLD"
    assert verdict in text
    # the premise is stated before the verdict
    assert text.index("P1 (holds): Premise: the CE baseline") < text.index("Verdict:")
    assert text.index("P-ce-fpr (holds)") < text.index("Verdict:")
    # the reader's order: verdict, claims table, tables (ours beside the paper), figures
    order = [
        text.index("Verdict:"),
        text.index("Claims of Wei et al. 2022 tested at this scale"),
        text.index("Ours: Table 1."),
        text.index("Ours beside the paper (CIFAR-10)"),
        text.index("Ours: Table 6."),
    ]
    assert order == sorted(order)
    outputs = [
        o
        for c in nb.cells
        if c.cell_type == "code" and "parameters" not in c.metadata.get("tags", [])
        for o in c.get("outputs", [])
    ]
    first_image = next(i for i, o in enumerate(outputs) if "image/png" in o.get("data", {}))
    tables = [
        i for i, o in enumerate(outputs) if "Ours: " in o.get("data", {}).get("text/markdown", "")
    ]
    assert max(tables) < first_image  # the figures come after every table
    for i, c in enumerate(nb.cells):  # each figure is followed by its caption
        if any("image/png" in o.get("data", {}) for o in c.get("outputs", [])):
            caption = nb.cells[i + 1]
            if caption.cell_type == "markdown":
                assert caption.source.startswith("**Figure")
            else:  # a caption that states the logit-scale premise's outcome
                md = caption.outputs[0]["data"]["text/markdown"]
                assert md.startswith("**Figure") and "P-ln-norm" in md or "logit norm" in md


@pytest.mark.slow  # executes a notebook (the fast loop stays under 2 min)
def test_report_renders_without_code(tmp_path, monkeypatch):
    """The report rule's renderer: no code in the HTML, the verdict before the first table."""
    pytest.importorskip("papermill")
    from softmax_ood.report import render_report

    tables, figures, claims = _write_inputs(tmp_path, True)
    _, html = render_report(
        NOTEBOOK,
        tmp_path / "r.ipynb",
        tmp_path / "r.html",
        {
            "tables_dir": str(tables),
            "figures_dir": str(figures),
            "claims_path": str(tmp_path / "claims.parquet"),
            "paper_values_path": str(STUDY / "paper_values.csv"),
        },
        cwd=tmp_path,
    )
    body = html.read_text().split("<body", 1)[1]
    assert "show_table" not in body and "import " not in body and "tables_dir" not in body
    assert body.count("<img ") == 5 and "No description has been provided" not in body
    assert body.index("Verdict: HOLDS") < body.index("Ours: Table 1.") < body.index("<img ")
