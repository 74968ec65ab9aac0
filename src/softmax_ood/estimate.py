"""GPU-hours a configuration will take, estimated before it runs.

A paper-scale run is planned on a cluster: ``snakemake -n`` prints how many jobs each rule has,
and the workflow adds, per rule that trains, the GPU-hours those jobs need at a *measured*
per-epoch time: ``cluster.seconds_per_epoch`` (architecture -> seconds per training epoch on the
GPU the jobs will get, measured with ``workflow/bench/bench_gpu.py --arch <name>``). An
architecture without a measured time is named, never guessed. Imports no torch (the Snakefile
calls it at start-up).
"""

from __future__ import annotations

from collections import defaultdict

__all__ = ["RUNTIME_MARGIN", "gpu_hours", "render_gpu_hours", "train_minutes"]

#: A training job's runtime limit over its measured need (epochs x seconds per epoch): a cluster
#: kills a job at its limit, and a node can be slower than the one the time was measured on.
RUNTIME_MARGIN = 1.5


def gpu_hours(runs, recipes: dict, seconds_per_epoch: dict) -> dict:
    """``{"train": {"jobs", "runs", "hours", "unmeasured"}}`` for the training runs ``runs`` (each
    with ``recipe``, ``arch``, ``dataset``, ``loss``; one job per cell, every seed in it):
    ``hours`` = the sum over runs of epochs x seconds per epoch of its architecture;
    ``unmeasured`` = the architectures without a measured time (their runs are not counted)."""
    cells = set()
    hours = 0.0
    counted = 0
    unmeasured: dict[str, int] = defaultdict(int)
    for r in {(r.dataset, r.recipe, r.arch, r.loss, r.seed) for r in runs}:
        dataset, recipe, arch, loss, _ = r
        cells.add((dataset, recipe, arch, loss))
        s = seconds_per_epoch.get(arch)
        if s is None:
            unmeasured[arch] += 1
            continue
        hours += float(recipes[recipe]["epochs"]) * float(s) / 3600.0
        counted += 1
    return {
        "train": {
            "jobs": len(cells),
            "runs": counted,
            "hours": hours,
            "unmeasured": dict(sorted(unmeasured.items())),
        }
    }


def train_minutes(recipe: dict, arch: str, cluster: dict) -> int:
    """The runtime limit in minutes of one seed's training: with a measured
    ``cluster.seconds_per_epoch`` for ``arch``, the recipe's epochs x that time x
    :data:`RUNTIME_MARGIN` (rounded up; the fixed ``minutes_per_seed.train`` if larger); without
    one, ``cluster.minutes_per_seed.train``. A measured time makes the limit follow the
    recipe, so a 200-epoch paper recipe is not killed at a limit sized for the default's."""
    fixed = int(cluster["minutes_per_seed"]["train"])
    s = (cluster.get("seconds_per_epoch") or {}).get(arch)
    if s is None:
        return fixed
    need = float(recipe["epochs"]) * float(s) * RUNTIME_MARGIN / 60.0
    return max(fixed, -int(-need // 1))


def render_gpu_hours(est: dict, seconds_per_epoch: dict) -> str:
    """One line per rule, e.g. ``estimate: train 14 jobs, 70 runs: 77.8 GPU-hours at the
    measured seconds per epoch (wrn-40-2 20 s); not estimated: densenet-bc-100 (5 runs)``."""
    lines = []
    for rule, e in est.items():
        measured = ", ".join(f"{a} {s:g} s" for a, s in sorted(seconds_per_epoch.items()))
        line = (
            f"estimate: {rule} {e['jobs']} jobs, {e['runs']} runs: {e['hours']:.1f} GPU-hours at "
            f"the measured seconds per epoch (cluster.seconds_per_epoch: {measured or 'none'})"
        )
        if e["unmeasured"]:
            line += "; not estimated (no measured time): " + ", ".join(
                f"{a} ({n} runs)" for a, n in e["unmeasured"].items()
            )
        lines.append(line)
    return "\n".join(lines)
