"""The benchmark scripts run, check their own values, and print ratios within their budgets.

The ratios are measured in one run (ours vs a baseline, CPU time, best of repeats), so machine
speed cancels; the bounds here are the scripts' budgets with room for a busy CI machine.
"""

import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]


def _run(*args: str) -> str:
    proc = subprocess.run(
        [sys.executable, *args], cwd=ROOT, capture_output=True, text=True, timeout=600
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


def test_metrics_benchmark_values_identical_and_faster_than_sklearn():
    out = _run("workflow/bench/bench_metrics.py", "--n", "200000", "--repeat", "2")
    assert "values identical" in out
    speedup = float(re.search(r"speedup ([\d.]+)x", out).group(1))
    assert speedup > 1.5, out  # measured 4.5x-6.8x at 1M scores


def test_train_benchmark_ratio_within_budget():
    out = _run("workflow/bench/bench_train.py", "--epochs", "4", "--repeat", "3", "--arch", "mlp")
    ratio = float(re.search(r"-> ratio ([\d.]+) \(target <= ([\d.]+)\)", out).group(1))
    budget = float(re.search(r"target <= ([\d.]+)", out).group(1))
    assert ratio <= budget * 1.2, out


def test_kang_benchmark_runs_and_prints_its_ratio_and_throughput():
    """The grid-evaluation benchmark runs on the shipped config and prints its ratio line and
    the corruption throughput (the ratio itself is a measurement, printed, not asserted)."""
    out = _run("workflow/bench/kang_bench.py", "--arch", "cnn", "--repeat", "1")
    assert re.search(r"grid evaluation \(cnn, ce\): .* -> ratio [\d.]+ \(target <= 1\.2\)", out)
    assert re.search(r"corruption jpeg_compression: [\d,]+ images/s \(8x8\)", out), out


def test_train_benchmark_yardstick_prints_one_number():
    out = _run("workflow/bench/bench_train.py", "--yardstick", "--repeat", "1")
    assert re.search(r"^yardstick: \d+\.\d\d s CPU \(wall [\d.]+ s; bare loop, cnn", out, re.M), out


def test_flops_benchmark_prints_each_architectures_ratio_to_matmul():
    out = _run("workflow/bench/bench_flops.py", "--steps", "2", "--archs", "cnn", "wrn-10-1")
    assert re.search(r"^CPU: .+\(x86_64, [\w-]+\); torch .* kernels \w+", out, re.M), out
    assert re.search(r"^matmul 1024x1024 float32: [\d.]+ GFLOP/s$", out, re.M), out
    for arch in ("cnn", "wrn-10-1"):
        assert re.search(rf"^{arch}\s+\d+ MFLOP/step .* GFLOP/s  = [\d.]+ x matmul$", out, re.M), (
            out
        )


def test_step_benchmark_prints_each_candidates_ratio_bytes_and_verdict():
    """bench_step.py on a tiny setting (8x8 images, batch 16, two steps; no compiled candidate:
    inductor takes about a minute per graph): a ratio line per candidate, the bytes on both
    emulated hosts, a verdict per candidate. The ratios are measurements, printed, not
    asserted; eager's bytes must agree across the hosts (the pin), and the rand_like mask must
    change them (the candidate really ran)."""
    cands = ("eager", "fused-sgd", "rand-mask")
    out = _run(
        *("workflow/bench/bench_step.py", "--image-size", "8", "--batch", "16", "--steps", "2"),
        *("--repeat", "2", "--check-steps", "2", "--no-controls", "--candidates", *cands),
    )
    assert re.search(r"^CPU: .+; wrn-10-1 at 8x8, batch 16, loss ce, recipe ", out, re.M), out
    for name in cands:
        ratio = r"ratio [\d.]+ \([\d.]+-[\d.]+; [\d.]+-[\d.]+\)$"
        line = rf"^  {re.escape(name)} +[\d.]+ ms/step  {ratio}"
        assert re.search(line, out, re.M), out
    assert re.search(r"^  eager +ce \w+ logitnorm \w+  across hosts: identical$", out, re.M), out
    assert re.search(r"^  rand-mask .*across hosts: \w+; vs eager: differ$", out, re.M), out
    for name in cands[1:]:
        verdict = rf"^  {re.escape(name)} +(ADOPT|not adopted): ratio [\d.]+ (>=|<) 1\.3, bytes "
        assert re.search(verdict, out, re.M), out


def test_step_benchmark_ratios_pair_each_round_with_eagers_and_pin_inductor_on_every_host():
    """The ratio of a round is eager's time over the candidate's in that round (not over its
    median): load that hits one round hits both; the pinned inductor options are the same on
    both emulated hosts."""
    sys.path.insert(0, str(ROOT / "workflow/bench"))
    from bench_step import HOSTS, inductor_options, ratios

    r = ratios({"eager": [2.0, 4.0, 2.0], "x": [1.0, 4.0, 1.0]})
    assert r["x"]["median"] == 2.0 and (r["x"]["low"], r["x"]["high"]) == (1.0, 2.0)
    assert r["eager"]["median"] == 1.0 and r["x"]["ms"] == 1000.0
    pinned = {h: inductor_options("pinned", False, h) for h in HOSTS}
    assert pinned["avx2"] == pinned["avx512"]
    assert pinned["avx2"]["cpp.simdlen"] == 256 and pinned["avx2"]["cpp.march"] == "x86-64-v3"


def test_workflow_benchmark_counts_job_seconds_per_rule(tmp_path):
    """The per-rule table reads Snakemake's metadata: one job per (rule, end time)."""
    import base64
    import json

    sys.path.insert(0, str(ROOT / "workflow/bench"))
    from bench_workflow import per_rule

    meta = tmp_path / ".snakemake/metadata"
    meta.mkdir(parents=True)
    recs = {
        "a/model.pt": ("train", 10.0, 20.0),
        "a/curve.tsv": ("train", 10.001, 20.0),  # same job, another output
        "b/model.pt": ("train", 30.0, 35.0),
        "e/summary.json": ("evaluate", 40.0, 41.5),
    }
    for path, (rule, start, end) in recs.items():
        name = base64.urlsafe_b64encode(path.encode()).decode()
        (meta / name).write_text(json.dumps({"rule": rule, "starttime": start, "endtime": end}))
    assert per_rule(tmp_path) == {"train": (2, 15.0), "evaluate": (1, 1.5)}


def test_workflow_benchmark_sums_each_jobs_exact_cpu_per_rule(tmp_path):
    import sys

    sys.path.insert(0, str(ROOT / "workflow/bench"))
    import json

    from bench_workflow import exact_cpu

    for rule, name, cpu, startup, torch in [
        ("train", "a", 100.0, 2.0, True),
        ("train", "b/c", 50.0, 2.0, True),
        ("kang_table", "t", 1.5, 1.0, False),
    ]:
        f = tmp_path / "logs/benchmarks" / rule / f"{name}.cpu.json"
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(
            json.dumps({"rule": rule, "cpu_s": cpu, "startup_s": startup, "torch_imported": torch})
        )
    assert exact_cpu(tmp_path) == {
        "train": {"jobs": 2, "cpu_s": 150.0, "startup_s": 4.0, "torch_jobs": 2},
        "kang_table": {"jobs": 1, "cpu_s": 1.5, "startup_s": 1.0, "torch_jobs": 0},
    }


def test_every_rule_writes_a_benchmark_file_named_after_it():
    import re

    files = list((ROOT / "rules").glob("*.smk")) + list(
        (ROOT / "src/softmax_ood/studies").glob("*/rules.smk")
    )
    anonymous = 0
    for p in files:
        for block in re.split(r"(?m)^(?=[ \t]*rule[ :])", p.read_text())[1:]:
            named = re.match(r"[ \t]*rule (\w+)", block)
            if named is None:  # defined in a loop, named by its name: directive
                anonymous += 1
                name = re.search(r"name:\s*\n\s*(.+)", block).group(1).strip()
                m = re.match(r'f"(.+)"$', name)  # an f-string name: the path holds the same text
                if m:
                    ok = f"logs/benchmarks/{m.group(1)}/" in block
                elif name.isidentifier():  # a loop variable (ulmer/rules.smk): the path uses it
                    ok = f"logs/benchmarks/{{{name}}}/" in block
                else:  # rules/train.smk, rules/evaluate.smk
                    ok = re.search(r'unit_benchmark\("\w+", _unit,', block)
                assert ok, f"{p.name}: the rule named {name} has no benchmark file under its name"
                continue
            name = named.group(1)
            if name == "all":
                continue
            assert f"logs/benchmarks/{name}/" in block, (
                f"{p.name}: rule {name} has no benchmark file"
            )
    assert anonymous >= 6  # study.smk's four, train's and evaluate's (one rule per job unit)


def _bench_workflow():
    sys.path.insert(0, str(ROOT / "workflow/bench"))
    import bench_workflow

    return bench_workflow


def _record() -> dict:
    """A small hand-made record in the current format (numbers chosen to check the arithmetic)."""
    return {
        "format": 2,
        "commit": "abc1234",
        "source": "an existing run in defrun",
        "machine": "Some CPU (x86_64, AVX2)",
        "numerics": "pinned",
        "config": "config/default.yaml",
        "cores": "2",
        "load": {"avg_1min": 3.25, "sampled": "when recorded, after the run"},
        "conditions": "run beside other work",
        "yardstick_s": 2.5,
        "wall_s": 1500.0,
        "wall_measured": "first job start to last job end, from Snakemake's metadata",
        "noop_s": 1.5,
        "noop_first_s": 2.75,
        "jobs": 4,
        "exact_cpu_s": 2500.0,
        "null_job_cpu_s": 0.25,
        "startup_cpu_s": 50.0,
        "fixed_cost_share": 0.0004,
        "wall_over_floor": 1.2,
        "exact_rules": {
            "report": {"jobs": 1, "cpu_s": 500.0, "startup_s": 10.0, "torch_jobs": 0},
            "train": {"jobs": 3, "cpu_s": 2000.0, "startup_s": 40.0, "torch_jobs": 3},
        },
        "flops": {
            "arch": "wrn-10-1",
            "image_size": 28,
            "batch": 128,
            "numerics": "pinned",
            "channels_last": True,
            "gflops": 45.0,
            "matmul_native_gflops": 180.0,
            "matmul_same_numerics_gflops": 40.0,
            "ratio": 0.25,
            "conv_time_share": 0.5,
            "conv_gflops": 90.0,
            "conv_ratio": 0.5,
        },
    }


def test_doc_block_renders_the_budget_the_ratios_and_the_exact_cpu_table():
    """The block of a hand-made record: the whole default vs 30 min, the no-op rerun vs 3 s,
    exact CPU and its floor, wall / floor vs 1.1, the fixed-cost share vs 10 %, the GFLOP/s
    ratio vs 0.5, the conditions, and the per-rule table sorted by CPU with shares."""
    bw = _bench_workflow()
    block = bw.render_doc_block(_record())
    lines = block.splitlines()
    assert lines[0] == bw.DOC_BEGIN and lines[-1] == bw.DOC_END
    assert "at commit `abc1234`" in lines[1] and "--from DIR --record" in lines[1]
    assert "load average 3.2 (when recorded, after the run)" in lines[1]
    assert "conditions: run beside other work" in lines[1]
    assert (
        "**whole default: 25.0 min** (1500 s, " in block and "30-minute budget: ratio 0.83" in block
    )
    assert "**no-op rerun: 1.5 s** vs 3 s: ratio 0.50" in block
    assert "the first start after the run, a dry run that hashes every result once: 2.8 s" in block
    assert "**exact CPU: 2500 s** over 4 jobs" in block and "floor 1250 s on 2 cores" in block
    assert "**wall / floor 1.20** (goal <= 1.1)" in block
    assert "**fixed-cost share: 0.0 %** (goal <= 10 %)" in block and "0.25 CPU s, x 4 jobs" in block
    assert "(its imports included): 50 s = 2.0 %" in block
    assert "**training at 0.25 x matmul** (goal >= 0.5)" in block
    assert "wrn-10-1 at 28x28 (batch 128, numerics pinned, channels_last)" in block
    assert "45.0 GFLOP/s" in block and "native 1024² matmul at 180.0 GFLOP/s" in block
    assert "convolutions take 50 % of the step's operator time at 90.0 GFLOP/s (0.50 x" in block
    table = [line for line in lines if line.startswith("| ") and not line.startswith("| rule")]
    assert table == [
        "| train | 3 | 2000.0 | 40.0 | 80.0 % |",
        "| report | 1 | 500.0 | 10.0 | 20.0 % |",
    ]
    assert "yardsticks" not in block and "88" not in block


def test_doc_block_refuses_a_record_from_before_the_current_format():
    bw = _bench_workflow()
    old = {k: v for k, v in _record().items() if k != "format"}
    with pytest.raises(ValueError, match="predates record format 2"):
        bw.render_doc_block(old)


def test_doc_benchmark_block_is_the_recorded_measurement():
    """The benchmarks page's whole-default times are the workflow benchmark's output (its
    committed record rendered), never retyped: regenerate with
    ``bench_workflow.py --from DIR --record --doc`` (or ``--doc`` alone from the committed
    record)."""
    import json

    bw = _bench_workflow()
    page = bw.DOC_PAGE.read_text()
    assert page.count(bw.DOC_BEGIN) == 1 and page.count(bw.DOC_END) == 1, bw.DOC_PAGE
    block = page[page.index(bw.DOC_BEGIN) : page.index(bw.DOC_END) + len(bw.DOC_END)]
    rec = json.loads(bw.RECORD.read_text())
    if rec.get("format", 1) < bw.RECORD_FORMAT:
        pytest.skip(
            f"the committed record (commit {rec.get('commit')}) predates record format "
            f"{bw.RECORD_FORMAT}: write it with bench_workflow.py --from DIR --record --doc"
        )
    assert block == bw.render_doc_block(rec)
    assert set(rec) >= set(_record())
    assert rec["exact_rules"] and all(r["cpu_s"] >= 0 for r in rec["exact_rules"].values())


def test_doc_benchmark_block_changes_with_the_record():
    """The check above can fail: another measurement renders another block, and rewriting the
    page's block puts exactly that rendering between the markers."""
    bw = _bench_workflow()
    rec = _record()
    other = dict(rec, wall_s=rec["wall_s"] + 60.0)
    assert bw.render_doc_block(other) != bw.render_doc_block(rec)
    page = bw.DOC_PAGE.read_text()
    rewritten = bw.page_with_block(page, bw.render_doc_block(other))
    assert rewritten != page and bw.render_doc_block(other) in rewritten


def test_flops_benchmark_measures_the_configs_main_model_against_native_matmul():
    """``--main``: the config's logitnorm.main_arch at data.image_size, with its recipe's batch,
    numerics and memory format, against the same thread's native matmul."""
    sys.path.insert(0, str(ROOT / "workflow/bench"))
    from bench_flops import load_config, main_model_settings

    cfg = load_config()
    s = main_model_settings(cfg)
    assert s["arch"] == cfg["logitnorm"]["main_arch"] and s["image_size"] == 28
    assert s["batch"] == cfg["recipes"][cfg["logitnorm"]["recipe"]]["batch_size"]
    assert s["numerics"] == "pinned" and s["channels_last"] is True
    out = _run("workflow/bench/bench_flops.py", "--main", "--steps", "1")
    assert re.search(
        rf"^main model {s['arch']} at 28x28 \(batch {s['batch']}, numerics pinned, "
        r"channels_last, kernels AVX2\): [\d.]+ GFLOP/s = [\d.]+ x the same thread's native "
        r"matmul \([\d.]+ GFLOP/s; goal >= 0\.5\).*its convolutions take \d+ % of the "
        r"step's operator time at [\d.]+ GFLOP/s",
        out,
        re.M,
    ), out


# --- scale: the critical path and list-scheduled wall times (workflow/bench/schedule.py) ------


def _schedule():
    sys.path.insert(0, str(ROOT / "workflow/bench"))
    import schedule

    return schedule


def _diamond():
    """prepare (10 s) -> five train seeds (100, 100, 100, 100, 160 s) -> one evaluation each
    (5 s) -> aggregate (20 s) -> report (8 s)."""
    s = _schedule()
    jobs = {"prep": s.Job("prep", "prepare_data", 10.0)}
    for k, cost in enumerate([100.0, 100.0, 100.0, 100.0, 160.0]):
        jobs[f"t{k}"] = s.Job(f"t{k}", "train_seed", cost, deps={"prep"})
        jobs[f"e{k}"] = s.Job(f"e{k}", "evaluate_seed", 5.0, deps={f"t{k}"})
    jobs["agg"] = s.Job("agg", "logitnorm_aggregate", 20.0, deps={f"e{k}" for k in range(5)})
    jobs["rep"] = s.Job("rep", "logitnorm_report", 8.0, deps={"agg"})
    return jobs


def test_critical_path_is_the_longest_chain_of_exact_cpu():
    s = _schedule()
    seconds, chain = s.critical_path(_diamond())
    assert seconds == 10 + 160 + 5 + 20 + 8
    assert chain == ["prep", "t4", "e4", "agg", "rep"]
    assert s.longest_training_bound(_diamond()) == 160 + 5 + 20 + 8


def test_list_schedule_is_the_cpu_sum_on_one_core_and_the_critical_path_on_many():
    s = _schedule()
    jobs = _diamond()
    total = sum(j.cpu_s for j in jobs.values())
    assert s.list_schedule(jobs, 1) == pytest.approx(total)
    assert s.list_schedule(jobs, 5) == pytest.approx(203.0)  # every seed side by side
    assert s.list_schedule(jobs, 64) == pytest.approx(203.0)
    # two cores: the 160 s seed starts first (longest path) beside a 100 s one; the remaining
    # seeds go before the evaluations (longer paths), so core A runs 160 + 100 and core B
    # 100 + 100 + 100; the last seed's evaluation, the aggregate and the report follow
    two = s.list_schedule(jobs, 2)
    assert total / 2 <= two < total
    assert two == pytest.approx(10 + 300 + 5 + 20 + 8)


def test_a_job_holding_several_cores_waits_for_them():
    s = _schedule()
    jobs = {
        "a": s.Job("a", "x", 10.0),
        "b": s.Job("b", "x", 10.0),
        "wide": s.Job("wide", "y", 40.0, threads=2),  # 20 s on two cores
    }
    assert s.list_schedule(jobs, 2) == pytest.approx(30.0)  # wide first (longest), then a, b
    assert s.critical_path(jobs)[0] == 20.0


def test_the_scale_report_reads_a_finished_runs_records(tmp_path):
    """load_jobs joins each job's exact CPU record (its outputs) to Snakemake's metadata (its
    inputs): data -> two train seeds -> an aggregate that reads both models."""
    import json

    from softmax_ood.provenance import snakemake_metadata

    s = _schedule()
    jobs = {
        "prepare_data": (["data/digits"], [], 4.0),
        "train_seed": (["r/seed0/model.pt", "r/seed0/curve.tsv"], ["data/digits"], 50.0),
        "train_seed_1": (["r/seed1/model.pt"], ["data/digits/x.npy"], 70.0),
        "agg": (["t.parquet"], ["r/seed0/model.pt", "r/seed1/model.pt"], 3.0),
    }
    import base64

    for rule, (outs, ins, cpu) in jobs.items():
        f = tmp_path / "logs/benchmarks" / rule / "j.cpu.json"
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(json.dumps({"rule": rule, "cpu_s": cpu, "threads": 1, "outputs": outs}))
        for out in outs:
            enc = base64.urlsafe_b64encode(out.encode()).decode()
            meta = tmp_path / ".snakemake/metadata" / enc
            meta.parent.mkdir(parents=True, exist_ok=True)
            meta.write_text(json.dumps({"rule": rule, "input": ins}))
            assert snakemake_metadata(tmp_path, out)["rule"] == rule
    loaded = s.load_jobs(tmp_path)
    assert {j.rule: sorted(loaded[d].rule for d in j.deps) for j in loaded.values()} == {
        "prepare_data": [],
        "train_seed": ["prepare_data"],
        "train_seed_1": ["prepare_data"],  # a file inside the data folder
        "agg": ["train_seed", "train_seed_1"],
    }
    rep = s.scale_report(loaded)
    assert rep["critical_path_s"] == 4 + 70 + 3
    assert rep["list_schedule_s"]["1"] == 127.0 and rep["list_schedule_s"]["64"] == 77.0
    text = s.render_scale(rep, measured_wall=90.0, measured_cores="2")
    assert "critical path: 77 s over 3 jobs" in text and "(measured: 90 s)" in text


def test_snakemake_metadata_reads_a_long_outputs_record(tmp_path):
    """Snakemake cuts a long base64 record name into folders named "@<254 chars>"
    (snakemake/persistence/file.py); the reader follows the same cut."""
    import base64
    import json

    from softmax_ood.provenance import snakemake_metadata

    rel = "results/" + "x" * 300 + "/model.pt"
    enc = base64.urlsafe_b64encode(rel.encode()).decode()
    parts = [enc[i : i + 254] for i in range(0, len(enc), 254)]
    path = tmp_path / ".snakemake/metadata" / Path(*["@" + p for p in parts[:-1]], parts[-1])
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"rule": "train"}))
    assert snakemake_metadata(tmp_path, rel) == {"rule": "train"}


def test_doc_block_renders_the_scale_part():
    bw = _bench_workflow()
    rec = dict(
        _record(),
        scale={
            "jobs": 4,
            "cpu_s": 2500.0,
            "critical_path_s": 600.0,
            "critical_path": [["train_seed:a/model.pt", 500.0], ["report:r.html", 100.0]],
            "training_bound_s": 600.0,
            "list_schedule_s": {"1": 2500.0, "2": 1300.0, "16": 660.0, "64": 600.0},
        },
    )
    block = bw.render_doc_block(rec)
    assert "**critical path: 600 s** over 2 jobs (train_seed -> report)" in block
    assert "= **1.00** (goal <= 1.2)" in block
    assert "1 cores 41.7 min, 2 cores 21.7 min, 16 cores 11.0 min, 64 cores 10.0 min" in block
    assert "16 cores vs the 15-minute goal: ratio 0.73; 64 cores / critical path = 1.00" in block
    assert "scale: not in this record" in bw.render_doc_block(_record())
