"""Smoke-config jobs through SLURM: they succeed, and their outputs are byte-identical to a
local run's.

Needs a SLURM cluster with a usable partition ``debug`` (``workflow/slurm/start_local_cluster.sh``
makes a one-node one on this machine) and ``snakemake-executor-plugin-slurm``. Skipped unless

* ``SOFTMAX_OOD_SLURM=1``: the test starts the local cluster itself (root, Debian; fails, not
  skips, if it cannot), or
* ``sinfo`` answers and partition ``debug`` has a usable node (e.g. started beforehand).

``SOFTMAX_OOD_SLURM=0`` always skips. The SLURM run is compared with the golden manifest (a local
smoke run's digests under the pinned numerics, which ``tests/test_golden.py`` checks a fresh local
run against), so no second smoke run is paid for here; each SLURM job pays for two Snakemake
start-ups, so the run through SLURM is one representative sub-DAG of the smoke config, not all
of it (see :data:`SUBDAG`).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

sys.path.insert(0, str(Path(__file__).parent))

from e2e import IGNORE  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
START = ROOT / "workflow/slurm/start_local_cluster.sh"
PARTITION = "debug"
SMOKE = ["--configfile", "config/smoke.yaml"]
# The sub-DAG run through SLURM: every kind of job the workflow has, once. Data preparation,
# two training cells (the smoke config's sgd/cnn CE and LogitNorm networks), the core evaluation
# of one of them, and one whole study on top of both: the cross-paper study, whose jobs call the
# other studies' code (Kang's shift grid and discriminator, Seddik's solver) and then make its
# claims, tables, figures (the shared study table and figure rules), departures and report
# notebook. 19 jobs; the whole smoke DAG is 119 (each through sbatch costs two Snakemake
# start-ups, ~6 s), and the byte-for-byte comparison of every one of its files with the golden
# manifest is already made locally by tests/test_golden.py.
SUBDAG = [
    "reports/crosspaper.html",
    "results/crosspaper/digits/departures.md",
    "results/eval/digits/sgd/cnn/ce/seed0/summary.json",
]
# the golden manifest's entries the sub-DAG makes: every file under these folders except the
# LaTeX of the cross-paper tables (made by results_latex, the whole results section's rule)
SUBDAG_FILES = (
    "data/digits/",
    "results/train/digits/sgd/cnn/ce/",
    "results/train/digits/sgd/cnn/logitnorm/",
    "results/eval/digits/sgd/cnn/ce/",
    "results/crosspaper/digits/",
    "reports/crosspaper.",
)
SUBDAG_NOT = ("results/crosspaper/digits/latex/",)
# What a cluster without accounting (slurmdbd) needs on top of profiles/slurm: `sacct` cannot
# answer there, so poll with squeue (finished jobs stay listed for MinJobAge=300 s); the short
# poll intervals only make the run faster. No account is needed; the partition is the cluster's
# default (`debug*` in sinfo), which the executor picks up itself.
SLURM_ARGS = [
    "--workflow-profile",
    "profiles/slurm",
    "--slurm-status-command",
    "squeue",
    "--slurm-init-seconds-before-status-checks",
    "2",
    "--seconds-between-status-checks",
    "2",
]
TIMEOUT = 1200


def _usable_nodes() -> bool:
    if shutil.which("sinfo") is None:
        return False
    try:
        out = subprocess.run(
            ["sinfo", "-h", "-p", PARTITION, "-o", "%T"],
            capture_output=True,
            text=True,
            timeout=5,  # a live controller answers at once; a dead one takes ~10 s
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    states = out.stdout.split() if out.returncode == 0 else []
    # "idle*" etc. (trailing *) means the node does not respond: not usable
    return any(s in {"idle", "mixed", "allocated", "completing"} for s in states)


@pytest.fixture(scope="module")
def slurm_cluster():
    flag = os.environ.get("SOFTMAX_OOD_SLURM", "")
    if flag == "0":
        pytest.skip("SOFTMAX_OOD_SLURM=0")
    started = False
    if not _usable_nodes():
        if flag != "1":
            pytest.skip(
                f"no SLURM cluster with a usable partition '{PARTITION}' (sinfo); start one "
                f"with `bash {START.relative_to(ROOT)}` or set SOFTMAX_OOD_SLURM=1"
            )
        proc = subprocess.run(["bash", str(START)], capture_output=True, text=True, timeout=900)
        if proc.returncode != 0 or not _usable_nodes():
            pytest.fail(
                "SOFTMAX_OOD_SLURM=1 but the local SLURM cluster did not start:\n"
                + proc.stdout[-3000:]
                + proc.stderr[-3000:]
            )
        started = True
    try:
        import snakemake_executor_plugin_slurm  # noqa: F401
    except ImportError:
        msg = "snakemake-executor-plugin-slurm is not installed (pip install -r requirements.txt)"
        if flag == "1":
            pytest.fail(msg)
        pytest.skip(msg)
    yield
    if started:  # leave a cluster we did not start alone
        subprocess.run(["bash", str(START), "stop"], capture_output=True, timeout=120)


def _snakemake(cwd: Path, *args: str) -> subprocess.Popen:
    env = {**os.environ, "PYTHONHASHSEED": "0", "OMP_NUM_THREADS": "1"}
    env.pop("SLURM_JOB_ID", None)
    log = open(cwd / "snakemake-test.log", "w")  # the child inherits it; closed on exit
    return subprocess.Popen(
        [sys.executable, "-m", "snakemake", *args, *SMOKE],
        cwd=cwd,
        stdout=log,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
    )


def _wait(proc: subprocess.Popen, cwd: Path, what: str) -> None:
    try:
        rc = proc.wait(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        proc.terminate()  # Snakemake cancels its SLURM jobs (scancel) on SIGTERM
        proc.wait(timeout=120)
        rc = "timeout"
    log = (cwd / "snakemake-test.log").read_text()
    assert rc == 0, f"{what} run failed ({rc}):\n{log[-6000:]}"


@pytest.mark.slurm
@pytest.mark.slow
def test_smoke_on_slurm_matches_local_run_byte_for_byte(slurm_cluster, tmp_path):
    """Jobs run through sbatch reproduce a local run's bytes: the smoke config's :data:`SUBDAG`
    (data, two training cells, an evaluation, the cross-paper study to its report; every job
    submitted to SLURM) makes exactly the golden manifest's entries for those files, each with
    its golden digest. The manifest holds a local smoke run's digests under the pinned numerics
    (``tests/test_golden.py`` checks a fresh local run against all 498 of them), so the SLURM
    jobs' outputs are byte-identical to a local run's without a second run here. A sub-DAG
    suffices: what SLURM changes (the job runs on a node, in its own Snakemake, started by
    sbatch, its outputs checked by the submitting Snakemake) is the same for every rule, and it
    holds every kind of job (data, training, evaluation, a study's analysis, tables, figures,
    claims, notebook report), each on inputs made by other SLURM jobs."""
    from softmax_ood import golden

    on_slurm = tmp_path / "slurm" / "repo"
    shutil.copytree(ROOT, on_slurm, ignore=IGNORE, symlinks=True)
    _wait(_snakemake(on_slurm, *SUBDAG, *SLURM_ARGS), on_slurm, "SLURM")

    log = (on_slurm / "snakemake-test.log").read_text()
    steps = re.search(r"(\d+) of \1 steps \(100%\) done", log)
    assert steps, log[-3000:]
    submitted = re.findall(r"submitted with SLURM jobid (\d+)", log)
    assert len(submitted) == int(steps[1]) >= 19, (steps[0], len(submitted))  # all via sbatch
    manifest = golden.load()
    expected = {
        f: d
        for f, d in manifest["files"].items()
        if f.startswith(SUBDAG_FILES) and not f.startswith(SUBDAG_NOT)
    }
    assert len(expected) > 60 and (on_slurm / "reports/crosspaper.html").is_file()
    problems = golden.compare(on_slurm, {**manifest, "files": expected})
    assert not problems, (
        f"{len(problems)} file(s) of the SLURM run differ from a local run's: {problems[:3]}"
    )


# --- what the jobs ask the cluster for (config cluster: and device), read back from SLURM --------

CELL = "results/train/digits/kang/cnn/ce"
# device cuda, partitions and runtimes from the config; the cell's train job then asks for a GPU
CLUSTER_CONFIG = """\
device: cuda
cluster:
  partition: debug
  gpu_partition: gpu
  minutes_per_seed: {train: 7}
  runtime: {prepare_data: 5}
"""


def _scontrol(jobid: str) -> dict[str, str]:
    out = subprocess.run(
        ["scontrol", "-d", "show", "job", jobid], capture_output=True, text=True, timeout=30
    ).stdout
    return dict(kv.split("=", 1) for kv in out.split() if "=" in kv)


@pytest.mark.slurm
@pytest.mark.slow
@pytest.mark.parametrize("unit", ["cell", "seed"])
def test_jobs_request_the_config_partitions_runtimes_and_gpus(slurm_cluster, tmp_path, unit):
    """Two jobs through sbatch (prepare_data, then one training job with device cuda): SLURM
    records each with the partition and time limit the config sets and, for training, one GPU
    (``--gpus=1`` from the rule's ``gpu`` resource). The local cluster's GPU is a /dev/null
    gres, so the train job then stops with the pipeline's no-GPU sentence: the job really ran
    the cuda config on the node. ``unit``: the cell's job trains every seed (rule train, time
    limit per seed x seeds), or its recipe is in scheduling.per_seed (rule train_seed: one job
    per seed, each with its own GPU and one seed's time limit). About a minute each."""
    from e2e import fresh_copy

    work = fresh_copy(tmp_path / "repo")
    per_seed = "scheduling: {per_seed: [kang]}\n" if unit == "seed" else ""
    (work / "cluster.yaml").write_text(CLUSTER_CONFIG + per_seed)
    seeds = yaml.safe_load((work / "config/smoke.yaml").read_text()).get("seeds")
    n_seeds = len(seeds) if isinstance(seeds, list) else int(seeds)
    rule_name = "train" if unit == "cell" else "train_seed"
    if unit == "seed":
        n_seeds = 1  # the job runs one seed
    env = {**os.environ, "PYTHONHASHSEED": "0", "OMP_NUM_THREADS": "1"}
    env.pop("SLURM_JOB_ID", None)
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "snakemake",
            f"{CELL}/seed0/model.pt",
            *SLURM_ARGS,
            *SMOKE,
            "cluster.yaml",
        ],
        cwd=work,
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )
    log = proc.stdout + proc.stderr
    assert proc.returncode != 0, "the train job cannot succeed without a GPU:\n" + log[-3000:]
    ids = re.findall(r"submitted with SLURM jobid (\d+)", log)
    assert len(ids) == 2, log[-4000:]
    jobs = {}
    for jobid in ids:
        info = _scontrol(jobid)
        rule = re.match(r"rule_([a-z_]+?)(_wildcards|$)", info.get("Comment", ""))
        assert rule, info
        jobs[rule[1]] = info
    assert set(jobs) == {"prepare_data", rule_name}, sorted(jobs)
    prep, train = jobs["prepare_data"], jobs[rule_name]
    assert prep["Partition"] == "debug" and prep["TimeLimit"] == "00:05:00"
    assert "gpu" not in prep.get("TresPerJob", "") + prep.get("TresPerNode", "")
    assert train["Partition"] == "gpu"
    assert train["TimeLimit"] == f"00:{7 * n_seeds:02d}:00"  # minutes per seed x seeds
    assert "gres:gpu:1" in train.get("TresPerJob", "").replace("/", ":"), train
    assert train.get("JOB_GRES") == "gpu:1", train  # granted, not only asked for
    assert prep.get("JOB_GRES") in (None, "(null)"), prep
    log_name = "ce.log" if unit == "cell" else "ce/seed0.log"
    train_log = (work / "logs/train/digits/kang/cnn" / log_name).read_text()
    assert "asks for device 'cuda' but torch sees no CUDA GPU" in train_log


# --- start-up without a controller, and the dpkg lock -------------------------------------------

FAKE_TOOL = """#!/usr/bin/env bash
echo "$(basename "$0") $*" >> "{log}"
exit 1
"""
SLURM_TOOLS = ("sinfo", "squeue", "scontrol", "sbatch", "sacct", "scancel", "srun")
# snakemake-executor-plugin-slurm runs this when Snakemake imports it (every start-up, to
# word the --slurm-status-command help); with a dead controller it is the ~9 s wait. It runs
# before any profile or Snakefile is read, so the workflow cannot skip it.
PLUGIN_IMPORT_PROBE = "scontrol show config"


def _fake_slurm_tools(bin_dir: Path, log: Path) -> dict:
    bin_dir.mkdir()
    for tool in SLURM_TOOLS:
        f = bin_dir / tool
        f.write_text(FAKE_TOOL.format(log=log))
        f.chmod(0o755)
    return {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "PYTHONHASHSEED": "0"}


@pytest.mark.slow
def test_a_local_run_calls_no_slurm_tool(tmp_path):
    """A plain (local) dry run never submits, polls or queries SLURM: the workflow, its default
    profile and Snakefile call no SLURM tool; only the executor plugin's import probe runs."""
    from e2e import fresh_copy

    work = fresh_copy(tmp_path / "repo")
    log = tmp_path / "calls.log"
    env = _fake_slurm_tools(tmp_path / "bin", log)
    proc = subprocess.run(
        [sys.executable, "-m", "snakemake", "-n", *SMOKE],
        cwd=work,
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    calls = log.read_text().splitlines() if log.exists() else []
    assert [c for c in calls if c != PLUGIN_IMPORT_PROBE] == []


def test_local_cluster_script_waits_for_the_dpkg_lock(tmp_path):
    """apt-get failing with the dpkg lock held is retried until it succeeds, not a failure."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    count = tmp_path / "count"
    (bin_dir / "apt-get").write_text(
        f"""#!/usr/bin/env bash
n=$(( $(cat {count} 2>/dev/null || echo 0) + 1 )); echo $n > {count}
echo "apt-get $*" >> {tmp_path}/apt.log
if (( n <= 2 )); then
  echo "E: Could not get lock /var/lib/dpkg/lock-frontend. It is held by process 4242 (apt-get)" >&2
  exit 100
fi
"""
    )
    (bin_dir / "apt-get").chmod(0o755)
    script = f"source {START} && SLURM_LOCAL_APT_POLL=0.1 apt_locked install -y munge && echo DONE"
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"}
    proc = subprocess.run(
        ["bash", "-c", script], capture_output=True, text=True, env=env, timeout=60
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "DONE" in proc.stdout and "waiting" in proc.stdout
    calls = (tmp_path / "apt.log").read_text().splitlines()
    assert len(calls) == 3 and all("DPkg::Lock::Timeout=" in c for c in calls)


def test_local_cluster_script_still_fails_on_other_apt_errors(tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "apt-get").write_text(
        "#!/usr/bin/env bash\necho 'E: Unable to locate package slurmd' >&2\nexit 100\n"
    )
    (bin_dir / "apt-get").chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"}
    proc = subprocess.run(
        ["bash", "-c", f"source {START} && apt_locked install -y slurmd"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert proc.returncode == 100 and "Unable to locate package" in proc.stderr
