"""Projected wall time of a config no run has finished (``config/full.yaml``): its DAG from a
dry run, each job's exact CPU from a finished run of the default where that run has the job,
an estimate measured here for the rest, then ``schedule.py``'s critical path and list schedule.

    nice -n 10 python workflow/bench/project_full.py --from DIR [--configfile config/full.yaml]
        [--steps 10] [--repeat 2]

``DIR`` is a finished run of the default (read only: its ``logs/benchmarks/**/*.cpu.json`` and
Snakemake's metadata, as ``bench_workflow.py --from`` reads them). Each job of the planned DAG
(Snakemake's API, every job as ``--forceall``, read in a process of its own) costs:

- **default**: the exact CPU of the job of DIR that wrote one of its outputs; where the planned
  job reads more results (``results/...`` inputs) than DIR's did (an aggregate over more runs),
  times results read here / there;
- **scaled**: a training or evaluation job of a cell DIR does not have (a new architecture, loss
  or seed): the mean exact CPU per seed of DIR's jobs of the reference cell (the config's
  ``logitnorm.main_arch`` / ``logitnorm.baseline`` under ``logitnorm.recipe``, WRN-10-1/CE on
  the default) times the cell's cost ratio to it, measured in this run: CPU seconds of
  ``--steps`` training steps (the recipe's batch, optimiser and threads, the config's numerics
  and memory format; best of ``--repeat``) for a training job, of one evaluation batch through
  every score the model supports for an evaluation job, each over the reference's;
- **rule mean**: any other job: the mean exact CPU of DIR's jobs of the same rule (a rule
  ``<rule>_replication`` DIR never ran: of ``<rule>``, the same work on the fresh seeds), each
  times results read here / there where the planned job reads more;
- **unknown**: a rule DIR never ran: 0 s, and named in the output.

It prints the method, the measured ratios (with the reference cell's other loss, which DIR also
ran, as a check of the method: its measured ratio beside DIR's job CPU ratio), the CPU by
source, the critical path and the list-scheduled wall for 1, 2, 4, 8, 16 and 64 cores, and the
16-core wall against the 30-minute goal (:data:`GOAL_S`). A projection, not a run: the training
ratio applies to a job's whole CPU (its per-epoch validation and start-up too).
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import time
from pathlib import Path
from statistics import mean

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "workflow/bench"))
sys.path.insert(0, str(ROOT / "workflow"))
from schedule import CORES, Job, load_jobs, render_scale, scale_report  # noqa: E402

GOAL_S = 1800.0  # issue 45: the full config within 30 minutes ...
GOAL_CORES = 16  # ... on 16 cores
KINDS = {"train": ("train", "train_seed"), "evaluate": ("evaluate", "evaluate_seed")}
RUN_PATH = re.compile(
    r"results/(?:train|eval)/(?P<dataset>[^/]+)/(?P<recipe>[^/]+)/(?P<arch>[^/]+)/"
    r"(?P<loss>[^/]+)/seed(?P<seed>\d+)/"
)


# ------------------------------------------------------------------ the planned DAG


def planned_jobs(root: Path, configfiles: list[str]) -> list[dict]:
    """Each job of the DAG ``configfiles`` plan from scratch (every job, as ``--forceall``):
    name (rule and first output, as :func:`schedule.load_jobs` names them), rule, outputs,
    inputs, threads and the names of the jobs it depends on. Jobs without outputs (the target
    rule ``all``) are left out. The Snakefile changes this process's environment: call it in a
    process of its own (:func:`plan`)."""
    from catalog import forced_dag  # workflow/catalog.py

    with forced_dag(root, configfiles, cores=max(CORES)) as dag:

        def name(job) -> str:
            return f"{job.rule.name}:{job.output[0]}"

        return [
            {
                "name": name(job),
                "rule": job.rule.name,
                "outputs": [str(o) for o in job.output],
                "inputs": [str(i) for i in job.input],
                "threads": int(job.threads),
                "deps": sorted(name(d) for d in dag.dependencies[job] if d.output),
            }
            for job in dag.jobs
            if job.output
        ]


def plan(root: Path, configfiles: list[str]) -> list[dict]:
    """:func:`planned_jobs` in a child process."""
    args = [sys.executable, str(Path(__file__).resolve()), "--plan", "--configfile", *configfiles]
    proc = subprocess.run(args, cwd=root, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"project_full: the dry run failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def cell_of(outputs) -> tuple[str, str, str, str] | None:
    """(dataset, recipe, arch, loss) of a training or evaluation job's outputs, else None."""
    for out in outputs:
        m = RUN_PATH.search(str(out))
        if m:
            return m["dataset"], m["recipe"], m["arch"], m["loss"]
    return None


def seeds_of(outputs) -> int:
    """How many seeds a training or evaluation job covers (one per seed, or a whole cell)."""
    return max(len({m["seed"] for o in outputs if (m := RUN_PATH.search(str(o)))}), 1)


def kind_of(rule: str) -> str | None:
    return next((k for k, rules in KINDS.items() if rule in rules), None)


# ------------------------------------------------------------------ the projection


def reference_per_seed(recorded: dict[str, Job], reference: tuple) -> dict[str, float]:
    """Mean exact CPU per seed of the recorded training and evaluation jobs of ``reference``
    ((dataset, recipe, arch, loss)): kind -> seconds."""
    out = {}
    for kind in KINDS:
        per_seed = [
            j.cpu_s / seeds_of(j.outputs)
            for j in recorded.values()
            if kind_of(j.rule) == kind and cell_of(j.outputs) == reference
        ]
        if per_seed:
            out[kind] = mean(per_seed)
    return out


def project(
    planned: list[dict],
    recorded: dict[str, Job],
    recorded_inputs: dict[str, int],
    ratios: dict[str, dict[str, float]],
    reference: tuple,
) -> tuple[dict[str, Job], dict[str, str]]:
    """The planned jobs as :class:`schedule.Job` with their projected CPU, and each job's
    source (``default``, ``default x inputs``, ``scaled``, ``rule mean``, ``unknown``; module
    docstring). ``ratios``: kind -> ``"arch/loss"`` -> cost over the reference cell's;
    ``recorded_inputs``: recorded job name -> how many inputs it read."""
    by_output = {o: j for j in recorded.values() for o in j.outputs}
    rule_jobs: dict[str, list[Job]] = {}
    for j in recorded.values():
        rule_jobs.setdefault(j.rule, []).append(j)
    base = reference_per_seed(recorded, reference)
    jobs, source = {}, {}
    for p in planned:
        cpu, how = _cost(p, by_output, recorded_inputs, rule_jobs, base, ratios)
        jobs[p["name"]] = Job(
            p["name"], p["rule"], cpu, int(p.get("threads") or 1), tuple(p["outputs"])
        )
        source[p["name"]] = how
    for p in planned:
        jobs[p["name"]].deps = {d for d in p["deps"] if d in jobs}
    return jobs, source


def _cost(p, by_output, recorded_inputs, rule_jobs, base, ratios) -> tuple[float, str]:
    """One planned job's CPU seconds and where they come from (:func:`project`)."""
    here = result_inputs(p["inputs"])

    def scaled_by_inputs(rec: Job) -> float:
        there = recorded_inputs.get(rec.name, 0)
        return rec.cpu_s * here / there if there and here > there else rec.cpu_s

    rec = next((by_output[o] for o in p["outputs"] if o in by_output), None)
    if rec is not None:
        cpu = scaled_by_inputs(rec)
        return cpu, "default" if cpu == rec.cpu_s else "default x inputs"
    kind, cell = kind_of(p["rule"]), cell_of(p["outputs"])
    key = cell and f"{cell[2]}/{cell[3]}"
    if kind in base and key in ratios.get(kind, {}):
        return base[kind] * seeds_of(p["outputs"]) * ratios[kind][key], "scaled"
    rule = p["rule"]
    if rule not in rule_jobs and rule.endswith("_replication"):
        rule = rule.removesuffix("_replication")
    if rule in rule_jobs:
        return mean(scaled_by_inputs(j) for j in rule_jobs[rule]), "rule mean"
    return 0.0, "unknown"


def recorded_input_counts(work: Path, recorded: dict[str, Job]) -> dict[str, int]:
    """How many results each recorded job read (Snakemake's metadata of its first output)."""
    from softmax_ood.provenance import snakemake_metadata

    out = {}
    for name, j in recorded.items():
        rec = snakemake_metadata(work, j.outputs[0])
        if isinstance(rec, dict):
            out[name] = result_inputs(rec.get("input") or [])
    return out


def result_inputs(inputs) -> int:
    """How many of a job's inputs are other jobs' results (``results/...``): what grows when
    a job reads more runs; its code files, which change between commits, are not counted."""
    return sum(str(i).startswith("results/") for i in inputs)


# ------------------------------------------------------------------ the measurement


def measure(root: Path, configfiles: list[str], cells: list[str], steps: int, repeat: int):
    """CPU seconds of ``steps`` training steps and of one evaluation batch of each
    ``"arch/loss"`` cell (best of ``repeat``), in a child process (the numerics pin must be
    set before torch loads): kind -> cell -> seconds."""
    args = [sys.executable, str(Path(__file__).resolve()), "--measure", *cells]
    args += ["--steps", str(steps), "--repeat", str(repeat), "--configfile", *configfiles]
    proc = subprocess.run(args, cwd=root, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"project_full: the measurement failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def load_config(root: Path, configfiles: list[str]) -> dict:
    """The validated config: ``root``'s default with ``configfiles`` merged over it."""
    import yaml
    from snakemake.utils import update_config

    from softmax_ood.config import validate_config
    from softmax_ood.studies.registry import registered_studies

    cfg = yaml.safe_load((root / "config/default.yaml").read_text())
    for c in configfiles:
        update_config(cfg, yaml.safe_load((root / c).read_text()) or {})
    schema = root / "workflow/schemas/config.schema.yaml"
    return validate_config(cfg, schema, registered_studies())


def _measure_child(root: Path, configfiles: list[str], cells, steps: int, repeat: int) -> dict:
    """The measurement itself (module docstring), in this process: the config's numerics set
    first, then torch, one model per cell at the data's size with random images."""
    from softmax_ood import numerics

    cfg = load_config(root, configfiles)
    numerics.apply(cfg.get("numerics", "pinned"))
    import torch

    from softmax_ood.config import expanded_losses
    from softmax_ood.studies.registry import registered_studies

    recipe = cfg["recipes"][cfg["logitnorm"]["recipe"]]
    torch.set_num_threads(int(recipe.get("threads") or 1))
    losses = expanded_losses(cfg, registered_studies())
    out: dict[str, dict[str, float]] = {"train": {}, "evaluate": {}}
    for _ in range(repeat):
        for cell in cells:
            arch, loss = cell.split("/", 1)
            train_s, eval_s = _time_cell(cfg, recipe, arch, losses[loss], steps)
            for kind, s in (("train", train_s), ("evaluate", eval_s)):
                out[kind][cell] = min(out[kind].get(cell, float("inf")), s)
    return out


def _time_cell(cfg: dict, recipe: dict, arch: str, loss_cfg: dict, steps: int):
    """(CPU s of ``steps`` training steps, CPU s of one evaluation batch) of one cell."""
    import torch

    from softmax_ood import scores
    from softmax_ood.evaluation import scores_for
    from softmax_ood.experiment import build_run

    size = int(cfg["data"]["image_size"])
    k = len(cfg["data"].get("id_classes") or range(10))
    meta = {"num_classes": k, "channels": 1, "image_size": size}
    torch.manual_seed(0)
    model, loss_fn = build_run(cfg["architectures"][arch], loss_cfg, meta)
    last = bool((cfg.get("compute") or {}).get("channels_last", False))
    fmt = torch.channels_last if last else torch.contiguous_format
    model = model.to(memory_format=fmt)
    opt = torch.optim.SGD(
        model.parameters(),
        lr=float(recipe["lr"]),
        momentum=float(recipe["momentum"]),
        weight_decay=float(recipe["weight_decay"]),
        nesterov=bool(recipe["nesterov"]),
    )
    x = torch.rand(int(recipe["batch_size"]), 1, size, size).contiguous(memory_format=fmt)
    y = torch.randint(0, k, (len(x),))

    def step():
        loss = loss_fn(model(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()

    model.train()
    step()  # warm-up (first-call allocations)
    t = time.process_time()
    for _ in range(steps):
        step()
    train_s = time.process_time() - t
    family = loss_cfg["loss"]
    built = {
        s: sc
        for s, (sc, _) in scores_for(
            model, family, cfg["scores"], cfg.get("score_overrides") or {}
        ).items()
    }
    bs = int(cfg["evaluation"]["batch_size"])
    xe = torch.rand(bs, 1, size, size)
    t = time.process_time()
    feats, logits = scores.forward_batches(model, xe, bs, channels_last=last)
    scores.apply_scores(built, model, xe, batch_size=bs, features=feats, logits=logits)
    return train_s, time.process_time() - t


# ------------------------------------------------------------------ the report


def ratios_of(measured: dict, reference: str) -> dict[str, dict[str, float]]:
    """kind -> cell -> measured seconds over the reference cell's."""
    return {k: {c: s / by[reference] for c, s in by.items()} for k, by in measured.items()}


def render(
    ratios: dict, recorded_ratios: dict, jobs: dict[str, Job], source: dict[str, str], rep: dict
) -> str:
    """The ratios (with DIR's own job CPU ratio where DIR ran the cell), the CPU by source,
    :func:`schedule.render_scale`'s block and the 16-core wall against :data:`GOAL_S`."""
    lines = ["cell cost over the reference cell's (measured here; DIR's job CPU ratio beside):"]
    for cell in sorted(ratios["train"]):
        seen = recorded_ratios.get(cell)
        there = (
            f"   (DIR: train {seen['train']:.2f}, evaluate {seen['evaluate']:.2f})" if seen else ""
        )
        lines.append(
            f"  {cell:<28} train {ratios['train'][cell]:5.2f}   evaluate "
            f"{ratios['evaluate'][cell]:5.2f}{there}"
        )
    lines.append("projected CPU by source:")
    for how in ("default", "default x inputs", "scaled", "rule mean", "unknown"):
        names = [n for n, h in source.items() if h == how]
        if names:
            cpu = sum(jobs[n].cpu_s for n in names)
            rules = sorted({jobs[n].rule for n in names})
            shown = ", ".join(rules[:6]) + (", ..." if len(rules) > 6 else "")
            lines.append(f"  {how:<17} {len(names):4d} jobs {cpu:9.0f} CPU s  ({shown})")
    lines.append(render_scale(rep))
    wall = rep["list_schedule_s"].get(str(GOAL_CORES))
    if wall is not None:
        lines.append(
            f"{GOAL_CORES} cores: {wall / 60:.1f} min vs the {GOAL_S / 60:.0f}-minute goal: "
            f"ratio {wall / GOAL_S:.2f}"
        )
    return "\n".join(lines)


def recorded_ratios_of(recorded: dict[str, Job], reference: tuple, cells) -> dict:
    """For each cell DIR also ran (other than the reference): its per-seed job CPU over the
    reference's, per kind (the check of the measured ratios)."""
    base = reference_per_seed(recorded, reference)
    out = {}
    for cell in cells:
        arch, loss = cell.split("/", 1)
        mine = reference_per_seed(recorded, (*reference[:2], arch, loss))
        if (arch, loss) != reference[2:] and set(mine) == set(base) == set(KINDS):
            out[cell] = {k: mine[k] / base[k] for k in KINDS}
    return out


def _git(path: Path, *args: str) -> str:
    proc = subprocess.run(["git", "-C", str(path), *args], capture_output=True, text=True)
    return proc.stdout.strip() or "unknown"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="project_full.py", description=__doc__.splitlines()[0])
    ap.add_argument("--from", dest="work", type=Path, help="a finished run of the default")
    ap.add_argument("--configfile", nargs="*", default=["config/full.yaml"])
    ap.add_argument("--steps", type=int, default=10, help="training steps timed per cell")
    ap.add_argument("--repeat", type=int, default=2, help="best of this many measurements")
    ap.add_argument("--plan", action="store_true", help="print the planned jobs as JSON")
    ap.add_argument("--measure", nargs="+", metavar="ARCH/LOSS", help="print timings as JSON")
    args = ap.parse_args(argv)
    if args.plan:
        print(json.dumps(planned_jobs(ROOT, args.configfile)))
        return 0
    if args.measure:
        out = _measure_child(ROOT, args.configfile, args.measure, args.steps, args.repeat)
        print(json.dumps(out))
        return 0
    if args.work is None:
        ap.error("--from DIR (a finished run of the default) is required")
    print(projection(args.work, args.configfile, args.steps, args.repeat))
    return 0


def projection(work: Path, configfiles: list[str], steps: int, repeat: int) -> str:
    """Everything :func:`main` prints: where it ran, the method, the projection."""
    import os

    from softmax_ood.numerics import host_description

    cfg, planned = load_config(ROOT, configfiles), plan(ROOT, configfiles)
    ln = cfg["logitnorm"]
    reference = (cfg["data"]["dataset"], ln["recipe"], ln["main_arch"], ln["baseline"])
    ref = f"{reference[2]}/{reference[3]}"
    cells = {ref} | {
        f"{c[2]}/{c[3]}"
        for p in planned
        if kind_of(p["rule"]) and (c := cell_of(p["outputs"])) and c[:2] == reference[:2]
    }
    recorded = load_jobs(work)
    if not recorded:
        raise SystemExit(f"project_full: {work} has no exact CPU records naming their outputs")
    ratios = ratios_of(measure(ROOT, configfiles, sorted(cells), steps, repeat), ref)
    jobs, source = project(
        planned, recorded, recorded_input_counts(work, recorded), ratios, reference
    )
    recipe = cfg["recipes"][ln["recipe"]]
    head = [
        f"Projected by `python workflow/bench/project_full.py --from {work} --configfile "
        f"{' '.join(configfiles)} --steps {steps} --repeat {repeat}` at commit "
        f"`{_git(ROOT, 'rev-parse', '--short', 'HEAD')}`, from the finished default run in "
        f"{work} (commit `{_git(work, 'rev-parse', '--short', 'HEAD')}`, {len(recorded)} jobs "
        f"with exact CPU records), on {host_description()}, numerics "
        f"{cfg.get('numerics', 'pinned')}, load average {os.getloadavg()[0]:.1f}.",
        f"Method: the planned DAG ({len(jobs)} jobs) of a dry run; a job the default run has "
        "(one of its outputs) costs that job's exact CPU (times inputs here / there where it "
        "reads more); a training or evaluation job of a new cell costs the default's mean "
        f"exact CPU per seed of {ref} ({ln['recipe']}) times the cell's cost ratio measured "
        f"now: {steps} training steps (batch {recipe['batch_size']}, the recipe's SGD, "
        f"{recipe.get('threads', 1)} thread) or one evaluation batch of "
        f"{cfg['evaluation']['batch_size']} images through every score the model supports, "
        f"CPU seconds, best of {repeat}, over {ref}'s; any other job costs its rule's mean in "
        "the default run. A projection, not a run.",
    ]
    checks = recorded_ratios_of(recorded, reference, ratios["train"])
    return "\n".join(head) + "\n" + render(ratios, checks, jobs, source, scale_report(jobs))


if __name__ == "__main__":
    sys.exit(main())
