"""The unit of a train / evaluate job (config scheduling.per_seed; rules/train.smk): one job per
cell or one per seed, with the same per-run bytes either way."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
from e2e import SMOKE, fresh_copy, snakemake, tree_hashes  # noqa: E402

PER_RUN = ("model.pt", "curve.tsv")
PER_EVAL = ("summary.json", "scores.parquet")


def _job_counts(out: str) -> dict[str, int]:
    return {m[1]: int(m[2]) for m in re.finditer(r"^(\w+)\s+(\d+)$", out, re.M)}


def _dry(work: Path, *args: str) -> dict[str, int]:
    proc = snakemake(work, "-n", "--quiet", "rules", "--cores", "2", *args)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return _job_counts(proc.stdout + proc.stderr)


@pytest.fixture(scope="module")
def copy(tmp_path_factory) -> Path:
    return fresh_copy(tmp_path_factory.mktemp("sched") / "repo")


@pytest.mark.slow
def test_the_default_trains_its_expensive_recipes_one_seed_per_job(copy):
    """The default: the headline (sgd-fashion) and Kang (kang-fashion) cells are per seed, so
    their 25 trainings, and Kang's 15 on the replication seeds, are 40 jobs; nothing is trained
    per cell."""
    counts = _dry(copy)
    assert counts.get("train_seed") == 40 and "train" not in counts
    assert counts.get("evaluate_seed") == 10 and "evaluate" not in counts


@pytest.mark.slow
def test_a_recipe_moves_between_units_by_config(copy):
    """The smoke config trains its adam cells per seed (2 cells x 2 seeds) and the rest per
    cell; emptying scheduling.per_seed gives one job per cell for every recipe."""
    mixed = _dry(copy, *SMOKE)
    assert mixed["train_seed"] == 4 and mixed["evaluate_seed"] == 4 and mixed["train"] >= 1
    cells = _dry(copy, *SMOKE, "--config", "scheduling={per_seed: []}")
    assert "train_seed" not in cells and "evaluate_seed" not in cells
    assert cells["train"] == mixed["train"] + mixed["train_seed"] // 2


@pytest.mark.slow
def test_paper_scale_plans_one_gpu_train_job_per_cell_and_seed(copy):
    """config/paper.yaml with device cuda: every training is its own job asking for one GPU (a
    cluster runs a cell's five seeds side by side)."""
    proc = snakemake(
        copy, "-n", "--cores", "2", "--configfile", "config/paper.yaml", "--config", "device=cuda"
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    jobs = re.split(r"^(?=rule \w+:$)", proc.stdout, flags=re.M)
    trains = [j for j in jobs if j.startswith(("rule train:", "rule train_seed:"))]
    assert trains and all(j.startswith("rule train_seed:") for j in trains)
    assert all(re.search(r"resources: .*\bgpu=1\b", j) for j in trains)
    seeds = {re.search(r"wildcards: .*seed=(\d+)", j)[1] for j in trains}
    # "repeated five times with different seeds", and again on the five replication seeds
    assert seeds == {str(s) for s in range(10)}
    assert len(trains) % 5 == 0
    # a measured epoch time sizes the limit: wrn-40-2 (18 s) x 200 epochs x 1.5 = 90 minutes,
    # while an architecture without one keeps minutes_per_seed.train (30)
    limits = {
        re.search(r"wildcards: .*arch=([\w-]+)", j)[1]: int(re.search(r"runtime=(\d+)", j)[1])
        for j in trains
    }
    assert limits.pop("wrn-40-2") == 90 and set(limits.values()) == {30}, limits


@pytest.mark.slow
def test_an_unknown_recipe_in_per_seed_is_one_sentence(copy):
    proc = snakemake(copy, "-n", "--cores", "1", "--config", "scheduling={per_seed: [nope]}")
    assert proc.returncode != 0
    said = proc.stdout + proc.stderr
    assert "scheduling.per_seed is 'nope'; allowed values:" in said
    assert "Traceback" not in said


@pytest.mark.slow
def test_per_seed_and_per_cell_jobs_write_the_same_bytes(smoke_runs, tmp_path):
    """The smoke run trained and evaluated its adam cells one seed per job; a fresh copy trains
    and evaluates the same cells one job per cell: every per-run file is byte-identical."""
    ref = smoke_runs[0]
    runs = sorted(p.parent for p in (ref / "results/train").glob("*/adam/*/*/seed*/model.pt"))
    assert len(runs) == 4, runs  # 2 cells x 2 seeds (config/smoke.yaml)
    targets = []
    for run in runs:
        rel = run.relative_to(ref)
        targets += [f"{rel}/{n}" for n in PER_RUN]
        ev = Path("results/eval", *rel.parts[2:])
        targets += [f"{ev}/{n}" for n in PER_EVAL]
    work = fresh_copy(tmp_path / "repo")
    proc = snakemake(
        work, *targets, "--cores", "2", *SMOKE, "--config", "scheduling={per_seed: []}"
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    said = proc.stdout + proc.stderr
    assert "rule train:" in said and "rule train_seed:" not in said  # one job per cell
    mine, theirs = tree_hashes(work / "results"), tree_hashes(ref / "results")
    for t in targets:
        key = Path(t).relative_to("results").as_posix()
        assert mine[key] == theirs[key], f"{t} differs between per-seed and per-cell jobs"
    # the summaries record the same model and data hashes
    for t in targets:
        if t.endswith("summary.json"):
            a = json.loads((work / t).read_text())["inputs"]
            assert a == json.loads((ref / t).read_text())["inputs"]
