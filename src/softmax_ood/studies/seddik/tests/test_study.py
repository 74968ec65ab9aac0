"""Registration: config checks (one sentence), runs, targets, frame kwargs, the schema."""

from __future__ import annotations

import copy
from pathlib import Path

import jsonschema
import pytest
import yaml

from softmax_ood.config import ConfigError
from softmax_ood.runs import Run
from softmax_ood.studies.seddik import experiments, study
from softmax_ood.studies.seddik.tests.controls import CLAIM_IDS

SECTION = yaml.safe_load(
    """
solver: {rtol: 1.0e-9, max_iter: 500, n_nodes: 64, multiclass_rtol: 1.0e-8,
         multiclass_max_iter: 300, accuracy_draws: 32768}
train: {tol: 1.0e-10, max_iter: 20000}
fig2: {ps: [25, 50], seeds: [0, 1], n: 400, lam: 20.0, gammas: [0.3333333333333333, 0.6666666666666666],
       mean_norm: 0.5, n_test: 4000}
digits: {pair: [1, 2], lam: 20.0, balance: true, seed: 0}
fig3: {loo: exact}
fig4: {ns: [20, 40], seeds: [0, 1]}
fig5: {recipe: adam, arch: wrn-10-1, loss: ce, seeds: [0, 1], splits: [train, val, test],
       fit_fraction: 0.3333333333333333, split_seed: 0, lam: 1.5, row_norm: 0.1,
       center: false, stats_from: independent, stats_fraction: 0.3333333333333333, draw_seed: 0}
validation: {lams: [0.1], seeds: [0], p: 30, n: 120, mean_norm: 1.0, gammas: [0.4, 0.6],
             n_test: 500}
timing: {p: 512, n: 3000, ks: [2, 3], lam: 1.0, seed: 0}
claims: {max_gap_points: 2.0, ridge_n_gap: 1.0, alpha: 0.05}
"""
)


def make_config(**changes) -> dict:
    cfg = {
        "data": {"dataset": "digits"},
        "recipes": {"adam": {}},
        "architectures": {"wrn-10-1": {}, "cnn": {}},
        "losses": {"ce": {"loss": "ce"}},
        "seddik": copy.deepcopy(SECTION),
    }
    for key, value in changes.items():
        cfg["seddik"][key].update(value)
    return cfg


def test_section_validates_against_schema():
    schema = yaml.safe_load(Path(study.SCHEMA).read_text())
    jsonschema.Draft202012Validator(schema).validate(SECTION)
    bad = copy.deepcopy(SECTION)
    bad["fig3"]["loo"] = "approx"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft202012Validator(schema).validate(bad)


def test_check_accepts_the_default_and_names_bad_values():
    study.check(make_config())
    with pytest.raises(ConfigError, match=r"^config error: seddik\.fig5\.arch is 'wrn-40-2'"):
        study.check(make_config(fig5={"arch": "wrn-40-2"}))
    with pytest.raises(ConfigError, match=r"seddik\.fig5\.recipe is 'sgd'; allowed values: adam"):
        study.check(make_config(fig5={"recipe": "sgd"}))
    with pytest.raises(ConfigError, match="listed twice"):
        study.check(make_config(fig5={"splits": ["val", "val"]}))
    study.check(make_config(fig5={"stats_from": "train", "stats_fraction": None}))
    with pytest.raises(ConfigError, match=r"seddik\.fig5\.stats_fraction is None .* test part"):
        study.check(make_config(fig5={"stats_fraction": None}))
    with pytest.raises(ConfigError, match=r"fit_fraction \+ stats_fraction < 1"):
        study.check(make_config(fig5={"fit_fraction": 0.5, "stats_fraction": 0.5}))
    with pytest.raises(ConfigError, match="does not sum to 1"):
        study.check(make_config(fig2={"gammas": [0.5, 0.6]}))
    for err in (ConfigError,):
        with pytest.raises(err) as info:
            study.check(make_config(digits={"pair": [3, 3]}))
        assert str(info.value).count(".") <= 3 and "\n" not in str(info.value)


def test_runs_are_the_fig5_networks():
    cfg = make_config()
    assert study.runs(cfg) == [Run("digits", "adam", "wrn-10-1", "ce", s) for s in (0, 1)]
    assert study.loss_variants(cfg) == {}


def test_claim_specs_are_the_claims_table_ids():
    ids = [s.id for s in study.claim_specs(make_config())]
    assert ids == list(CLAIM_IDS)
    specs = {s.id: s for s in study.claim_specs(make_config())}
    kinds = {i: s.kind for i, s in specs.items()}
    assert kinds["S1"] == kinds["S2"] == "sanity" and kinds["P1"] == "premise"
    assert kinds["C2"] == "claim"
    # every Fig. 5 claim rests on independent class statistics
    assert all("S2" in specs[i].requires for i in ("C3-weights", "C3-logits", "C3"))


def test_figs_3_4_claims_name_the_image_pair_not_digits_on_fashion():
    """Issue 45: on Fashion-MNIST's Pullover vs Coat the claims say so, not "digits"; the
    claims job hands the pair's name to the claims function and reads the Fig. 3 frame."""
    fashion = make_config(digits={"pair": [2, 4], "source": "fashion"})
    specs = {s.id: s for s in study.claim_specs(fashion)}
    for cid in ("P2", "C2", "C4"):
        assert "Fashion-MNIST Pullover vs Coat" in specs[cid].text, cid
        assert "digits" not in specs[cid].text.replace("MNIST 1 vs 2", ""), cid
    job = study.claims_job(fashion)
    assert job.section["images"] == "Fashion-MNIST Pullover vs Coat" and "fig3" in job.inputs
    sk = {s.id: s for s in study.claim_specs(make_config())}
    assert "digits 1 vs 2" in sk["C2"].text


def test_targets_cover_figures_claims_report():
    t = study.targets(make_config())
    for f in study.FIGURES:
        assert f"results/seddik/digits/figures/{f}.png" in t
    assert {
        "reports/seddik.ipynb",
        "reports/seddik.html",
        "results/seddik/digits/claims.md",
    } <= set(t)


@pytest.mark.parametrize("name", ["fig2", "fig3", "fig4", "validation", "fig5", "timing"])
def test_frame_kwargs_match_the_functions(name):
    import inspect

    fn = {
        "fig2": experiments.fig2_frame,
        "fig3": experiments.fig3_frame,
        "fig4": experiments.fig4_frame,
        "validation": experiments.validation_frame,
        "fig5": experiments.fig5_frame,
        "timing": experiments.timing,
    }[name]
    kwargs = study.frame_kwargs(make_config(), name)
    params = set(inspect.signature(fn).parameters)
    if name == "fig5":  # fig5_networks takes the fit/test cut and passes the rest on
        params |= set(inspect.signature(experiments.fig5_networks).parameters)
    assert set(kwargs) <= params


def test_frame_kwargs_unknown_name():
    with pytest.raises(ValueError, match="unknown Seddik frame"):
        study.frame_kwargs(make_config(), "fig9")


def test_non_convergence_is_one_sentence_naming_the_setting():
    cfg = make_config(solver={"max_iter": 1})
    kwargs = study.frame_kwargs(cfg, "fig2")
    kwargs["ps"] = [25]
    with pytest.raises(experiments.FixedPointError) as info:
        experiments.fig2_frame(**kwargs)
    msg = str(info.value)
    assert msg.startswith("Fig. 2 (Gaussian mixture, p=25): the two-class logistic fixed point")
    assert "after 1 iterations (last relative residual" in msg and "\n" not in msg
    assert isinstance(info.value, ValueError)  # run_script turns it into one line, exit 1


def test_solver_options_reach_the_solver():
    assert experiments.binary_options({"rtol": 1e-6, "multiclass_rtol": 1e-3}) == {"rtol": 1e-6}
    assert experiments.multiclass_options({"multiclass_rtol": 1e-3, "rtol": 1}) == {"rtol": 1e-3}


def test_departures_follow_the_config():
    """The Figs. 3-4 data row is the one of the configured digits source, the leave-one-out
    row says what seddik.fig3.loo does (none for the paper's exact refits), and claim patterns
    resolve to the config's claim ids (C1* covers C1-train)."""
    from softmax_ood.studies.seddik.departures import departures_frame
    from softmax_ood.studies.seddik.study import departures

    cfg = make_config()
    cfg["seddik"]["digits"]["source"] = "fashion"
    cfg["seddik"]["fig3"]["loo"] = "newton"
    deps = {d.setting: d for d in departures(cfg)}
    assert any(s.startswith("Figs. 3-4 data at p = 784") for s in deps)
    assert not any(s.startswith("Figs. 3-4 data (MNIST") for s in deps)
    assert deps["seddik.fig3.loo"].ours.startswith("newton: one Newton step")
    assert "C1-train" in deps["seddik.fig2.seeds"].claims
    cfg["seddik"]["digits"]["source"] = "sklearn"
    cfg["seddik"]["fig3"]["loo"] = "exact"
    deps = {d.setting: d for d in departures(cfg)}
    assert any(s.startswith("Figs. 3-4 data (MNIST") for s in deps)
    assert not any(s.startswith("Figs. 3-4 data at p = 784") for s in deps)
    assert "seddik.fig3.loo" not in deps
    table = departures_frame(departures(cfg))
    assert "C3*" not in " ".join(table["claims"]) and "C3-weights" in " ".join(table["claims"])
