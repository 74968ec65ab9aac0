"""The results section's library: claims across studies, LaTeX fragments, figure PDFs and the
page, each checked by hand on small inputs (the end-to-end checks are in test_results_page.py)."""

from __future__ import annotations

import hashlib
import re

import numpy as np
import pandas as pd
import pytest

from softmax_ood.analysis.claims import ClaimSpec, Measurement, evaluate_claims
from softmax_ood.results_section import (
    CLAIM_COLUMNS,
    StudyOutputs,
    collect_claims,
    figure_pdf,
    latex_escape,
    latex_path,
    page_html,
    section_tex,
    study_outputs,
    table_latex,
)


def _claims(paper, premise_ok=True):
    specs = [
        ClaimSpec("P1", "fitted", "ratio", 0.5, "<", kind="premise"),
        ClaimSpec("C1", "lowers FPR", "diff", requires=("P1",), effect=10.0),
        ClaimSpec("S1", "linear", "slope", 0.9, kind="sanity"),
    ]
    p = (0.1, 0.2, 0.15) if premise_ok else (0.9, 0.8, 0.85)
    ms = {
        "P1": Measurement(float(np.mean(p)), samples=p),
        "C1": Measurement(5.0, samples=(4.0, 5.0, 6.0)),
        "S1": Measurement(1.0),
    }
    return evaluate_claims(paper, specs, ms, alpha=0.05)


def test_collect_claims_stacks_studies_in_order_with_every_column():
    df = collect_claims({"b": _claims("B"), "a": _claims("A", premise_ok=False)})
    assert list(df.columns) == CLAIM_COLUMNS
    assert list(df["study"]) == ["b"] * 3 + ["a"] * 3
    a = df[df["study"] == "a"].set_index("claim_id")
    assert a.loc["C1", "verdict"] == "cannot test: premise P1 does not hold"
    assert df["n"].dtype == "int64"


def test_latex_escape_and_paths():
    assert latex_escape("a_b & 5 % ± τ") == r"a\_b \& 5 \% $\pm$ $\tau$"
    assert latex_escape("漢") == "[U+6F22]"
    assert latex_path("results/kang/digits/tables/t1.parquet") == "results/kang/digits/latex/t1.tex"
    assert latex_path("results/kang/digits/figures/f.png") == "results/kang/digits/latex/f.pdf"


def test_table_latex_merges_mean_and_std_and_uses_booktabs():
    df = pd.DataFrame({"row": ["x_1"], "fpr95_mean": [12.345], "fpr95_std": [1.5], "n_seeds": [5]})
    tex = table_latex(df, "Table 1: FPR95 (%)")
    assert r"\toprule" in tex and r"\bottomrule" in tex and r"\begin{longtable}{lrr}" in tex
    assert r"x\_1 & 12.35 $\pm$ 1.5 & 5 \\" in tex
    assert r"\caption{Table 1: FPR95 (\%)}" in tex


def test_figure_pdf_is_deterministic(tmp_path):
    from matplotlib.figure import Figure

    fig = Figure(figsize=(2, 1))
    fig.add_subplot().plot([0, 1], [1, 0])
    fig.savefig(tmp_path / "f.png", dpi=50, metadata={"Software": None})
    figure_pdf(tmp_path / "f.png", tmp_path / "a.pdf")
    figure_pdf(tmp_path / "f.png", tmp_path / "b.pdf")
    a, b = (tmp_path / "a.pdf").read_bytes(), (tmp_path / "b.pdf").read_bytes()
    assert a.startswith(b"%PDF") and hashlib.sha256(a).digest() == hashlib.sha256(b).digest()
    assert b"CreationDate" not in a


def test_section_tex_inputs_every_fragment_in_study_order():
    studies = [
        StudyOutputs("b", "Paper B", tables=["results/b/d/tables/t.parquet"]),
        StudyOutputs("a", "Paper A_x", figures=["results/a/d/figures/f.png"]),
    ]
    tex = section_tex(studies)
    assert tex.index(r"\section{Paper B}") < tex.index(r"\section{Paper A\_x}")
    assert r"\input{b/d/latex/t}" in tex and "{a/d/latex/f.pdf}" in tex
    assert tex.startswith(r"\documentclass") and tex.rstrip().endswith(r"\end{document}")


def test_study_outputs_read_the_targets():
    class S:
        TITLE = "T"

        @staticmethod
        def targets(config):
            return [
                "results/s/d/tables/t.parquet",
                "results/s/d/tables/t.md",
                "results/s/d/figures/f.png",
                "results/s/d/claims.parquet",
                "reports/s.html",
            ]

    (out,) = study_outputs({"s": S}, {})
    assert out.tables == ["results/s/d/tables/t.parquet"] and out.figures == [
        "results/s/d/figures/f.png"
    ]
    assert out.claims == "results/s/d/claims.parquet" and out.report == "reports/s.html"


def test_page_says_a_failed_premise_first_and_lists_every_claim(tmp_path):
    claims = collect_claims({"a": _claims("A", premise_ok=False), "b": _claims("B")})
    studies = [StudyOutputs("a", "Paper A"), StudyOutputs("b", "Paper B")]
    html = page_html(studies, claims, {})
    a_part = html[html.index("Paper A") : html.index("Paper B")]
    assert "read &quot;cannot test here&quot; (C1)" in a_part  # the claims that rest on it
    assert "Premise not met here" in a_part and a_part.index("Premise not met") < a_part.index(
        "Claims"
    )
    assert "All 1 premises hold" in html[html.index("Paper B") :]
    table = html[html.index('class="rs sortable"') :]
    assert len(re.findall(r"<tr>", table)) == 1 + len(claims)  # header + one row per claim
    assert "sortBy" in html and "http" not in html.split("<script>")[1]  # no network


@pytest.mark.parametrize("bad", ["nothing", "latex"])
def test_latex_path_refuses_nothing_else(bad):
    assert latex_path(f"results/x/y/tables/{bad}.parquet").endswith(f"latex/{bad}.tex")


def test_the_papers_printed_values_stand_beside_our_table(tmp_path):
    pd.DataFrame({"row": ["Texture"], "fpr95_mean": [30.0], "fpr95_std": [2.0]}).to_parquet(
        tmp_path / "table1.parquet"
    )
    pd.DataFrame(
        {
            "table": ["table1", "table2"],
            "row": ["Texture", "x"],
            "metric": ["fpr95"] * 2,
            "value": [28.64, 1.0],
        }
    ).to_csv(tmp_path / "paper.csv", index=False)
    s = StudyOutputs(
        "a",
        "Paper A",
        tables=[str(tmp_path / "table1.parquet")],
        paper_values=str(tmp_path / "paper.csv"),
    )
    html = page_html([s], collect_claims({"a": _claims("A")}), {})
    beside = html[html.index("<b>Ours</b>") :]
    assert "The paper's printed values" in beside and "28.64" in beside and "30.00 ± 2" in beside
    assert ">x<" not in beside  # only this table's printed rows


def test_the_page_shows_the_direction_beside_the_threshold():
    claims = collect_claims({"a": _claims("A")})
    html = page_html([StudyOutputs("a", "Paper A")], claims, {})
    assert "<td>&lt; 0.5</td>" in html and "<td>&gt; 0</td>" in html


def test_every_claim_row_links_to_its_provenance():
    claims = collect_claims({"a": _claims("A")})
    s = StudyOutputs("a", "Paper A", claims="results/a/d/claims.parquet")
    audit = {
        "results/a/d/claims.parquet": {
            "provenance": "results/a/d/claims.prov.json",
            "ok": True,
            "checked": 3,
            "differs": [],
        }
    }
    html = page_html([s], claims, audit)
    table = html[html.index('class="rs sortable"') :]
    assert table.count('href="../results/a/d/claims.prov.json"') == len(claims)
