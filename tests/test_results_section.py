"""The results section's library: claims across studies, LaTeX fragments, figure PDFs and the
page, each checked by hand on small inputs (the end-to-end checks are in test_results_page.py)."""

from __future__ import annotations

import hashlib
import re

import numpy as np
import pandas as pd
import pytest

from softmax_ood.analysis.claims import ClaimSpec, Measurement, evaluate_claims
from softmax_ood.results_section.latex import (
    figure_pdf,
    latex_escape,
    latex_path,
    section_tex,
    table_latex,
)
from softmax_ood.results_section.outputs import (
    CLAIM_COLUMNS,
    StudyOutputs,
    collect_claims,
    study_outputs,
)
from softmax_ood.results_section.page import page_html


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
    assert r"\toprule" in tex and r"\bottomrule" in tex and r"\rsfit{\begin{tabular}{lrr}" in tex
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
        HEADLINE = ()

        @staticmethod
        def claim_specs(config):
            return []

        @staticmethod
        def departures(config):
            return []

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
    a_part = html[html.index('<h2 id="a">') : html.index('<h2 id="b">')]
    assert "read &quot;cannot test here&quot; (C1)" in a_part  # the claims that rest on it
    assert "Premise not met here" in a_part and a_part.index("Premise not met") < a_part.index(
        "Claims"
    )
    assert "All 1 premises hold" in html[html.index('<h2 id="b">') :]
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
    beside = html[html.index('class="rs rs-beside"') :]
    beside = beside[: beside.index("</table>")]
    assert "<td>30.00 ± 2 (paper 28.64; Δ +1.36)</td>" in beside  # one cell, ours then theirs
    assert ">x<" not in beside  # only this table's printed rows
    assert "Ours only" not in html
    # a table with no printed value recorded says so over it, on the page and in the LaTeX
    pd.DataFrame({"row": ["a"], "m_mean": [1.0], "m_std": [0.1]}).to_parquet(
        tmp_path / "table9.parquet"
    )
    s.tables.append(str(tmp_path / "table9.parquet"))
    html = page_html([s], collect_claims({"a": _claims("A")}), {})
    nine = html[html.index("<h3>Table table9</h3>") :]
    assert nine.index("Ours only: the study records no printed value") < nine.index("<table")
    assert "Ours only" in study_table_latex(s, s.tables[1])
    assert "Ours only" not in study_table_latex(s, s.tables[0])


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


# -- the headline, departures, paper values beside ours, offline page, LaTeX that fits (issue 31)
from softmax_ood.analysis.claims import ClaimSpec as _Spec  # noqa: E402
from softmax_ood.results_section.headline import (  # noqa: E402
    claim_interval,
    headline_frame,
    headline_paragraph,
    verdict_label,
)
from softmax_ood.results_section.latex import study_table_latex  # noqa: E402
from softmax_ood.results_section.outputs import departure_records, headline_ids, premises_of  # noqa: E402


class FakeStudy:
    """A study module as the results section sees it, with the optional hooks of issue 31."""

    TITLE = "Fake et al. 2099, A Paper With A Deliberately Long Title That Must Still Fit_On_A_Page"
    HEADLINE = ("C1",)

    @staticmethod
    def targets(config):
        return ["results/a/d/tables/wide.parquet", "results/a/d/claims.parquet"]

    @staticmethod
    def claim_specs(config):
        return [
            _Spec("P1", "fitted", "ratio", 0.5, "<", kind="premise"),
            _Spec("C1", "lowers FPR", "diff", requires=("P1",), effect=10.0),
            _Spec("S1", "linear", "slope", 0.9, kind="sanity"),
        ]

    @staticmethod
    def departures(config):
        from dataclasses import dataclass

        @dataclass(frozen=True)
        class Departure:  # the pinned fields (INTERFACES §2)
            setting: str
            paper: str
            section: str
            ours: str
            why: str
            claims: tuple = ()
            scale: str = "all"

        return [
            Departure(
                "recipes.paper-sgd.milestones_and_a_very_long_setting_name_without_spaces",
                "100/150 of 200 epochs",
                "App. B.2",
                "30/45 of 60 epochs",
                "CPU budget; the same schedule shape " * 6,
                ("C1",),
                "default",
            ),
            Departure("data.dataset", "CIFAR-10", "Sec. 4", "digits", "offline data"),
        ]


def _fake_outputs(tmp_path, premise_ok=True):
    from softmax_ood.results_section.outputs import study_outputs

    (s,) = study_outputs({"a": FakeStudy}, {})
    claims = collect_claims({"a": _claims("Fake", premise_ok=premise_ok)})
    return s, claims


def test_headline_ids_take_the_study_patterns_or_the_claim_named_headline():
    specs = FakeStudy.claim_specs({})
    assert headline_ids(specs, ("C*", "P1")) == ["C1"]  # premises are never headline claims
    assert headline_ids(specs, None) == []
    assert headline_ids([*specs, _Spec("headline", "h", "x", all_of=("C1",))], None) == ["headline"]
    assert premises_of([*specs, _Spec("H", "h", "x", all_of=("C1",))], "H") == ["P1"]


def test_a_fake_studys_hooks_reach_its_outputs(tmp_path):
    s, _ = _fake_outputs(tmp_path)
    assert s.headline == ["C1"] and s.requires == {"C1": ["P1"]}
    assert [d["setting"] for d in s.departures][1] == "data.dataset"
    assert s.departures[0]["claims"] == "C1" and s.departures[0]["scale"] == "default"
    legacy = departure_records([{"where": "Eq. 1", "printed": "a", "used": "b", "reason": "c"}])
    assert legacy[0]["section"] == "Eq. 1" and legacy[0]["ours"] == "b" and legacy[0]["why"] == "c"


def test_the_headline_row_states_paper_ours_interval_verdict_regime_and_departures(tmp_path):
    s, claims = _fake_outputs(tmp_path)
    (row,) = headline_frame([s], claims).to_dict("records")
    assert row["paper's number"] == "paper 10; claim > 0"  # threshold + the paper's effect
    # a spec's own paper_value wins over threshold + effect (an effect that is a power target)
    given = claims.assign(
        paper_value=[68.4 if c == "C1" else float("nan") for c in claims["claim_id"]]
    )
    (row,) = headline_frame([s], given).to_dict("records")
    assert row["paper's number"] == "paper 68.4; claim > 0"
    # the engine's second test, ours against the paper's number, is said beside it
    versus = given.assign(vs_paper="smaller than the paper's 68.4 (two-sided p = 0.04)")
    (row,) = headline_frame([s], versus).to_dict("records")
    assert row["paper's number"] == (
        "paper 68.4; claim > 0; ours smaller than the paper's 68.4 (two-sided p = 0.04)"
    )
    # an effect that is only a power target is never shown as the paper's number
    target = claims.assign(effect_source="power target")
    (row,) = headline_frame([s], target).to_dict("records")
    assert row["paper's number"] == "paper gives no number; claim > 0"
    # samples 4, 5, 6: mean 5, sd 1, n 3 -> 90 % interval 5 ± t(0.95, 2) / sqrt(3)
    half = 2.919986 / 3**0.5
    assert row["ours"] == f"5 [{5 - half:.4g}, {5 + half:.4g}] (90 % CI, n = 3)"
    assert row["label"] == "holds" and row["regime met"] == "yes: all 1 premises hold"
    assert row["departures"] == "2 (1 on this claim)" and row["details"] == "#claim-a-C1"
    text = headline_paragraph(s, headline_frame([s], claims), claims)
    assert "The paper claims: lowers FPR" in text and "it holds" in text
    _, bad = _fake_outputs(tmp_path, premise_ok=False)
    (row,) = headline_frame([s], bad).to_dict("records")
    assert row["label"] == "cannot test" and row["regime met"].startswith("no: P1")
    assert "not reached here" in headline_paragraph(s, headline_frame([s], bad), bad)


def test_verdict_labels_read_the_newer_engines_columns():
    assert verdict_label({"verdict": "does not hold (the opposite is significant, p = 0.01)"}) == (
        "opposite significant"
    )
    newer = {
        "verdict": "cannot test as the paper's claim (premise P does not hold) — here the "
        "opposite is significant (p = 0.004)",
        "observed": "opposite",
        "p_opposite": 0.004,
        "alpha": 0.05,
    }
    assert verdict_label(newer) == "opposite significant"
    assert verdict_label({"verdict": "not established (interval [1, 3] straddles the bar)"}) == (
        "not established"
    )
    assert claim_interval({"ci_low": 1.0, "ci_high": 2.0, "value": 1.5}) == (1.0, 2.0)
    assert claim_interval({"value": 0.5, "n": 1, "p_value": 0.1, "alpha": 0.05}) != (0.5, 0.5)


def test_the_page_opens_with_the_headline_and_shows_departures_beside_claims(tmp_path):
    s, claims = _fake_outputs(tmp_path)
    s.tables = []
    html = page_html([s], claims, {})
    first = html.index('<h2 id="headline">')
    assert first < html.index('<h2 id="a">') < html.index('id="claim-a-C1"')
    # nothing before the headline but the styles: the counts and the legend come after it
    assert html.index("<style>") < first < html.index("How to read a verdict")
    assert "<p>" not in html[:first]
    assert 'href="#claim-a-C1"' in html[first : html.index('<h2 id="a">')]
    section = html[html.index('<h2 id="a">') :]
    assert "Departures from the paper (2)" in section and "App. B.2" in section
    c1 = section[section.index('id="claim-a-C1"') :]
    assert c1[: c1.index("</tr>")].endswith(
        "<td>recipes.paper-sgd.milestones_and_a_very_long_setting_name_without_spaces</td>"
    )


def _overfull_boxes(folder, tex: str) -> list[str]:
    """``tex`` compiled in ``folder`` with pdflatex (it must succeed): the log's overfull boxes,
    horizontal (wider than the text) and vertical (off the page's foot)."""
    import subprocess

    (folder / "results_section.tex").write_text(tex)
    proc = subprocess.run(
        ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "results_section.tex"],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout[-3000:]
    log = (folder / "results_section.log").read_text(errors="replace")
    return re.findall(r"Overfull \\[hv]box.*", log)


def _wide(tmp_path):
    t = tmp_path / "results/a/d/tables/wide.parquet"
    t.parent.mkdir(parents=True)
    cols = {"row": [f"set_{i}" for i in range(55)], "loss": ["logitnorm-tau0.04"] * 55}
    for m in ("fpr95", "auroc", "aupr", "accuracy", "ece", "norm_id", "norm_ood", "extra"):
        cols[f"{m}_mean"] = np.linspace(1, 99, 55)
        cols[f"{m}_std"] = np.linspace(0.1, 3, 55)
    cols["comment"] = ["a long free-text comment that needs a paragraph column " * 2] * 55
    pd.DataFrame(cols).to_parquet(t)
    return t


@pytest.mark.skipif(
    __import__("shutil").which("pdflatex") is None,
    reason="no pdflatex (workflow/setup.sh installs Debian's texlive)",
)
def test_the_latex_section_fits_the_page_with_no_overfull_box(tmp_path):

    s, claims = _fake_outputs(tmp_path)
    t = _wide(tmp_path)
    s.tables = ["results/a/d/tables/wide.parquet"]
    out = tmp_path / "results/a/d/latex/wide.tex"
    out.parent.mkdir(parents=True)
    import os

    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        out.write_text(study_table_latex(s, "results/a/d/tables/wide.parquet"))
    finally:
        os.chdir(cwd)
    assert t.is_file()
    tex = section_tex([s], claims=claims)
    assert tex.index("Headline claims") < tex.index(r"\section{Fake")
    assert _overfull_boxes(tmp_path / "results", tex) == []
    assert "(continued)" in out.read_text()  # 55 rows: two parts


def test_the_same_check_sees_an_overfull_box(tmp_path):
    """The control: a bare wide tabular overflows, and the log says so (the count can fail)."""
    import shutil
    import subprocess

    if shutil.which("pdflatex") is None:
        pytest.skip("no pdflatex")
    wide = " & ".join(["a very wide column"] * 12)
    (tmp_path / "x.tex").write_text(
        "\\documentclass{article}\\begin{document}\\begin{tabular}{"
        + "l" * 12
        + "}"
        + wide
        + "\\end{tabular}\\end{document}\n"
    )
    subprocess.run(
        ["pdflatex", "-interaction=nonstopmode", "x.tex"],
        cwd=tmp_path,
        capture_output=True,
        timeout=120,
    )
    assert (tmp_path / "x.log").read_text(errors="replace").count("Overfull \\hbox") == 1


def test_a_headline_tested_in_many_settings_is_counted_not_recited(tmp_path):
    s, claims = _fake_outputs(tmp_path)
    many = pd.concat(
        [claims]
        + [claims[claims["claim_id"] == "C1"].assign(claim_id=f"C1:{i}") for i in range(4)],
        ignore_index=True,
    )
    s.headline = ["C1", *(f"C1:{i}" for i in range(4))]
    (row,) = headline_frame([s], many).to_dict("records")  # one row counting the verdicts
    assert row["verdict"] == "5 holds" and row["regime met"] == "in 5 of 5 settings"
    assert row["claim"].startswith("C1 ... (5 settings)") and row["details"] == "#claims-a"
    assert row["ours"] == "5 values from 5 to 5"
    text = headline_paragraph(s, headline_frame([s], many), many)
    assert "tested in 5 settings" in text and "5 holds" in text and "hold in 5 of 5" in text
    s.tables = []
    html = page_html([s], many, {})
    assert 'href="#claims-a"' in html and 'id="claims-a"' in html


def test_an_equivalence_headline_gives_the_papers_difference_not_the_bar(tmp_path):
    """For an equivalence row the engine's ``effect`` is the paper's difference itself: a
    "perfect match" claim (effect 0) within a bar of 2 reads "paper 0; claim within ± 2", not
    "paper 2; claim < 2" (threshold minus a distance)."""
    s, _ = _fake_outputs(tmp_path)
    specs = [
        _Spec("P1", "fitted", "ratio", 0.5, "<", kind="premise"),
        _Spec("C1", "matches", "gap", 2.0, "<", requires=("P1",), effect=0.0, test="equivalence"),
    ]
    ms = {
        "P1": Measurement(0.15, samples=(0.1, 0.2, 0.15)),
        "C1": Measurement(0.5, samples=(0.3, 0.5, 0.7)),
    }
    claims = collect_claims({"a": evaluate_claims("Fake", specs, ms, alpha=0.05)})
    (row,) = headline_frame([s], claims).to_dict("records")
    assert row["paper's number"] == "paper 0; claim within ± 2"
    assert row["label"] == "holds"


def test_a_headline_whose_settings_disagree_reads_mixed_not_its_commonest_verdict(tmp_path):
    """Kang's 42 settings (21 hold, 15 cannot test, ...) are not a "holds" row: the label is
    "mixed" with the counts, and the row is not coloured as held."""
    s, claims = _fake_outputs(tmp_path)
    _, bad = _fake_outputs(tmp_path, premise_ok=False)
    c1_ok = claims[claims["claim_id"] == "C1"]
    c1_bad = bad[bad["claim_id"] == "C1"]
    many = pd.concat(
        [claims]
        + [c1_ok.assign(claim_id=f"C1:{i}") for i in range(3)]
        + [c1_bad.assign(claim_id=f"C1:x{i}") for i in range(2)],
        ignore_index=True,
    )
    s.headline = ["C1", *(f"C1:{i}" for i in range(3)), *(f"C1:x{i}" for i in range(2))]
    head = headline_frame([s], many)
    (row,) = head.to_dict("records")
    assert row["label"] == "mixed" and row["verdict"] == "2 cannot test, 4 holds"
    s.tables = []
    html = page_html([s], many, {})
    headline = html[html.index('<h2 id="headline">') : html.index('<h2 id="a">')]
    assert "mixed (2 cannot test, 4 holds)" in headline
    assert 'class="rs-v-holds' not in headline and 'class="rs-v-other' in headline


@pytest.mark.skipif(
    __import__("shutil").which("pdflatex") is None,
    reason="no pdflatex (workflow/setup.sh installs Debian's texlive)",
)
def test_tall_tables_and_long_departure_claim_lists_stay_on_their_pages(tmp_path):
    """The default's PDF had two tables running off the foot of their page (``Overfull \\vbox``,
    444 pt and 91 pt: Kang's departures, each touching 100+ claims, and Ulmer's claims with long
    texts) and printed ``[U+2113]``-style codes for ℓ, √, ₂ ...: a departure's claims are grouped
    (``k:* (150)``), a part of a table ends before a page is full, no box overflows, and every
    character the studies print is typeset."""

    from softmax_ood.results_section.headline import claims_grouped

    s, claims = _fake_outputs(tmp_path)
    many = ", ".join(f"k:setting_{i}" for i in range(150))
    s.departures = departure_records(
        [{**s.departures[0], "claims": f"C1, {many}"}] * 3 + s.departures[1:]
    )
    assert claims_grouped(s.departures[0]["claims"]) == "C1, k:* (150)"
    long_text = "a long free-text claim about ‖w − m‖₂ / √(Σ v), ℓ₂, ξ̃, ξᵢ₋, x²ᵀ and § 3 " * 12
    t = tmp_path / "results/a/d/tables/tall.parquet"
    t.parent.mkdir(parents=True)
    pd.DataFrame({"row": [f"r{i}" for i in range(39)], "text": [long_text] * 39}).to_parquet(t)
    s.tables = ["results/a/d/tables/tall.parquet"]
    out = tmp_path / "results/a/d/latex/tall.tex"
    out.parent.mkdir(parents=True)
    out.write_text(table_latex(pd.read_parquet(t), "tall"))
    assert "(continued)" in out.read_text()  # 39 rows of 10 lines each: more than one part
    # each part's caption and rows in one minipage: a caption never stays alone at a foot
    frag = out.read_text()
    assert frag.count(r"\begin{minipage}") == frag.count(r"\caption{") > 1
    for part in frag.split(r"\begin{minipage}")[1:]:
        assert (
            part.index(r"\caption{") < part.index(r"\end{tabular}") < part.index(r"\end{minipage}")
        )
    tex = section_tex([s], claims=claims)
    assert "k:* (150)" in tex and "setting\\_\\allowbreak{}7," not in tex
    assert _overfull_boxes(tmp_path / "results", tex) == []
    assert "[U+" not in tex + out.read_text()


def test_a_t_tested_row_gets_its_interval_though_its_detail_says_exact():
    """Seddik's C3-weights is a one-sided t-test over networks whose detail mentions "the
    exact-theory r": its interval is stated; an exact binomial or permutation test's p gives
    none (not a t-test's)."""
    row = {"value": 1.6026, "threshold": 2.0, "p_value": 0.000169, "n": 5, "alpha": 0.05}
    t_row = {**row, "detail": "power at the exact-theory r = 1.41; one-sided t-test over networks"}
    lo, hi = claim_interval(t_row)
    assert lo < 1.6026 < hi < 2.0
    assert claim_interval({**t_row, "detail": "5 of 5 seeds exactly 0"}) == (lo, hi)
    for other in ("exact binomial test", "exact permutation p over 100 permutations"):
        lo2, _ = claim_interval({**row, "detail": other})
        assert lo2 != lo2  # nan: no t interval for another test's p


def test_a_wide_text_table_is_laid_out_to_the_text_width_not_scaled_down():
    """The default's headline table (8 text columns, a 250-character claim) was scaled to
    unreadable type: its text columns now share the text width as ragged paragraph columns
    (8 em at the least, so a long word still fits its column)."""
    from softmax_ood.results_section.headline import HEADLINE_COLUMNS
    from softmax_ood.results_section.latex import _TEXT_EM

    row = {c: "a few words of text here" for c in HEADLINE_COLUMNS}
    row["claim"] = "a long claim about the paper's headline result " * 5
    row["details"], row["paper"] = "Section 1", "Wei et al. 2022"
    tex = table_latex(pd.DataFrame([row] * 3), "headline")
    ems = [float(x) for x in re.findall(r"p\{([\d.]+)em\}", tex)]
    assert len(ems) == 6 and min(ems) >= 8 and max(ems) == ems[0]  # the claim widest
    fixed = 0.5 * (len("Section 1") + len("Wei et al. 2022")) + 1.7 * len(HEADLINE_COLUMNS)
    # at most a fifth wider than the text (type scaled to 0.8 of \scriptsize at the least);
    # the former layout (24 em claim, the other text columns one line each) was 1.7 times wider
    assert sum(ems) + fixed <= 1.25 * _TEXT_EM
    assert r"\raggedright" in tex


def test_logitnorms_headline_gives_ce_and_logitnorm_fpr95_beside_the_papers(tmp_path):
    """Issue 45: LogitNorm's headline row says CE -> LogitNorm average FPR95, ours (from the
    claims rows: CE's P-ce-fpr, less the headline's relative reduction) beside the paper's
    (its paper_values.csv), not only the relative reduction."""
    from softmax_ood.results_section.headline import _headline_view
    from softmax_ood.studies.logitnorm import study as ln
    from softmax_ood.studies.logitnorm.claims import paper_value

    s, claims = _fake_outputs(tmp_path)
    s.headline, s.requires = ["headline"], {"headline": ["P1"]}
    rows = claims.copy()
    rows.loc[rows["claim_id"] == "C1", "claim_id"] = "headline"
    rows.loc[rows["claim_id"] == "P1", "claim_id"] = "P-ce-fpr"
    rows.loc[rows["claim_id"] == "P-ce-fpr", "value"] = 40.0
    rows.loc[rows["claim_id"] == "headline", "value"] = 25.0  # % of CE's: LogitNorm at 30
    s.headline_plain = "softmax_ood.studies.logitnorm.study:headline_plain"
    ce, method = (paper_value("table1", "average", x, "fpr95") for x in ("ce", "logitnorm"))
    expected = f"average FPR95 CE → LogitNorm 40.00 → 30.00 % (paper {ce:.2f} → {method:.2f} %"
    (row,) = headline_frame([s], rows).to_dict("records")
    assert row["plain"].startswith(expected)
    (shown,) = _headline_view(headline_frame([s], rows)).to_dict("records")
    assert shown["ours"].startswith(expected) and shown["ours"].endswith(row["ours"])
    assert expected in headline_paragraph(s, headline_frame([s], rows), rows)
    assert ln.headline_plain(rows[rows["claim_id"] != "P-ce-fpr"]) == {}  # nothing to say
    s.headline_plain = None
    (row,) = headline_frame([s], rows).to_dict("records")
    assert row["plain"] == ""


def test_a_headline_in_many_settings_reads_as_one_sentence(tmp_path):
    """Kang's 42 settings: "holds in N of the M settings where its regime is met (42 in all);
    the opposite is significant in K: ..." counted from the claims rows."""
    from softmax_ood.results_section.headline import _headline_view, settings_sentence

    s, claims = _fake_outputs(tmp_path)
    _, bad = _fake_outputs(tmp_path, premise_ok=False)
    c1_ok = claims[claims["claim_id"] == "C1"]
    opposite = c1_ok.assign(
        value=-5.0, verdict="does not hold (the opposite is significant, p = 0.01)"
    )
    many = pd.concat(
        [claims]
        + [c1_ok.assign(claim_id=f"T:ce:s{i}") for i in range(3)]
        + [opposite.assign(claim_id="T:ce:flip")]
        + [bad[bad["claim_id"] == "C1"].assign(claim_id=f"T:mse:s{i}") for i in range(2)],
        ignore_index=True,
    )
    ids = [f"T:ce:s{i}" for i in range(3)] + ["T:ce:flip", "T:mse:s0", "T:mse:s1"]
    s.headline = ids
    s.requires = {c: ["P1"] for c in ids}
    regimes = [True] * 4 + [False] * 2  # the bad rows' own P1 fails: read as premises failing
    labels = ["holds"] * 3 + ["opposite significant", "cannot test", "cannot test"]
    assert settings_sentence(ids, labels, regimes) == (
        "holds in 3 of the 4 settings where its regime is met (6 in all); the opposite is "
        "significant in 1: ce:flip"
    )
    assert settings_sentence(ids[:3], labels[:3], [None] * 3) == (
        "its regime is met in none of the 3 settings; the opposite is significant in none"
    )
    (row,) = headline_frame([s], many).to_dict("records")
    assert (
        row["plain"].startswith("holds in ")
        and "the opposite is significant in 1: ce:flip" in (row["plain"])
    )
    (shown,) = _headline_view(headline_frame([s], many)).to_dict("records")
    assert shown["ours"].startswith(row["plain"] + "; ")
    text = headline_paragraph(s, headline_frame([s], many), many)
    assert text.startswith(f"In one sentence: the paper's headline {row['plain']}.")


def test_each_papers_section_shows_where_its_items_run(tmp_path):
    """The results page shows each paper's coverage rows (its study's coverage hook) with what
    this build has of each item; a study without a paper shows none."""
    from softmax_ood.results_section.page import coverage_frame

    s, claims = _fake_outputs(tmp_path)
    s.tables = []
    assert s.coverage == [] and "What of the paper runs here" not in page_html([s], claims, {})
    s.coverage = [
        {
            "item": "Fig 1",
            "section": "§1",
            "what": "a curve",
            "where": "default",
            "why": "cheap",
            "covered_by": "C* figure:fig1",
        },
        {
            "item": "Fig 2",
            "section": "§2",
            "what": "a map",
            "where": "not run",
            "why": "no data",
            "covered_by": "",
        },
    ]
    s.figures = ["results/a/d/figures/fig1.png"]
    frame = coverage_frame(s, claims)
    assert list(frame["in this build"]) == ["1 claim rows, fig1", "-"]
    assert list(frame["what"]) == ["a curve (§1)", "a map (§2)"]
    s.figures = []
    html = page_html([s], claims, {})
    part = html[html.index('id="coverage-a"') : html.index('id="departures-a"')]
    assert "2 items of the paper&#x27;s results: 1 in the default, 1 not run anywhere." in part
    assert "<td>Fig 2</td>" in part and "<td>no data</td>" in part


def test_the_registered_studies_outputs_stay_plain_data():
    """rules/results.smk hands every StudyOutputs to its scripts as JSON: the coverage rows and
    the headline_plain hook (a "module:function" reference) must serialise."""
    import json

    import yaml

    from softmax_ood.config import validate_config
    from softmax_ood.results_section.outputs import StudyOutputs
    from softmax_ood.studies.registry import registered_studies

    root = __import__("pathlib").Path(__file__).resolve().parents[1]
    studies = registered_studies()
    cfg = validate_config(
        yaml.safe_load((root / "config/default.yaml").read_text()),
        root / "workflow/schemas/config.schema.yaml",
        studies,
    )
    outs = study_outputs(studies, cfg)
    back = [StudyOutputs(**s) for s in json.loads(json.dumps([vars(s) for s in outs]))]
    assert [vars(s) for s in back] == [vars(s) for s in outs]
    by = {s.name: s for s in outs}
    assert by["logitnorm"].headline_plain == "softmax_ood.studies.logitnorm.study:headline_plain"
    assert by["kang"].headline_plain is None and by["crosspaper"].coverage == []
    assert {r["item"] for r in by["ulmer"].coverage} >= {"Fig 1", "Theorem 1", "Note Property 5"}


def test_the_headline_colours_find_their_columns_by_name():
    """The verdict and regime colours select their cells by position: a column added before
    them (replicates, issue 42) must move the selectors with it."""
    import re

    from softmax_ood.results_section.headline import HEADLINE_HTML_COLUMNS
    from softmax_ood.results_section.page import _CSS

    rules = dict(re.findall(r"tr\.(rs-[\w-]+) td:nth-child\((\d+)\)", _CSS))
    assert int(rules["rs-v-holds"]) == HEADLINE_HTML_COLUMNS.index("verdict") + 1
    assert int(rules["rs-regime-fail"]) == HEADLINE_HTML_COLUMNS.index("regime met") + 1
