"""The full config's projection (workflow/bench/project_full.py) on a tiny fake DAG and fake
records of a finished run: which cost each planned job gets and from where. No timing."""

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "workflow/bench"))

import project_full as pf  # noqa: E402
from schedule import Job  # noqa: E402

REF = ("fashion", "sgd-fashion", "wrn-10-1", "ce")


def _run(kind: str, arch: str, loss: str, seed: int) -> list[str]:
    base = f"results/{kind}/fashion/sgd-fashion/{arch}/{loss}/seed{seed}"
    return [f"{base}/model.pt"] if kind == "train" else [f"{base}/summary.json"]


def _recorded() -> dict[str, Job]:
    """The default run: data, two seeds of WRN-10-1 CE (train 100 / 120 s, evaluate 10 s) and
    of LogitNorm (train 110 s), an aggregate (20 s) and a table (4 s)."""
    jobs = [Job("prep", "prepare_data", 30.0, outputs=("data/fashion",))]
    for seed, cpu in ((0, 100.0), (1, 120.0)):
        jobs.append(
            Job(f"t{seed}", "train_seed", cpu, outputs=tuple(_run("train", *REF[2:], seed)))
        )
        jobs.append(
            Job(f"e{seed}", "evaluate_seed", 10.0, outputs=tuple(_run("eval", *REF[2:], seed)))
        )
        ln = tuple(_run("train", "wrn-10-1", "logitnorm", seed))
        jobs.append(Job(f"l{seed}", "train_seed", 110.0, outputs=ln))
    jobs.append(Job("agg", "logitnorm_aggregate", 20.0, outputs=("results/ln/runs.parquet",)))
    jobs.append(Job("tab", "logitnorm_table", 4.0, outputs=("results/ln/table1.parquet",)))
    return {j.name: j for j in jobs}


def _planned() -> list[dict]:
    """The full config's DAG: the same data and CE seed 0, a new ResNet-8 LogitNorm seed
    (trained and evaluated), an aggregate reading four results (two there), a new table of a
    rule the default ran, and a rule the default never ran."""

    def job(name, rule, outputs, inputs=(), deps=()):
        return {
            "name": name,
            "rule": rule,
            "outputs": list(outputs),
            "inputs": list(inputs),
            "threads": 1,
            "deps": list(deps),
        }

    new_t, new_e = (
        _run("train", "resnet-8", "logitnorm", 0),
        _run("eval", "resnet-8", "logitnorm", 0),
    )
    ref_e = _run("eval", *REF[2:], 0)
    return [
        job("prep", "prepare_data", ["data/fashion"]),
        job("t0", "train_seed", _run("train", *REF[2:], 0), ["data/fashion"], ["prep"]),
        job("e0", "evaluate_seed", ref_e, _run("train", *REF[2:], 0), ["t0"]),
        job("nt", "train_seed", new_t, ["data/fashion", "src/softmax_ood/train.py"], ["prep"]),
        job("ne", "evaluate_seed", new_e, new_t, ["nt"]),
        job(
            "agg",
            "logitnorm_aggregate",
            ["results/ln/runs.parquet"],
            [*ref_e, *new_e, "results/x/a.json", "results/x/b.json", "src/a.py"],
            ["e0", "ne"],
        ),
        job(
            "t3",
            "logitnorm_table",
            ["results/ln/table3.parquet"],
            ["results/ln/runs.parquet"],
            ["agg"],
        ),
        job("new", "brand_new_rule", ["results/ln/other.parquet"], [], ["agg"]),
        job(
            "rep",
            "logitnorm_aggregate_replication",
            ["results/ln/replication/runs.parquet"],
            [
                *_run("eval", "resnet-8", "logitnorm", 5),
                *_run("eval", "resnet-8", "ce", 5),
                *_run("eval", "wrn-10-1", "ce", 5),
            ],
            ["ne"],
        ),
    ]


def test_each_planned_job_costs_the_default_runs_job_a_scaled_estimate_or_its_rules_mean():
    recorded = _recorded()
    ratios = {"train": {"resnet-8/logitnorm": 0.5}, "evaluate": {"resnet-8/logitnorm": 2.0}}
    counts = {"agg": 2}  # the default's aggregate read two results; the planned one reads four
    jobs, source = pf.project(_planned(), recorded, counts, ratios, REF)
    cost = {n: j.cpu_s for n, j in jobs.items()}
    assert source == {
        "prep": "default",
        "t0": "default",
        "e0": "default",
        "nt": "scaled",
        "ne": "scaled",
        "agg": "default x inputs",
        "t3": "rule mean",
        "new": "unknown",
        "rep": "rule mean",
    }
    assert cost["t0"] == 100.0 and cost["prep"] == 30.0
    # the reference cell's mean per seed in the default run (110 s train, 10 s evaluate)
    assert cost["nt"] == pytest.approx(110.0 * 0.5)
    assert cost["ne"] == pytest.approx(10.0 * 2.0)
    assert cost["agg"] == pytest.approx(20.0 * 4 / 2)  # code files are not counted
    assert cost["t3"] == 4.0 and cost["new"] == 0.0
    # a replication rule the default never ran costs as its base rule, per result read
    assert cost["rep"] == pytest.approx(20.0 * 3 / 2)
    assert jobs["agg"].deps == {"e0", "ne"} and jobs["prep"].deps == set()


def test_a_cell_without_a_measured_ratio_falls_back_to_its_rules_mean():
    jobs, source = pf.project(_planned(), _recorded(), {}, {"train": {}, "evaluate": {}}, REF)
    assert source["nt"] == "rule mean"
    assert jobs["nt"].cpu_s == pytest.approx((100 + 120 + 110 + 110) / 4)
    assert source["agg"] == "default"  # no recorded input count: the job's own CPU


def test_a_per_cell_job_costs_its_seeds_and_paths_name_their_cell():
    outs = [
        *_run("train", "densenet-bc-10", "godin", 0),
        *_run("train", "densenet-bc-10", "godin", 1),
    ]
    assert pf.cell_of(outs) == ("fashion", "sgd-fashion", "densenet-bc-10", "godin")
    assert pf.seeds_of(outs) == 2 and pf.cell_of(["results/ln/runs.parquet"]) is None
    assert pf.kind_of("train") == pf.kind_of("train_seed") == "train"
    assert pf.kind_of("evaluate_seed") == "evaluate" and pf.kind_of("logitnorm_table") is None


def test_the_report_states_sources_the_check_and_the_goal_ratio():
    recorded = _recorded()
    measured = {
        "train": {"wrn-10-1/ce": 2.0, "wrn-10-1/logitnorm": 2.2, "resnet-8/logitnorm": 1.0},
        "evaluate": {"wrn-10-1/ce": 1.0, "wrn-10-1/logitnorm": 1.0, "resnet-8/logitnorm": 2.0},
    }
    ratios = pf.ratios_of(measured, "wrn-10-1/ce")
    assert ratios["train"]["resnet-8/logitnorm"] == 0.5 and ratios["train"]["wrn-10-1/ce"] == 1.0
    jobs, source = pf.project(_planned(), recorded, {"agg": 2}, ratios, REF)
    # the default ran LogitNorm's training but not its evaluation: no check row for it
    assert pf.recorded_ratios_of(recorded, REF, ratios["train"]) == {}
    text = pf.render(
        ratios,
        {"wrn-10-1/logitnorm": {"train": 1.0, "evaluate": 1.1}},
        jobs,
        source,
        pf.scale_report(jobs),
    )
    assert "(DIR: train 1.00, evaluate 1.10)" in text
    assert "scaled               2 jobs" in text and "unknown              1 jobs" in text
    assert "rule mean            2 jobs" in text
    assert "16 cores:" in text and "vs the 30-minute goal: ratio" in text
    assert "list-scheduled wall time" in text and "critical path:" in text
