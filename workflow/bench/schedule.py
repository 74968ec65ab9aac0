"""How a finished run's jobs would spread over more cores: its DAG with each job's exact CPU, the
critical path, and list-scheduled wall times (the scale part of ``bench_workflow.py``).

Jobs and their order come from Snakemake's metadata of a finished run (``.snakemake/metadata``:
one record per output, naming its rule, its inputs and its job's end time); each job's cost is its
own exact CPU record (``logs/benchmarks/<rule>/....cpu.json``, :func:`softmax_ood.cli.write_job_cpu`,
which names the job's outputs). A job's duration on a free core is its CPU seconds over its
threads (every job here is CPU-bound; a job with ``threads`` > 1 holds that many cores).

The projection is a list schedule: whenever cores are free, the ready job with the longest path
to the end of the DAG (its *bottom level*, itself included) starts; ties by name. It is what a
scheduler that knows every job's cost would do, which Snakemake approximates with the rules'
``priority`` (the per-seed training jobs, the longest chains, start first). It ignores start-up
and file-system latency between jobs, which the measured 2-core wall includes.
"""

from __future__ import annotations

import heapq
import json
from dataclasses import dataclass, field
from pathlib import Path

from softmax_ood.provenance import snakemake_metadata

CORES = (1, 2, 4, 8, 16, 64)


@dataclass
class Job:
    name: str  # rule and first output
    rule: str
    cpu_s: float
    threads: int = 1
    outputs: tuple[str, ...] = ()
    deps: set[str] = field(default_factory=set)

    @property
    def seconds(self) -> float:
        return self.cpu_s / max(self.threads, 1)


def _read(path: Path):
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def load_jobs(work: str | Path) -> dict[str, Job]:
    """The finished run in ``work`` as ``{name: Job}`` with dependencies (a job depends on the
    jobs that wrote its inputs). Jobs without an exact CPU record naming their outputs (the
    target rule ``all``, records written before outputs were recorded) are left out; their
    dependents then depend on what they depended on."""
    work = Path(work)
    cpu_by_output: dict[str, dict] = {}
    for f in sorted((work / "logs/benchmarks").glob("**/*.cpu.json")):
        rec = _read(f)
        if isinstance(rec, dict) and isinstance(rec.get("outputs"), list) and rec["outputs"]:
            for out in rec["outputs"]:
                cpu_by_output[str(out)] = rec
    jobs: dict[str, Job] = {}
    producer: dict[str, str] = {}
    inputs: dict[str, set[str]] = {}
    for out, rec in cpu_by_output.items():
        name = f"{rec['rule']}:{rec['outputs'][0]}"
        if name not in jobs:
            jobs[name] = Job(
                name,
                rec["rule"],
                float(rec.get("cpu_s", 0.0)),
                int(rec.get("threads") or 1),
                tuple(rec["outputs"]),
            )
            inputs[name] = set()
        producer[out] = name
    for name, job in jobs.items():
        for out in job.outputs:
            rec = snakemake_metadata(work, out)
            if isinstance(rec, dict):
                inputs[name].update(str(i) for i in rec.get("input") or [])
    for name, job in jobs.items():
        for i in inputs[name]:
            p = producer.get(i) or _folder_producer(i, producer)
            if p and p != name:
                job.deps.add(p)
    return jobs


def _folder_producer(path: str, producer: dict[str, str]) -> str | None:
    """The job whose output is a folder holding ``path`` (``data/<ds>`` read as a file in it)."""
    for out, name in producer.items():
        if path.startswith(out.rstrip("/") + "/"):
            return name
    return None


def bottom_levels(jobs: dict[str, Job]) -> dict[str, float]:
    """Each job's longest path to the end of the DAG, itself included (seconds)."""
    children: dict[str, list[str]] = {n: [] for n in jobs}
    for n, j in jobs.items():
        for d in j.deps:
            children[d].append(n)
    level: dict[str, float] = {}
    for n in _topological(jobs)[::-1]:
        level[n] = jobs[n].seconds + max((level[c] for c in children[n]), default=0.0)
    return level


def _topological(jobs: dict[str, Job]) -> list[str]:
    order, seen, temp = [], set(), set()

    def visit(n: str) -> None:
        if n in seen:
            return
        if n in temp:
            raise ValueError(f"the run's jobs form a cycle at {n}")
        temp.add(n)
        for d in sorted(jobs[n].deps):
            visit(d)
        temp.discard(n)
        seen.add(n)
        order.append(n)

    for n in sorted(jobs):
        visit(n)
    return order


def critical_path(jobs: dict[str, Job]) -> tuple[float, list[str]]:
    """The longest chain of dependent jobs: ``(seconds, [job names from first to last])``."""
    if not jobs:
        return 0.0, []
    top: dict[str, float] = {}
    best_dep: dict[str, str | None] = {}
    for n in _topological(jobs):
        deps = sorted(jobs[n].deps, key=lambda d: (-top[d], d))
        best_dep[n] = deps[0] if deps else None
        top[n] = jobs[n].seconds + (top[deps[0]] if deps else 0.0)
    end = max(top, key=lambda n: (top[n], n))
    chain, n = [], end
    while n is not None:
        chain.append(n)
        n = best_dep[n]
    return top[end], chain[::-1]


def list_schedule(jobs: dict[str, Job], cores: int) -> float:
    """Wall seconds of the list schedule (module docstring) on ``cores`` cores."""
    level = bottom_levels(jobs)
    waiting = {n: set(j.deps) for n, j in jobs.items()}
    children: dict[str, list[str]] = {n: [] for n in jobs}
    for n, j in jobs.items():
        for d in j.deps:
            children[d].append(n)
    ready = [(-level[n], n) for n, d in waiting.items() if not d]
    heapq.heapify(ready)
    running: list[tuple[float, str]] = []
    now, free, done = 0.0, cores, 0
    while done < len(jobs):
        blocked = []
        while ready:
            prio, n = heapq.heappop(ready)
            need = min(jobs[n].threads, cores)
            if need <= free:
                free -= need
                heapq.heappush(running, (now + jobs[n].seconds, n))
            else:
                blocked.append((prio, n))
        for b in blocked:
            heapq.heappush(ready, b)
        if not running:
            raise ValueError("no job can run: the DAG has unmet dependencies")
        now, n = heapq.heappop(running)
        free += min(jobs[n].threads, cores)
        done += 1
        for c in children[n]:
            waiting[c].discard(n)
            if not waiting[c]:
                heapq.heappush(ready, (-level[c], c))
    return now


def longest_training_bound(jobs: dict[str, Job], train_rules=("train", "train_seed")) -> float:
    """The issue's yardstick for the critical path: the longest training job plus the longest
    chain after it (its evaluation and what follows), over every training job."""
    level = bottom_levels(jobs)
    trains = [n for n, j in jobs.items() if j.rule in train_rules]
    return max((level[n] for n in trains), default=0.0)


def scale_report(jobs: dict[str, Job], cores=CORES) -> dict:
    """What the benchmark prints and records: the critical path, its jobs, the training bound
    and the list-scheduled wall time per core count."""
    cp, chain = critical_path(jobs)
    return {
        "jobs": len(jobs),
        "cpu_s": round(sum(j.cpu_s for j in jobs.values()), 1),
        "critical_path_s": round(cp, 1),
        "critical_path": [[n, round(jobs[n].seconds, 1)] for n in chain],
        "training_bound_s": round(longest_training_bound(jobs), 1),
        "list_schedule_s": {str(c): round(list_schedule(jobs, c), 1) for c in cores},
    }


def render_scale(rep: dict, measured_wall: float | None = None, measured_cores=None) -> str:
    lines = [
        f"critical path: {rep['critical_path_s']:.0f} s over {len(rep['critical_path'])} jobs "
        f"(of {rep['jobs']}; {rep['cpu_s']:.0f} CPU s in all):"
    ]
    lines += [f"  {s:8.1f} s  {n}" for n, s in rep["critical_path"]]
    if rep["training_bound_s"]:
        lines.append(
            f"critical path / (longest training job + the longest chain after it, "
            f"{rep['training_bound_s']:.0f} s) = "
            f"{rep['critical_path_s'] / rep['training_bound_s']:.2f} (goal <= 1.2)"
        )
    lines.append("list-scheduled wall time (exact CPU per job, longest path first):")
    for c, s in rep["list_schedule_s"].items():
        extra = ""
        if measured_wall and str(measured_cores) == c:
            extra = f"   (measured: {measured_wall:.0f} s)"
        lines.append(
            f"  {c:>3} cores: {s:8.0f} s = {s / 60:5.1f} min   / critical path = "
            f"{s / rep['critical_path_s']:.2f}{extra}"
            if rep["critical_path_s"]
            else f"  {c:>3} cores: {s:8.0f} s{extra}"
        )
    return "\n".join(lines)
