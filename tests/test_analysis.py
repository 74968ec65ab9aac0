"""The shared analysis package: the claims engine's one decision rule, seed summaries, rendering."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from softmax_ood.analysis.claims import (
    ClaimSpec,
    Measurement,
    evaluate_claims,
    paired,
    render_claims_markdown,
    spearman,
)
from softmax_ood.analysis.render import render_markdown
from softmax_ood.analysis.seeds import cells, summarise


def _judge(specs, ms, alpha=0.05):
    df = evaluate_claims("P", specs, ms, alpha=alpha)
    return df.set_index("claim_id")


def test_direction_and_threshold():
    specs = [
        ClaimSpec("a", "t", "s", threshold=1.0, direction=">"),
        ClaimSpec("b", "t", "s", threshold=1.0, direction="<="),
        ClaimSpec("c", "t", "s", threshold=1.0, direction=">"),
    ]
    df = _judge(specs, {"a": Measurement(2.0), "b": Measurement(1.0), "c": Measurement(1.0)})
    assert df.loc["a", "holds"] and df.loc["b", "holds"] and not df.loc["c", "holds"]
    assert df.loc["c", "verdict"] == "does not hold"


def test_paired_test_needs_p_below_alpha():
    spec = [ClaimSpec("a", "t", "s", test="paired")]
    assert _judge(spec, {"a": Measurement(3.0, p_value=0.01)}).loc["a", "holds"]
    assert not _judge(spec, {"a": Measurement(3.0, p_value=0.2)}).loc["a", "holds"]
    # one seed: no p, the sign decides
    assert _judge(spec, {"a": Measurement(3.0)}).loc["a", "holds"]
    assert not _judge(spec, {"a": Measurement(-3.0)}).loc["a", "holds"]


def test_failed_premise_makes_claims_untestable_and_comes_first():
    specs = [
        ClaimSpec("claim", "t", "s", requires=("p",)),
        ClaimSpec("p", "baseline overconfident", "T", threshold=1.0, premise=True),
    ]
    df = evaluate_claims("P", specs, {"claim": Measurement(5.0), "p": Measurement(0.5)}, alpha=0.05)
    assert list(df["claim_id"]) == ["p", "claim"]
    r = df.set_index("claim_id").loc["claim"]
    assert not r["holds"] and r["verdict"] == "cannot test: premise p does not hold"
    ok = evaluate_claims("P", specs, {"claim": Measurement(5.0), "p": Measurement(1.5)}, alpha=0.05)
    assert ok.set_index("claim_id").loc["claim", "verdict"] == "holds"


def test_all_of_and_errors():
    specs = [ClaimSpec("h", "t", "s", all_of=("x",)), ClaimSpec("x", "t", "s")]
    df = _judge(specs, {"h": Measurement(1.0), "x": Measurement(-1.0)})
    assert not df.loc["h", "holds"]
    with pytest.raises(ValueError, match="no measurement"):
        evaluate_claims("P", specs, {"h": Measurement(1.0)}, alpha=0.05)
    with pytest.raises(ValueError, match="direction"):
        ClaimSpec("z", "t", "s", direction="!=")


def test_paired_by_hand():
    a = pd.Series([3.0, 4.0, 5.0], index=[0, 1, 2])
    b = pd.Series([1.0, 2.0, 3.0], index=[0, 1, 2])  # constant difference 2
    m = paired(a, b)
    assert m.value == 2.0 and m.p_value == 0.0 and "all paired differences equal" in m.detail
    assert paired(b, a).p_value == 1.0
    one = paired(a.iloc[:1], b)  # only seed 0 is common
    assert math.isnan(one.p_value) and "no test, 1 seed" in one.detail
    c = pd.Series([3.0, 5.0, 4.0], index=[0, 1, 2])
    m = paired(c, b)  # differences 2, 3, 1: mean 2, sd 1, t = 2 / (1/sqrt 3) = 3.464, df 2
    assert m.value == pytest.approx(2.0) and m.p_value == pytest.approx(0.03709, abs=1e-4)
    with pytest.raises(ValueError):
        paired(a, pd.Series([1.0], index=[9]))


def test_spearman():
    m = spearman([1, 2, 3, 4], [4, 3, 2, 1])
    assert m.value == pytest.approx(-1.0)
    assert math.isnan(spearman([1, 1, 1], [1, 2, 3]).value)


def test_summarise_and_cells_by_hand():
    assert summarise(pd.Series([1.0, 2.0, 3.0])) == (2.0, 1.0, 3)
    mean, std, n = summarise(pd.Series([4.0]))
    assert mean == 4.0 and math.isnan(std) and n == 1
    c = cells({"x": pd.Series([1.0, 3.0], index=[0, 1])})
    assert c == {"x_mean": 2.0, "x_std": pytest.approx(math.sqrt(2)), "n_seeds": 2}


def test_render_markdown_and_claims_markdown():
    df = pd.DataFrame({"row": ["a|b"], "x_mean": [1.234], "x_std": [0.5], "n_seeds": [3]})
    md = render_markdown(df, "T", labels={"x": "X (%)"})
    assert "| a\\|b | 1.23 ± 0.50 | 3 |" in md and "X (%)" in md
    claims = evaluate_claims("P", [ClaimSpec("a", "t|u", "s")], {"a": Measurement(1.0)}, alpha=0.05)
    assert "t\\|u" in render_claims_markdown(claims)


def test_an_undefined_statistic_cannot_be_tested_and_neither_can_what_rests_on_it():
    specs = [
        ClaimSpec(
            "p", "accuracy falls with the level", "rho", threshold=0.0, direction="<", premise=True
        ),
        ClaimSpec("c", "reward beats classification", "diff", requires=("p",)),
        ClaimSpec("d", "a trend", "rho", threshold=0.0, direction="<"),
    ]
    ms = {"p": Measurement(math.nan), "c": Measurement(2.0), "d": Measurement(math.nan)}
    df = evaluate_claims("P", specs, ms, alpha=0.05).set_index("claim_id")
    assert df.loc["p", "verdict"] == "cannot test: the statistic is undefined (see detail)"
    assert df.loc["d", "verdict"] == "cannot test: the statistic is undefined (see detail)"
    assert df.loc["c", "verdict"] == "cannot test: premise p could not be evaluated"
    assert not df["holds"].any()
