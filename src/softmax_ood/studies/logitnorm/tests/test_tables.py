"""Tables 1-9, the tau ablation and the paper values (synthetic study, answers by construction)."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest

from softmax_ood.analysis.render import render_markdown
from softmax_ood.studies.logitnorm.paper_values import (
    load_paper_values,
    render_paper_markdown,
    render_side_by_side_markdown,
    side_by_side,
)
from softmax_ood.studies.logitnorm.tables import TABLES, tau_ablation

from .study_frames import make_spec, make_study

STUDY = Path(__file__).resolve().parents[1]
PAPER_CSV = STUDY / "paper_values.csv"


@pytest.fixture(scope="module")
def study():
    return make_study()


@pytest.fixture(scope="module")
def spec():
    return make_spec()


def cell(df, row, loss, metric):
    sel = df[(df["row"] == row) & (df["loss"] == loss)]
    assert len(sel) == 1, (row, loss)
    r = sel.iloc[0]
    return r[f"{metric}_mean"], r[f"{metric}_std"], r["n_seeds"]


def test_table1_mean_std_by_hand(study, spec):
    t = TABLES["table1"](study["runs"], study["ood"], spec)
    # CE, MSP, textures: 0.55, 0.57, 0.59 -> 57 ± 2 (sample std)
    assert cell(t, "textures", "ce", "fpr95") == pytest.approx((57.0, 2.0, 3))
    # per-seed average over the two test sets first: 0.50, 0.52, 0.54 -> 52 ± 2
    assert cell(t, "average", "ce", "fpr95") == pytest.approx((52.0, 2.0, 3))
    assert cell(t, "average", "logitnorm", "fpr95") == pytest.approx((21.0, 1.0, 3))
    # AUROC = 1 - fpr/2 -> 74 ± 1; AUPR(-In) = 1 - fpr/4 -> 87 ± 0.5
    assert cell(t, "average", "ce", "auroc") == pytest.approx((74.0, 1.0, 3))
    assert cell(t, "average", "ce", "aupr") == pytest.approx((87.0, 0.5, 3))
    # validation sets never appear in a test table
    assert set(t["row"]) == {"photos", "textures", "average"}
    assert t["row"].iloc[-1] == "average"


def test_average_is_within_seed_then_over_seeds(spec):
    f = make_study()
    ood = f["ood"].copy()
    # make seed 0's textures worse by 0.2 for CE: average row changes only for seed 0
    m = (ood["loss"] == "ce") & (ood["seed"] == 0) & (ood["ood_set"] == "textures")
    ood.loc[m, "fpr95"] += 0.2
    t = TABLES["table1"](f["runs"], ood, spec)
    per_seed = [50 + 10, 52, 54]  # seed 0: (0.75 + 0.45) / 2 = 0.60
    mean, std, n = cell(t, "average", "ce", "fpr95")
    assert mean == pytest.approx(sum(per_seed) / 3)
    assert std == pytest.approx(pd.Series(per_seed).std(ddof=1))


def test_other_tables(study, spec):
    runs, ood = study["runs"], study["ood"]
    t2 = TABLES["table2"](runs, ood, spec)
    assert list(t2["row"].unique()) == spec["scores"]
    assert cell(t2, "odin", "logitnorm", "fpr95")[0] == pytest.approx(19.0)
    t3 = TABLES["table3"](runs, ood, spec)
    assert list(t3["row"].unique()) == spec["arch_table"]
    assert cell(t3, "mlp", "ce", "accuracy") == pytest.approx((97.1, 0.1, 3))
    assert cell(t3, "mlp", "ce", "fpr95")[0] == pytest.approx(55.0)
    t4 = TABLES["table4"](runs, ood, spec)
    assert cell(t4, "w/ TS", "ce", "ece") == pytest.approx((1.1, 0.1, 3))
    assert cell(t4, "w/ TS", "logitnorm", "temperature")[0] == pytest.approx(0.05)
    assert math.isnan(cell(t4, "w/o TS", "ce", "temperature")[0])
    t5 = TABLES["table5"](runs, ood, spec)
    assert list(t5["loss"]) == ["ce", "logitpenalty", "logitnorm"]
    assert cell(t5, "average", "ce", "norm_id")[0] == pytest.approx(12.1)
    assert cell(t5, "average", "ce", "norm_ood")[0] == pytest.approx(10.1)
    assert (t5["norm_ood_set"] == "textures").all()
    t6 = TABLES["table6"](runs, ood, spec)
    assert list(zip(t6["loss"], t6["score"], strict=True)) == [
        ("godin", "godin"),
        ("logitnorm", "msp"),  # the paper's text
        ("logitnorm", "odin"),  # its table's caption
    ]
    assert cell(t6, "average", "godin", "fpr95")[0] == pytest.approx(31.0)


def _one(df, **keys):
    sel = df
    for k, v in keys.items():
        sel = sel[sel[k] == v]
    assert len(sel) == 1, keys
    r = sel.iloc[0]
    return r["fpr95_mean"], r["fpr95_std"], r["n_seeds"]


def test_per_set_tables_by_hand(study, spec):
    """Tables 7-9 (App. E): one row per OOD test set, the per-seed values of that set."""
    runs, ood = study["runs"], study["ood"]
    t7 = TABLES["table7"](runs, ood, spec)
    # CE, ODIN, textures: 0.50 - 0.02 + 0.05 + 0.02 * seed -> 55 ± 2
    assert _one(t7, row="textures", loss="ce", score="odin") == pytest.approx((55.0, 2.0, 3))
    assert set(t7["row"]) == {"textures", "photos"} and set(t7["shift"]) == {"far"}
    assert len(t7) == 2 * len(spec["scores"]) * 2
    t8 = TABLES["table8"](runs, ood, spec)
    # mlp, CE, photos: 0.50 - 0.05 + 0.03 + 0.02 * seed -> 50 ± 2
    assert _one(t8, arch="mlp", row="photos", loss="ce") == pytest.approx((50.0, 2.0, 3))
    assert list(t8["arch"].unique()) == spec["arch_table"] and "score" not in t8
    t9 = TABLES["table9"](runs, ood, spec)
    # GODIN, its own score, textures: 0.30 + 0.05 + 0.01 * seed -> 36 ± 1
    assert _one(t9, row="textures", loss="godin", score="godin") == pytest.approx((36.0, 1.0, 3))
    assert _one(t9, row="photos", loss="logitpenalty", score="msp")[0] == pytest.approx(51.0)
    assert _one(t9, row="photos", loss="logitnorm", score="odin")[0] == pytest.approx(14.0)
    assert (t9["note"] == "").all()


def test_per_set_tables_average_to_the_averaged_tables(study, spec):
    """Each per-set table averaged over its sets is its averaged table (each seed has every
    set), near sets and the floor-solved ones apart as there."""
    runs, ood = study["runs"], study["ood"]
    ood = ood.assign(trivial=ood["ood_set"] == "photos")  # photos: floor-solved, "not kept"
    pairs = (("table7", "table2", "score"), ("table8", "table3", "arch"))
    for per_set, averaged, key in pairs:
        t = TABLES[per_set](runs, ood, spec).replace({"shift": {"not kept": "trivial"}})
        mean = t.groupby(["shift", key, "loss"])["fpr95_mean"].mean()
        avg = TABLES[averaged](runs, ood, spec).set_index(["shift", "row", "loss"])["fpr95_mean"]
        assert set(t["shift"]) == {"far", "trivial"}
        for idx, value in mean.items():
            assert avg.loc[idx] == pytest.approx(value), (per_set, idx)


def test_table9_says_which_losses_the_config_does_not_train(study, spec):
    t9 = TABLES["table9"](study["runs"], study["ood"], {**spec, "main_losses": ["ce", "logitnorm"]})
    run = t9[t9["n_seeds"] > 0]
    assert set(run["loss"]) == {"ce", "logitnorm"} and set(run["score"]) == {"msp"}
    absent = t9[t9["row"] == "not run"]
    assert list(absent["loss"]) == ["logitpenalty", "godin"]
    assert absent["note"].str.contains("not trained on this config").all()


def test_tau_ablation(study, spec):
    t = tau_ablation(study["runs"], study["ood"], spec)
    assert list(t["tau"]) == [0.01, 0.04, 0.1]
    assert list(t["loss"]) == ["logitnorm-tau0.01", "logitnorm", "logitnorm-tau0.1"]
    assert t["fpr95_mean"].tolist() == pytest.approx([31.0, 21.0, 26.0])
    assert t["val_fpr95_mean"].tolist() == pytest.approx([31.0, 21.0, 16.0])
    # selected on validation (0.1), not on test (where 0.04 is best)
    assert t.loc[t["selected"], "tau"].tolist() == [0.1]
    # numeric tau entries (raw config) are matched on the method's tau
    t_num = tau_ablation(study["runs"], study["ood"], make_spec(tau_ablation=[0.1, 0.04]))
    assert list(t_num["loss"]) == ["logitnorm", "logitnorm-tau0.1"]


@pytest.mark.parametrize("name", sorted(TABLES))
def test_every_table_renders_and_roundtrips(study, spec, name, tmp_path):
    t = TABLES[name](study["runs"], study["ood"], spec)
    assert "n_seeds" in t and t["n_seeds"].dtype == "int64"
    path = tmp_path / f"{name}.parquet"
    t.to_parquet(path, index=False)
    back = pd.read_parquet(path)
    md = render_markdown(back, name)
    assert md.startswith(f"### {name}")
    assert "±" in md
    assert md.count("\n| ") == len(t) + 1  # header + one line per row


def test_markdown_cell_format(study, spec):
    md = render_markdown(TABLES["table1"](study["runs"], study["ood"], spec), "Table 1")
    assert "| textures | ce | 57.00 ± 2.00 |" in md


def test_single_seed_std_is_nan_and_rendered(spec):
    f = make_study(seeds=(1,))
    t = TABLES["table1"](f["runs"], f["ood"], spec)
    mean, std, n = cell(t, "average", "ce", "fpr95")
    assert mean == pytest.approx(52.0) and math.isnan(std) and n == 1
    assert "52.00 ± n/a" in render_markdown(t, "one seed")


@pytest.mark.parametrize(
    "name,loss",
    [
        ("table1", "logitnorm"),
        ("table2", "ce"),
        ("table5", "logitpenalty"),
        ("table6", "godin"),
        ("table4", "logitnorm"),
        ("table7", "ce"),
        ("table8", "logitnorm"),
        ("table9", "logitpenalty"),
    ],
)
def test_missing_loss_raises(study, spec, name, loss):
    runs = study["runs"][study["runs"]["loss"] != loss]
    ood = study["ood"][study["ood"]["loss"] != loss]
    with pytest.raises(ValueError, match=loss):
        TABLES[name](runs, ood, spec)


def test_missing_arch_and_set_raise(study, spec):
    runs = study["runs"][study["runs"]["arch"] != "mlp"]
    ood = study["ood"][study["ood"]["arch"] != "mlp"]
    with pytest.raises(ValueError, match="mlp"):
        TABLES["table3"](runs, ood, spec)
    with pytest.raises(ValueError, match="wrn-10-1"):
        TABLES["table1"](study["runs"], study["ood"][study["ood"]["arch"] != "wrn-10-1"], spec)
    ood = study["ood"]
    gap = ~((ood["seed"] == 2) & (ood["ood_set"] == "photos") & (ood["loss"] == "ce"))
    with pytest.raises(ValueError, match="photos"):
        TABLES["table1"](study["runs"], ood[gap], spec)
    with pytest.raises(ValueError, match="score"):
        TABLES["table2"](study["runs"], ood, make_spec(scores=["msp", "react"]))


def test_mixed_datasets_need_spec_dataset(study, spec):
    other = study["ood"].assign(dataset="other")
    ood = pd.concat([study["ood"], other], ignore_index=True)
    with pytest.raises(ValueError, match="dataset"):
        TABLES["table1"](study["runs"], ood, spec)
    t = TABLES["table1"](study["runs"], ood, make_spec(dataset="digits"))
    assert cell(t, "average", "ce", "fpr95")[0] == pytest.approx(52.0)


# --------------------------------------------------------------------------- paper values
@pytest.fixture(scope="module")
def paper():
    return load_paper_values(PAPER_CSV)


def pv(paper, table, ds, row, loss, metric):
    sel = paper[
        (paper["table"] == table)
        & (paper["id_dataset"] == ds)
        & (paper["row"] == row)
        & (paper["loss"] == loss)
        & (paper["metric"] == metric)
    ]
    assert len(sel) == 1
    return sel["value"].item()


def test_paper_values_transcription(paper):
    assert len(paper) == 185
    assert pv(paper, "table1", "cifar10", "SVHN", "ce", "fpr95") == 50.33
    assert pv(paper, "table1", "cifar10", "SVHN", "logitnorm", "fpr95") == 8.03
    # the text: "reduces the FPR95 by 33.87%" on CIFAR-10
    assert pv(paper, "table1", "cifar10", "average", "ce", "fpr95") - pv(
        paper, "table1", "cifar10", "average", "logitnorm", "fpr95"
    ) == pytest.approx(33.87)
    # the average row is the mean of the six sets (to print precision)
    sets = ["Texture", "SVHN", "LSUN-C", "LSUN-R", "iSUN", "Places365"]
    for loss in ("ce", "logitnorm"):
        mean = sum(pv(paper, "table1", "cifar10", s, loss, "fpr95") for s in sets) / 6
        assert mean == pytest.approx(
            pv(paper, "table1", "cifar10", "average", loss, "fpr95"), abs=0.01
        )
    # the same CIFAR-10 WRN-40-2 MSP numbers in Tables 1, 2, 3 and 5
    for t, row in (("table2", "msp"), ("table3", "WRN-40-2"), ("table5", "average")):
        for loss in ("ce", "logitnorm"):
            assert pv(paper, t, "cifar10", row, loss, "fpr95") == pv(
                paper, "table1", "cifar10", "average", loss, "fpr95"
            )
    assert pv(paper, "table4", "cifar10", "w/ TS", "logitnorm", "ece") == 0.41
    assert pv(paper, "table5", "cifar10", "average", "logitpenalty", "norm_id") == 1.90
    assert pv(paper, "table6", "cifar10", "average", "godin", "fpr95") == 25.24
    # printed inconsistencies kept as printed (see PAPER_NOTES)
    assert pv(paper, "table2", "cifar100", "msp", "logitnorm", "fpr95") == 58.35
    assert pv(paper, "table1", "cifar100", "average", "logitnorm", "fpr95") == 58.49
    assert pv(paper, "table6", "cifar10", "average", "logitnorm", "fpr95") != pv(
        paper, "table2", "cifar10", "odin", "logitnorm", "fpr95"
    )


def test_paper_values_validation(tmp_path):
    good = PAPER_CSV.read_text().splitlines()
    cases = {
        "dup": good + [good[1]],
        "badtable": good + ["table9,cifar10,SVHN,ce,fpr95,1.0"],
        "range": good + ["table1,cifar10,Extra,ce,fpr95,101"],
        "text": good + ["table1,cifar10,Extra,ce,fpr95,abc"],
        "cols": ["table,id_dataset,row,loss,metric"]
        + [line.rsplit(",", 1)[0] for line in good[1:]],
    }
    for name, lines in cases.items():
        p = tmp_path / f"{name}.csv"
        p.write_text("\n".join(lines) + "\n")
        with pytest.raises(ValueError):
            load_paper_values(p)
    with pytest.raises(FileNotFoundError):
        load_paper_values(tmp_path / "absent.csv")


def test_side_by_side(study, spec, paper):
    t1 = TABLES["table1"](study["runs"], study["ood"], spec)
    both = side_by_side(t1, paper, "table1", spec=spec)
    assert set(both["source"]) == {"ours", "paper"}
    aligned = both[both["aligned"]]
    assert set(aligned["row"]) == {"average"}
    assert len(aligned) == 2 * 2 * 3  # ours + paper x 2 losses x 3 metrics
    p = aligned[
        (aligned["source"] == "paper") & (aligned["loss"] == "ce") & (aligned["metric"] == "fpr95")
    ]
    assert p["mean"].item() == 49.52
    md = render_side_by_side_markdown(both, "t1")
    assert "| average | ce | fpr95 | 52.00 ± 2.00 | 49.52 |" in md
    # Table 3: architectures differ, nothing aligns; the paper table is shown on its own
    t3 = TABLES["table3"](study["runs"], study["ood"], spec)
    assert not side_by_side(t3, paper, "table3")["aligned"].any()
    assert "WRN-40-2" in render_paper_markdown(paper, "table3")
    # Table 4: both rows align on ECE; the temperature has no paper value
    t4 = TABLES["table4"](study["runs"], study["ood"], spec)
    b4 = side_by_side(t4, paper, "table4")
    assert set(b4.loc[b4["aligned"], "metric"]) == {"ece"}
    # renamed losses are matched through the spec's roles
    renamed = t1.replace({"loss": {"ce": "xent"}})
    b = side_by_side(renamed, paper, "table1", spec=make_spec(baseline="xent"))
    assert (
        b.loc[b["aligned"] & (b["source"] == "ours"), "our_loss"].isin(["xent", "logitnorm"]).all()
    )
    assert b["aligned"].sum() == 12
