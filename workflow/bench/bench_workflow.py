"""Benchmark: the whole default (every registered study) from scratch, then a no-op rerun, in
machine-independent units.

Copies this checkout (without results/data/logs) to a temporary directory, runs
``snakemake --cores N`` there from scratch, then runs it again (nothing to do). Machines differ
several-fold, so the same run also times a fixed **yardstick**, the bare training loop of
``bench_train.py --yardstick`` (CPU seconds, one thread; measured before and after the
workflow, the mean is used), and prints the whole default in yardsticks against the budget of
88 (600 s on the machine where the yardstick took 6.77 s), the no-op rerun against 10 s, the CPU
model and ISA, the numerics mode, and where the time goes (job-seconds per rule, from
Snakemake's metadata):

    python workflow/bench/bench_workflow.py [--cores 2] [--configfile config/default.yaml]

Prints e.g. ``from scratch: 513.5 s = 75.8 yardsticks of 6.77 s vs budget 88 -> ratio 0.86``.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "src"))
from e2e import fresh_copy  # noqa: E402  (the same copy the end-to-end tests make)

from softmax_ood.numerics import host_description  # noqa: E402

BUDGET_YARDSTICKS = 88
NOOP_BUDGET_S = 10.0


def run(cwd: Path, args: list[str]) -> float:
    t = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "snakemake", *args], cwd=cwd, capture_output=True, text=True
    )
    elapsed = time.perf_counter() - t
    if proc.returncode != 0:
        sys.stderr.write(proc.stdout[-3000:] + proc.stderr[-3000:])
        raise SystemExit(f"snakemake failed in {cwd}")
    return elapsed


def yardstick(repeat: int) -> float:
    """CPU seconds of bench_train.py's bare loop (best of ``repeat``), in a fresh process."""
    proc = subprocess.run(
        [
            sys.executable,
            str(ROOT / "workflow/bench/bench_train.py"),
            "--yardstick",
            "--repeat",
            str(repeat),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    m = re.search(r"yardstick: ([\d.]+) s", proc.stdout)
    if proc.returncode != 0 or not m:
        raise SystemExit(f"the yardstick failed:\n{proc.stdout[-1000:]}{proc.stderr[-2000:]}")
    return float(m.group(1))


def numerics_mode(work: Path, extra: list[str]) -> str:
    """The config's numerics mode as the workflow validated it (default: pinned)."""
    import yaml

    mode = yaml.safe_load((work / "config/default.yaml").read_text()).get("numerics", "pinned")
    for i, a in enumerate(extra):
        if a == "--configfile" and i + 1 < len(extra):
            mode = (yaml.safe_load((work / extra[i + 1]).read_text()) or {}).get("numerics", mode)
    return mode


def per_rule(work: Path) -> dict[str, tuple[int, float]]:
    """``{rule: (jobs, job-seconds)}`` from ``.snakemake/metadata`` (one record per output;
    a job is counted once: its outputs share its rule and end time)."""
    jobs: dict[tuple[str, float], float] = {}  # (rule, end) -> earliest start
    for f in (work / ".snakemake/metadata").rglob("*"):
        if not f.is_file():
            continue
        try:
            rec = json.loads(f.read_text())
        except (OSError, ValueError):
            continue
        if rec.get("starttime") and rec.get("endtime") and rec.get("rule"):
            key = (rec["rule"], rec["endtime"])  # a job's outputs share its end time
            jobs[key] = min(jobs.get(key, rec["starttime"]), rec["starttime"])
    out: dict[str, list] = defaultdict(lambda: [0, 0.0])
    for (rule, end), start in jobs.items():
        out[rule][0] += 1
        out[rule][1] += end - start
    return {r: (n, s) for r, (n, s) in sorted(out.items(), key=lambda kv: -kv[1][1])}


def benchmark_table(work: Path) -> dict[str, tuple[int, float, float]]:
    """``{rule: (jobs, wall s, CPU s)}`` summed over the rules' ``benchmark:`` files
    (``logs/benchmarks/<rule>/...tsv``, written by Snakemake for every job)."""
    out: dict[str, list] = defaultdict(lambda: [0, 0.0, 0.0])
    for f in sorted((work / "logs/benchmarks").glob("*/**/*.tsv")):
        rule = f.relative_to(work / "logs/benchmarks").parts[0]
        lines = f.read_text().splitlines()
        if len(lines) < 2:
            continue
        row = dict(zip(lines[0].split("\t"), lines[-1].split("\t"), strict=False))
        out[rule][0] += 1
        out[rule][1] += float(row.get("s", 0) or 0)
        cpu = row.get("cpu_time", "0")
        out[rule][2] += float(cpu) if cpu not in ("", "NA", "-") else 0.0
    return {r: tuple(v) for r, v in sorted(out.items(), key=lambda kv: -kv[1][1])}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cores", default="2")
    ap.add_argument("--configfile", default=None)
    ap.add_argument("--repeat", type=int, default=3, help="yardstick repeats (best of)")
    ap.add_argument("--keep", action="store_true", help="keep the temporary copy")
    args = ap.parse_args()
    extra = ["--configfile", args.configfile] if args.configfile else []
    tmp = Path(tempfile.mkdtemp(prefix="bench-workflow-"))
    try:
        work = tmp / "repo"
        fresh_copy(work)
        y0 = yardstick(args.repeat)
        scratch = run(work, ["--cores", args.cores, *extra])
        noop = run(work, ["--cores", args.cores, *extra])
        y1 = yardstick(args.repeat)
        y = (y0 + y1) / 2
        units = scratch / y
        print(
            f"machine: {host_description()}; numerics: {numerics_mode(work, extra)}; cores {args.cores}"
        )
        print(
            f"yardstick (bench_train.py --yardstick): {y0:.2f} s before, {y1:.2f} s after -> {y:.2f} s"
        )
        print(
            f"from scratch: {scratch:.1f} s = {units:.1f} yardsticks vs budget {BUDGET_YARDSTICKS} "
            f"-> ratio {units / BUDGET_YARDSTICKS:.2f}"
        )
        print(
            f"no-op rerun:  {noop:.1f} s vs budget {NOOP_BUDGET_S:g} s -> ratio {noop / NOOP_BUDGET_S:.2f}"
        )
        rules = per_rule(work)
        total = sum(s for _, s in rules.values())
        print(
            f"where the time goes ({sum(n for n, _ in rules.values())} jobs, {total:.0f} job-seconds):"
        )
        for rule, (n, s) in rules.items():
            print(f"  {rule:<24} {n:4d} jobs  {s:8.1f} s  {100 * s / total:5.1f} %")
        bench = benchmark_table(work)
        print("per rule from the benchmark files (wall and CPU seconds, summed over jobs):")
        print(f"  {'rule':<26} {'jobs':>5} {'wall s':>9} {'CPU s':>9}")
        for rule, (n, w, c) in bench.items():
            print(f"  {rule:<26} {n:5d} {w:9.1f} {c:9.1f}")
    finally:
        if args.keep:
            print(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
