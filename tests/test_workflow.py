"""End-to-end: the smoke config through Snakemake from scratch, byte-identical to the golden run.

Also: lint, config errors, NaN loss, rerun triggers, no-op rerun, --report, DVC status.
These tests run the real workflow (a few minutes on 2 cores).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

sys.path.insert(0, str(Path(__file__).resolve().parent))
from e2e import SMOKE, dvc, fresh_copy, snakemake, tree_hashes  # noqa: E402

from softmax_ood.studies.logitnorm.study import TABLES  # noqa: E402


@pytest.fixture
def two_runs(smoke_runs):
    return smoke_runs


def test_smoke_produces_every_table_figure_and_report(two_runs):
    a = two_runs[0]
    base = a / "results/logitnorm/digits"
    for i in range(1, 10):
        assert (base / f"tables/table{i}.parquet").stat().st_size > 0
        assert "±" in (base / f"tables/table{i}.md").read_text()
    for fig in ("fig1", "fig2", "fig3", "fig4", "fig5"):
        assert (base / f"figures/{fig}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "headline" in (base / "claims.md").read_text()
    html = (a / "reports/logitnorm.html").read_text()
    assert "Table 1" in html or "table1" in html
    log = (a / "logs/train/digits/sgd/cnn/logitnorm.log").read_text()
    assert re.search(
        r"cnn/logitnorm/seed1 epoch 4/4 loss [\d.]+ train_acc [\d.]+ val_acc [\d.]+ .* ETA", log
    )


def test_a_run_from_scratch_is_byte_identical_to_the_golden_run(two_runs):
    """Every output of a run from scratch against the golden manifest (an earlier run from
    scratch, maybe on another machine): tests/test_golden.py says which rule to look at; this
    says it per folder, results/ and reports/ alike."""
    from e2e import differs_from_golden

    compared, different = differs_from_golden(two_runs[0], "data/", "results/", "reports/")
    assert compared > 100
    assert not different, f"files differ from the golden run: {different[:10]}"


def test_provenance_is_recorded(two_runs):
    from softmax_ood.provenance import read_parquet_provenance

    a = two_runs[0]
    prov = read_parquet_provenance(a / "results/logitnorm/digits/tables/table1.parquet")
    commit = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=a, capture_output=True, text=True
    ).stdout.strip()
    assert prov["git"]["commit"] == commit
    assert re.fullmatch(r"[0-9a-f]{64}", prov["config_sha256"])
    assert prov["seeds"] == [0, 1]
    assert {"python", "torch", "numpy"} <= set(prov["versions"])
    assert all(re.fullmatch(r"[0-9a-f]{64}", v["sha256"]) for v in prov["inputs"].values())
    side = json.loads((a / "results/logitnorm/digits/tables/table1.prov.json").read_text())
    assert side == prov
    fig = json.loads((a / "results/logitnorm/digits/figures/fig1.prov.json").read_text())
    assert fig["script"] == "workflow/scripts/study_figure.py"  # the shared figure rule
    assert fig["function"] == "softmax_ood.studies.logitnorm.figures:FIGURES[fig1]"
    agg = read_parquet_provenance(a / "results/logitnorm/digits/runs.parquet")
    assert any(k.startswith("summary:") for k in agg["inputs"]) and "data" in agg["inputs"]


def test_noop_rerun_and_report(two_runs):
    a = two_runs[0]
    proc = snakemake(a, "-n", *SMOKE)
    assert proc.returncode == 0
    assert "Nothing to be done" in proc.stdout + proc.stderr
    proc = snakemake(a, "--report", "report.html", *SMOKE)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert (a / "report.html").stat().st_size > 10_000


def test_editing_the_logitnorm_loss_reruns_only_its_trainings(two_runs):
    a = two_runs[0]
    losses = a / "src/softmax_ood/losses.py"
    original = losses.read_text()
    marker = "class LogitNormLoss"
    assert marker in original
    edited = re.sub(
        r"(class LogitNormLoss\b[^\n]*\n)", r"\1    _edited_for_test = True\n", original, count=1
    )
    losses.write_text(edited)
    try:
        proc = snakemake(a, "-n", *SMOKE)
    finally:
        losses.write_text(original)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-3000:]
    trained = re.findall(r"rule (train|train_seed):.*?wildcards: ([^\n]*)", out, flags=re.S)
    assert trained, out[-3000:]
    losses_rerun = {re.search(r"loss=([\w.-]+)", w).group(1) for _, w in trained}
    assert losses_rerun == {"logitnorm", "logitnorm-tau0.5"}, losses_rerun
    # sgd: 2 archs x logitnorm + tau0.5 on cnn: 3 cell jobs, each training both seeds; adam
    # (robustness, one job per seed in the smoke config: scheduling.per_seed): logitnorm on
    # cnn, 2 seed jobs
    rules = [rule for rule, _ in trained]
    assert rules.count("train") == 3 and rules.count("train_seed") == 2, trained


def _dry_run_jobs(work: Path, edit_path: str, edit) -> dict[str, int]:
    """Rule name -> number of jobs a dry run would run after ``edit`` (file restored after)."""
    path = work / edit_path
    original = path.read_text()
    path.write_text(edit(original))
    stat = os.stat(path)
    os.utime(path, (stat.st_atime + 5, stat.st_mtime + 5))  # a real edit's newer mtime
    try:
        proc = snakemake(work, "-n", "--quiet", "rules", *SMOKE)
    finally:
        path.write_text(original)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-3000:]
    if "Nothing to be done" in out:
        return {}
    jobs = dict(
        re.findall(r"^(\w+)\s+(\d+)$", out.split("Job stats:")[1].split("Reasons:")[0], re.M)
    )
    jobs.pop("total", None)
    jobs.pop("all", None)
    return {k: int(v) for k, v in jobs.items()}


# the results section across the studies (rules/results.smk): downstream of every study's outputs
RESULTS_RULES = {"results_claims", "results_latex", "results_audit", "results_report"}


def test_code_inputs_are_derived_from_imports(two_runs):
    a = two_runs[0]
    # the study's tables module: its tables and its report, nothing else (claims and figures
    # do not import it)
    jobs = _dry_run_jobs(
        a, "src/softmax_ood/studies/logitnorm/tables.py", lambda t: t + "\n# edited\n"
    )
    # (and downstream of the tables, the results section: LaTeX, audit and page)
    own = {k: v for k, v in jobs.items() if not k.startswith("results_")}
    assert own == {"logitnorm_table": len(TABLES), "logitnorm_report": 1}, jobs
    assert set(jobs) - set(own) <= RESULTS_RULES, jobs
    # the shared claims engine: the claims (and the report that reads them, which also imports it)
    jobs = _dry_run_jobs(
        a, "src/softmax_ood/analysis/claims/verdict.py", lambda t: t + "\n# edited\n"
    )
    assert {"logitnorm_claims", "logitnorm_report", "kang_claims", "seddik_claims"} <= set(jobs)
    # every study judges its claims with the shared engine (LogitNorm's tables and figures read
    # its premises too); no data preparation, training, evaluation or discriminator reruns
    compute = {"prepare_data", "train", "train_seed", "evaluate", "evaluate_seed"}
    compute |= {"kang_evaluate", "kang_discriminator"}
    compute |= {"kang_grid", "ulmer_run", "ulmer_run_grid"}
    assert not compute & set(jobs), jobs
    # a module no rule imports: nothing
    jobs = _dry_run_jobs(a, "src/softmax_ood/golden.py", lambda t: t + "\n# edited\n")
    assert jobs == {}, jobs


def test_a_study_section_reruns_only_that_studys_analysis(two_runs):
    a = two_runs[0]
    jobs = _dry_run_jobs(
        a,
        "config/smoke.yaml",
        lambda t: t.replace("\nlogitnorm:\n", "\nlogitnorm:\n  alpha: 0.1\n", 1),
    )
    assert jobs and all(rule.startswith("logitnorm_") or rule in RESULTS_RULES for rule in jobs), (
        jobs
    )
    assert "logitnorm_aggregate" in jobs  # its spec is a param; no train/evaluate job reruns


#: the jobs that compute (prepare, train, evaluate, grids, discriminators, the studies' own runs):
#: an edit of a bar that only a claim reads must rerun none of them
COMPUTE = {
    "prepare_data",
    "train",
    "train_seed",
    "evaluate",
    "evaluate_seed",
    "kang_grid",
    "kang_discriminator_select",
    "kang_discriminator",
    "kang_evaluate",
    "kang_adversarial",
    "ulmer_run",
    "ulmer_run_grid",
    "crosspaper_grid",
    "crosspaper_discriminator",
    "crosspaper_evaluate",
}

#: per study, one bar that only its claims read (a value inside the schema's range)
CLAIM_BARS = {
    "kang": {"kang": {"accuracy_drop": 0.06}},
    "ulmer": {"ulmer": {"claims": {"k_margin": 0.006}}},
    "seddik": {"seddik": {"claims": {"max_gap_points": 2.5}}},
    "crosspaper": {"crosspaper": {"claims": {"rate_bar": 0.3}}},
}


@pytest.mark.parametrize("study", sorted(CLAIM_BARS))
def test_a_claim_bar_edit_reruns_that_studys_claims_and_no_computation(two_runs, study):
    """Every shared job receives only the keys it reads (issue 43): a bar read by one study's
    claims reruns its claims (and what reads them), never a grid, training, evaluation or
    discriminator, and no other study's jobs."""
    import yaml

    a = two_runs[0]
    extra = a / f"bar-{study}.yaml"
    extra.write_text(yaml.safe_dump(CLAIM_BARS[study]))
    try:
        proc = snakemake(a, "-n", "--quiet", "rules", *SMOKE, str(extra.name))
    finally:
        extra.unlink()
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-3000:]
    assert "Job stats:" in out, out[-3000:]
    jobs = dict(
        re.findall(r"^(\w+)\s+(\d+)$", out.split("Job stats:")[1].split("Reasons:")[0], re.M)
    )
    jobs.pop("total", None)
    jobs.pop("all", None)
    assert f"{study}_claims" in jobs, jobs
    assert not COMPUTE & set(jobs), jobs
    others = {r for r in jobs if r not in RESULTS_RULES and not r.startswith(f"{study}_")}
    # cross-paper reads every study's claims table (its report cites them)
    assert others <= {"crosspaper_claims", "crosspaper_report"}, jobs


def _dvc_uncommitted(work: Path) -> dict:
    """``dvc data status``'s "uncommitted" section: how the workspace's data/ differs from
    data.dvc (hashed from the files, so it needs no DVC cache: true in a fresh clone)."""
    return json.loads(dvc(work, "data", "status", "--json")).get("uncommitted", {})


def test_dvc_data_status_tells_that_smoke_data_differs(two_runs):
    a = two_runs[0]
    # data.dvc records the default config's data; the smoke config made smaller OOD sets
    assert _dvc_uncommitted(a) == {"modified": ["data/"]}


def test_data_dvc_records_what_the_default_config_prepares(tmp_path):
    work = fresh_copy(tmp_path / "repo")
    assert _dvc_uncommitted(work) == {"deleted": ["data/"]}  # nothing prepared yet
    proc = snakemake(work, "data/fashion", "--cores", "1")
    assert proc.returncode == 0, proc.stderr[-3000:]
    # a fresh clone (no DVC cache) with the default data: matches data.dvc
    assert _dvc_uncommitted(work) == {}
    committed = (work / "data.dvc").read_text()
    dvc(work, "add", "data")
    assert (work / "data.dvc").read_text() == committed
    # one damaged file: DVC says the data differs
    target = work / "data/fashion/id_train_x.npy"
    target.write_bytes(target.read_bytes()[:-10])
    assert _dvc_uncommitted(work) == {"modified": ["data/"]}


def test_unknown_loss_is_one_sentence(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("losses:\n  logitnorm: {loss: logitnrom, tau: 0.04}\n")
    work = fresh_copy(tmp_path / "repo")
    proc = snakemake(work, "-n", "--configfile", str(bad))
    assert proc.returncode != 0
    out = proc.stdout + proc.stderr
    assert "config error: losses.logitnorm.loss is 'logitnrom'; allowed values: ce, " in out, out[
        -2000:
    ]
    assert "Traceback" not in out


def test_nan_loss_stops_the_job_and_leaves_no_output(tmp_path):
    work = fresh_copy(tmp_path / "repo")
    nan = work / "nan.yaml"
    nan.write_text("recipes:\n  sgd: {lr: 1.0e+30, momentum: 0.0, nesterov: false}\n")
    target = "results/train/digits/sgd/mlp/ce/seed0/model.pt"
    proc = snakemake(work, target, "--cores", "1", "--configfile", "config/smoke.yaml", str(nan))
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert re.search(
        r"training digits/sgd/mlp/ce/seed0 stopped: the loss became (nan|inf) at "
        r"epoch \d+, batch \d+ of \d+",
        out,
    ), out[-3000:]
    assert not (work / target).exists()
    assert not (work / "results/train/digits/sgd/mlp/ce/seed0/curve.tsv").exists()


def test_lint_passes(tmp_path):
    proc = snakemake(fresh_copy(tmp_path / "repo"), "--lint")
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert "Congratulations" in proc.stdout + proc.stderr


@pytest.mark.parametrize(
    "configs",
    [
        ["config/default.yaml"],
        ["config/paper.yaml"],
        ["config/paper.yaml", "config/paper_cifar100.yaml"],
        ["config/paper.yaml", "config/paper_kang_mnist.yaml"],
    ],
)
def test_full_configs_build_their_dag(configs, tmp_path):
    proc = snakemake(
        fresh_copy(tmp_path / "repo"), "-n", "--quiet", "rules", "--configfile", *configs
    )
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "train" in out
    if configs[0] == "config/paper.yaml":  # measured epoch times in the config: GPU-hours
        assert re.search(r"estimate: train \d+ jobs, \d+ runs: [\d.]+ GPU-hours", out), out[-2000:]
        assert "not estimated (no measured time): " in out  # named, never guessed


def test_dvc_add_push_pull_round_trip(two_runs, tmp_path):
    b = tmp_path / "repo"  # a copy: the session's run stays as it was made
    shutil.copytree(two_runs[0], b, symlinks=True)

    before = tree_hashes(b / "data")
    dvc(b, "add", "data")
    assert "up to date" in dvc(b, "status", "data.dvc")
    dvc(b, "push")
    assert any((b / "dvc-storage").rglob("*")), "nothing pushed to the local remote"
    shutil.rmtree(b / "data")
    shutil.rmtree(b / ".dvc/cache")
    dvc(b, "pull")
    assert tree_hashes(b / "data") == before


def test_two_runs_from_scratch_give_byte_identical_reports(two_runs):
    """Every file under reports/ (executed notebooks and their HTML) has the golden run's digest,
    except the wall times of Seddik's solver timing: measured anew on every run, they are
    written beside the reports on purpose and shown in none of them (nor in the manifest)."""
    from e2e import differs_from_golden

    a = tree_hashes(two_runs[0] / "reports")
    assert {"logitnorm.ipynb", "logitnorm.html", "seddik.ipynb", "seddik.html"} <= a.keys()
    wall_times = {k for k in a if re.fullmatch(r"seddik_timing_[^/]+\.json", k)}
    assert len(wall_times) == 1, sorted(a)
    compared, different = differs_from_golden(two_runs[0], "reports/")
    records = {k for k in a if k.endswith(".outputs.json")}  # job records: not in the manifest
    assert compared == len(a) - len(wall_times) - len(records) >= 12
    assert not different, f"report files differ from the golden run: {different}"


def test_the_readme_order_works_tests_after_a_run(two_runs):
    """The README's first command (a run) then its second (the tests): tests never depend on
    what the user has built. In a checkout that has run the workflow (results/, data/, logs/,
    .snakemake/ present), the dry-run and config tests still pass."""
    a = two_runs[0]
    assert (a / "results").is_dir() and (a / ".snakemake").is_dir()
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", "not slow"]
        + ["tests/test_config.py", "tests/test_config_files.py", "tests/test_codedeps.py"],
        cwd=a,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert " passed" in proc.stdout
