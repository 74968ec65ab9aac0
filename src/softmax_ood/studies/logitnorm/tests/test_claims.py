"""The LogitNorm claims table on hand-built worlds whose answers are known by construction."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from softmax_ood.analysis.claims import COLUMNS, render_claims_markdown
from softmax_ood.config import validate_config
from softmax_ood.metrics import auroc, fpr_at_tpr
from softmax_ood.studies.logitnorm.claims import evaluate_logitnorm_claims
from softmax_ood.studies.logitnorm.evidence import (
    Resamples,
    auroc_ranks,
    fpr95_first,
    fpr_at_tpr_closest,
    msp_arrays,
    split_images,
    two_stage,
)
from softmax_ood.studies.logitnorm.study import claim_specs
from softmax_ood.studies.logitnorm.study import spec as study_spec
from softmax_ood.studies.registry import registered_studies

from . import world

ROOT = Path(__file__).resolve().parents[5]


@pytest.fixture(scope="module")
def spec():
    cfg = yaml.safe_load((ROOT / "config/default.yaml").read_text())
    cfg = validate_config(cfg, ROOT / "workflow/schemas/config.schema.yaml", registered_studies())
    return world.spec_for(study_spec(cfg))


@pytest.fixture(scope="module")
def cache():
    return {}


def evaluate(spec, cache, **over):
    f = world.build(spec, cache, **over)
    return evaluate_logitnorm_claims(
        f["runs"], f["ood"], f["curves"], f["samples"], f["floor"], spec
    )


def _arrays(samples, spec, loss, seed):
    return msp_arrays(samples, spec["recipe"], spec["main_arch"], loss, seed)


def row(df, cid):
    sel = df[df["claim_id"] == cid]
    assert len(sel) == 1, cid
    return sel.iloc[0]


@pytest.fixture(scope="module")
def good(spec, cache):
    return evaluate(spec, cache)


def test_frame_shape_ids_and_premises_first(good, spec):
    assert list(good.columns) == COLUMNS
    kinds = list(good["kind"])
    assert kinds == sorted(kinds, key=["premise", "claim", "sanity"].index)
    premises = set(good.loc[good["kind"] == "premise", "claim_id"])
    assert {"P0", "P1", "P2", "P-ce-fpr", "P-ln-norm"} <= premises
    assert {f"P-floor-{s}" for s in spec["ood_test"]} <= premises
    assert "C3-msp" not in set(good["claim_id"])


def test_all_hold_and_c1_is_the_relative_reduction(good, spec, cache):
    assert good["holds"].all(), good.loc[~good["holds"], ["claim_id", "verdict", "detail"]]
    c1 = row(good, "C1")
    # CE 50 %, LogitNorm 15 % on every set: about a 70 % relative reduction (35 pp of 50) ...
    assert c1["value"] == pytest.approx(70.0, abs=8.0)
    # ... measured exactly on the confirmation images only (recomputed here from the samples)
    samples = world.build(spec, cache)["samples"]
    sizes = {k: len(v) for k, v in _arrays(samples, spec, "ce", 0).items()}
    _, conf = split_images(sizes, spec["selection_fraction"], spec["bootstrap_seed"])
    from softmax_ood.fashion import CUE_REMOVED  # the cue-removal controls: never headline sets

    far = [s for s in spec["ood_test"] if s not in spec["near_ood"] and s not in CUE_REMOVED]

    def avg(loss):
        per_seed = []
        for seed in spec["seeds"]:
            a = _arrays(samples, spec, loss, seed)
            per_seed.append(np.mean([fpr95_first(a["id"][conf["id"]], a[s][conf[s]]) for s in far]))
        return float(np.mean(per_seed))

    ce, ln = avg(spec["baseline"]), avg(spec["method"])
    assert c1["value"] == pytest.approx(100 * (ce - ln) / ce, abs=1e-9)
    assert c1["effect"] == pytest.approx(100 / 3)  # the power target, not the paper's number
    # the paper's own: Table 1's CIFAR-10 average, (49.52 - 15.65) / 49.52
    assert c1["paper_value"] == pytest.approx(100 * 33.87 / 49.52)
    assert c1["power"] > 0.8 and c1["n"] == 5
    assert "test images" in c1["detail"]


def test_a_trivial_set_leaves_the_headline(spec, cache):
    name = [s for s in spec["ood_test"] if s not in spec["near_ood"]][0]
    df = evaluate(spec, cache, trivial_set=name)
    assert not row(df, f"P-floor-{name}")["holds"]
    assert "trivial (floor - CE" in row(df, f"P-floor-{name}")["detail"]  # the floor solves it
    heads = row(df, "C1")["detail"].split(":")[0].removeprefix("sets ").split(", ")
    assert name not in heads and len(heads) > 1
    assert row(df, "C1")["holds"]


def test_ce_succeeding_at_ood_makes_the_comparisons_untestable(spec, cache):
    df = evaluate(spec, cache, fpr={"ce": 0.08, "logitnorm": 0.05, "logitpenalty": 0.1})
    assert row(df, "P-ce-fpr")["verdict"].startswith("does not hold")
    for cid in ("headline", "C1", "C5", "C6", "C7"):
        if cid in set(df["claim_id"]):  # C5/C6: only where LogitPenalty/GODIN are trained
            assert row(df, cid)["verdict"].startswith("cannot test: premise P-ce-fpr"), cid


def test_no_reduction_is_too_few_seeds_or_does_not_hold(spec, cache):
    df = evaluate(spec, cache, fpr={"ce": 0.5, "logitnorm": 0.5, "logitpenalty": 0.6})
    v = row(df, "C1")["verdict"]
    assert v == "does not hold" or v.startswith("too few seeds to tell")
    assert not row(df, "headline")["holds"]


def test_logit_scale_premise_fails_far_from_the_paper(spec, cache):
    df = evaluate(spec, cache, ln_norm=90.0)
    r = row(df, "P-ln-norm")
    assert not r["holds"] and r["value"] == pytest.approx(90 / 1.48, rel=0.05)


def test_c8_after_the_fit(spec, cache):
    assert row(evaluate(spec, cache, ce_norm_growth=-0.01), "C8")["verdict"].startswith(
        "does not hold"
    )


def test_claim_specs_match_the_table(spec, good):
    cfg_ids = [s.id for s in claim_specs_from_spec(spec)]
    assert sorted(cfg_ids) == sorted(good["claim_id"])
    md = render_claims_markdown(good)
    assert "| p | p adj. | n | power |" in md


def claim_specs_from_spec(spec):
    from softmax_ood.studies.logitnorm.claims import claim_specs as specs

    return specs(spec)


def test_study_hook_takes_the_config():
    cfg = yaml.safe_load((ROOT / "config/default.yaml").read_text())
    cfg = validate_config(cfg, ROOT / "workflow/schemas/config.schema.yaml", registered_studies())
    ids = [s.id for s in claim_specs(cfg)]
    assert "P-floor-glyphs" in ids and "C1-near" in ids


# --------------------------------------------------------------------------- evidence
def _ref_closest(pos, neg, level=0.95):
    """The OE/Energy/LogitNorm reference convention, re-derived here as an oracle."""
    x = np.r_[pos, neg]
    y = np.r_[np.ones(len(pos)), np.zeros(len(neg))].astype(bool)
    order = np.argsort(x, kind="mergesort")[::-1]
    x, y = x[order], y[order]
    idx = np.r_[np.where(np.diff(x))[0], y.size - 1]
    tps = np.cumsum(y)[idx]
    fps = 1 + idx - tps
    last = tps.searchsorted(tps[-1])
    recall = np.r_[(tps / tps[-1])[last::-1], 1]
    fps = np.r_[fps[last::-1], 0]
    return fps[np.argmin(np.abs(recall - level))] / np.sum(~y)


def test_fpr_conventions_match_their_definitions():
    rng = np.random.default_rng(0)
    for _ in range(200):
        a = np.round(rng.normal(1, 1, int(rng.integers(5, 60))), 1)
        b = np.round(rng.normal(0, 1, int(rng.integers(5, 60))), 1)
        assert fpr95_first(a, b) == pytest.approx(100 * fpr_at_tpr(a, b))
        assert fpr_at_tpr_closest(a, b) == pytest.approx(_ref_closest(a, b))
        assert auroc_ranks(a, b) == pytest.approx(100 * auroc(a, b))  # ties count one half


def test_two_stage_adds_the_test_image_spread():
    rng = np.random.default_rng(1)
    scores = {s: {"id": rng.uniform(0, 1, 60), "x": rng.uniform(0, 0.97, 60)} for s in range(4)}
    res = Resamples.draw({"x": 60}, 60, 50, 0)

    def stat(seed, b):
        i, o = res.pick(b, scores[seed], ["x"])
        return fpr95_first(i, o["x"])

    ts = two_stage(stat, range(4), res)
    assert ts.se_images > 0 and ts.se >= max(ts.se_seed, ts.se_images)
    assert ts.p_value(ts.mean - 100, ">") < 0.05 < ts.p_value(ts.mean, ">") + 0.5
    assert ts.power(1e6, 0.05) == pytest.approx(1.0)


def test_far_near_drops_a_far_part_the_floor_solves_entirely():
    import pandas as pd

    from softmax_ood.studies.logitnorm.shifts import far_near

    ood = pd.DataFrame(
        {
            "ood_set": ["a", "b", "near", "gaussian_val"],
            "split": ["test", "test", "test", "val"],
            "trivial": [True, True, False, False],
        }
    )
    parts = far_near(ood, {"near_ood": ["near"]})
    assert "far" not in parts and set(parts) == {"near", "trivial"}
    assert set(parts["trivial"]["ood_set"]) == {"a", "b", "gaussian_val"}


def test_a_config_without_logitpenalty_and_godin_has_no_rows_for_them(spec, cache):
    """The 28x28 default trains CE and LogitNorm only (logitnorm.main_losses): its frames hold no
    LogitPenalty or GODIN model, and the claims and tables are computed without them (the default
    run failed on this before)."""
    from softmax_ood.studies.logitnorm.tables import TABLES

    assert spec["main_losses"] == ["ce", "logitnorm"]
    f = world.build(spec, cache)
    keep = {spec["baseline"], spec["method"]} | {
        v for v in f["runs"]["loss"].unique() if str(v).startswith(spec["method"])
    }
    f = {k: v[v["loss"].isin(keep)] if "loss" in v else v for k, v in f.items()}
    table = evaluate_logitnorm_claims(
        f["runs"], f["ood"], f["curves"], f["samples"], f["floor"], spec
    )
    ids = set(table["claim_id"])
    assert not ids & {"C5", "C5-norm", "C6"} and {"headline", "C1", "C4"} <= ids
    # the tables, on the synthetic study's frames restricted the same way
    from .study_frames import make_spec, make_study

    tspec = make_spec(main_losses=["ce", "logitnorm"], tau_ablation=["logitnorm"])
    frames = make_study()
    runs, ood = (frames[k][frames[k]["loss"].isin(["ce", "logitnorm"])] for k in ("runs", "ood"))
    assert set(TABLES["table5"](runs, ood, tspec)["loss"]) == {"ce", "logitnorm"}
    t6 = TABLES["table6"](runs, ood, tspec)
    assert (t6["row"] == "not run").all() and "config/digits.yaml" in t6["note"].iloc[0]
    for name in ("table1", "table2", "table4", "premise"):
        assert len(TABLES[name](runs, ood, tspec)), name


def test_split_images_is_disjoint_complete_and_seeded():
    sizes = {"id": 101, "a": 40, "b": 7}
    sel, conf = split_images(sizes, 0.5, 3)
    for name, n in sizes.items():
        both = np.concatenate([sel[name], conf[name]])
        assert sorted(both) == list(range(n)) and not set(sel[name]) & set(conf[name])
    again, _ = split_images(sizes, 0.5, 3)
    assert all(np.array_equal(sel[k], again[k]) for k in sizes)
    assert not np.array_equal(split_images(sizes, 0.5, 4)[0]["id"], sel["id"])
    with pytest.raises(ValueError, match="selection share"):
        split_images({"id": 1}, 0.5, 0)


def test_confirmation_images_cannot_move_the_headline_selection(spec, cache):
    """Issue 25: perturbing only the confirmation images' scores changes which far sets are
    kept not at all, while the premise rows (read on those images) do change."""
    from softmax_ood.studies.logitnorm.floor import floor_frame

    f = world.build(spec, cache)
    samples = f["samples"].copy()
    sizes = {k: len(v) for k, v in _arrays(samples, spec, "ce", 0).items()}
    _, conf = split_images(sizes, spec["selection_fraction"], spec["bootstrap_seed"])
    ce = (samples["loss"] == spec["baseline"]) & (samples["score"] == "msp")
    for name, idx in conf.items():
        rows = ce & (samples["set"] == name) & samples["image"].isin(idx)
        # CE accepts every OOD confirmation image (FPR 100 %) and no longer separates ID ones
        samples.loc[rows, "value"] = 1.0 if name != "id" else 0.5
    images = world.images_for(spec)
    base, moved = floor_frame(f["samples"], images, spec), floor_frame(samples, images, spec)
    keep = ["ood_set", "selection_value", "selection_p_value", "trivial"]
    pd.testing.assert_frame_equal(base[keep], moved[keep])
    assert not np.allclose(base["value"], moved["value"])


def test_floor_rows_report_the_batterys_two_families_and_the_group(spec, cache):
    """Issue 41: per set the whole battery's best FPR95 is the better of its tuning and held-out
    families', each reported with its detector, on both halves of the test images."""
    from softmax_ood.analysis.battery import HELD_OUT, TUNING

    fl = world.build(spec, cache)["floor"]
    assert set(fl["tuning_detector"]) <= set(TUNING)
    assert set(fl["heldout_detector"]) <= set(HELD_OUT)
    assert set(fl["selection_heldout_detector"]) <= set(HELD_OUT)
    assert np.allclose(fl["floor_fpr95"], np.minimum(fl["tuning_fpr95"], fl["heldout_fpr95"]))
    assert np.allclose(
        fl["selection_floor_fpr95"],
        np.minimum(fl["selection_tuning_fpr95"], fl["selection_heldout_fpr95"]),
    )
    near = set(spec["near_ood"])
    assert (fl["group"] == "near").tolist() == fl["ood_set"].isin(near).tolist()


def test_the_headline_says_cannot_test_and_why_when_the_battery_solves_every_far_set(spec, cache):
    from softmax_ood.studies.logitnorm.frames import mark_trivial

    f = world.build(spec, cache)
    floor = f["floor"].copy()
    floor.loc[floor["shift"] == "far", "trivial"] = True
    ood = mark_trivial(f["ood"].drop(columns=["trivial"], errors="ignore"), floor)
    df = evaluate_logitnorm_claims(f["runs"], ood, f["curves"], f["samples"], floor, spec)
    c1 = row(df, "C1")
    assert c1["verdict"].startswith("cannot test"), c1["verdict"]
    assert "no far OOD set passes the floor battery on the selection images" in c1["detail"]
    far = floor.loc[floor["shift"] == "far", "ood_set"]
    assert all(f"{name} " in c1["detail"] for name in far)


def test_cue_removal_controls_are_sanity_rows_never_headline_sets(spec, cache):
    """Issue 41: a far set with a cue-removal variant carries CE's and LogitNorm's FPR95 on the
    set and on the variant; the variant itself is a control, never kept; the page shows it."""
    from softmax_ood.fashion import CUE_CONTROL, CUE_REMOVED
    from softmax_ood.studies.logitnorm.floor import set_status
    from softmax_ood.studies.logitnorm.summary import readme_block

    assert set(CUE_REMOVED) <= set(spec["ood_test"])
    f = world.build(spec, cache)
    fl = f["floor"].set_index("ood_set")
    for base, (cue, ctrl) in CUE_CONTROL.items():
        r = fl.loc[base]
        assert (r["control_set"], r["control_cue"]) == (ctrl, cue)
        cols = ["ce_set_fpr95", "ce_control_fpr95", "ln_fpr95", "ln_control_fpr95"]
        assert np.isfinite(r[cols].astype(float)).all()
    for ctrl in CUE_REMOVED:
        r = fl.loc[ctrl]
        assert r["group"] == "control" and bool(r["trivial"])
        assert set_status(r).startswith("control")
    from softmax_ood.studies.logitnorm.shifts import far_near

    far = far_near(f["ood"], spec).get("far")
    heads = set() if far is None else set(far.loc[far["split"] == "test", "ood_set"])
    assert not set(CUE_REMOVED) & heads
    text = readme_block(pd.DataFrame(columns=["claim_id"]), f["floor"])
    assert "Cue-removal control" in text and "| glyphs | peak grey level below 1.0 |" in text


def test_c3_power_is_at_an_effect_ce_can_lose(spec, cache, good):
    """Issue 42: C3-odin's power was computed at the paper's 27.37 pp, more than CE's own ODIN
    FPR95 here; the effect is capped at CE's own FPR95 with that score, and the row says so."""
    assert row(good, "C3-odin")["effect_note"] == "27.37: the paper's effect"
    low = evaluate(spec, cache, score_fpr={"ce": 0.20, "logitnorm": 0.15})
    odin = row(low, "C3-odin")
    assert odin["effect_used"] < 27.37 and odin["effect_used"] == pytest.approx(20.0, abs=1.5)
    assert odin["effect_note"].startswith(f"{odin['effect_used']:.4g}: capped at CE's own odin")
    assert "the paper's effect, 27.37, is more than it can lose" in odin["effect_note"]
    # the energy row's 7.68 pp is within reach: the paper's effect stands
    assert row(low, "C3-energy")["effect_note"] == "7.68: the paper's effect"
    # C7: each architecture's power at the paper's 31.84 pp or its CE's own FPR95 if less
    assert row(good, "C7")["effect_note"] == "31.84: the paper's effect"
    assert "CE's own MSP FPR95" in row(good, "C7")["detail"]


def test_the_headline_is_tested_against_the_papers_relative_reduction(good):
    """Issue 42: beside "holds (> 0)", the headline and C1 test ours against the paper's
    68.4 % (two-sided, on the same two-stage test of the pp difference)."""
    from softmax_ood.studies.logitnorm.claims import paper_relative_reduction

    paper = paper_relative_reduction()
    for cid in ("headline", "C1"):
        r = row(good, cid)
        assert 0 < r["p_paper"] <= 1
        words = "consistent with" if r["p_paper"] >= 0.05 else "smaller than"
        assert (
            r["vs_paper"] == f"{words} the paper's {paper:.4g} (two-sided p = {r['p_paper']:.2g})"
        )
    assert row(good, "C3-odin")["vs_paper"] == "" and np.isnan(row(good, "C3-odin")["p_paper"])


def test_c7_and_c8_say_what_is_run_and_read(spec, good):
    """Issue 45: C7 names the architectures it runs (one in the default, not "every"); C8 names
    its training-accuracy premise and says Fig. 1's OOD curve is printed, not tested; its
    detail prints the OOD monitor set's norms beside the ID norms."""
    from softmax_ood.studies.logitnorm.claims import claim_specs as specs_of

    one = {s.id: s.text for s in specs_of({**spec, "arch_table": ["wrn-10-1"]})}
    assert "every architecture" not in one["C7"]
    assert "the one architecture run here (wrn-10-1" in one["C7"]
    two = {s.id: s.text for s in specs_of({**spec, "arch_table": ["wrn-10-1", "mlp"]})}
    assert "each of the 2 architectures run here (wrn-10-1, mlp" in two["C7"]
    fit = f"{100 * float(spec['fit_accuracy']):g} %"
    assert fit in one["C8"] and "OOD curve" in one["C8"] and "not tested" in one["C8"]
    assert ", OOD (" in row(good, "C8")["detail"]
