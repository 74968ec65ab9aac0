"""Share trained models through DVC: a colleague rebuilds every table, figure and report from
the producer's models without one training, evaluation or discriminator-fitting job.

Producer (after a complete ``snakemake`` run, on a clean, committed checkout)::

    python -m softmax_ood.share push [--configfile config/paper.yaml ...]

Colleague (a fresh ``git clone`` of the producer's commit, with read access to the remote)::

    python -m softmax_ood.share pull [--configfile config/paper.yaml ...] [-- SNAKEMAKE_ARGS]

``push`` asks Snakemake (``--rulegraph``, ``--summary``, with the same config arguments the
workflow ran with) for the outputs of the *compute* rules (:data:`COMPUTE_RULES`: training,
evaluation, discriminator fitting, the studies' own trainings and feature extraction) and of
every rule upstream of them (the data, Kang's shifted images), tracks them with ``dvc add``
(one ``.dvc`` file per folder, e.g. ``results/train.dvc``, ``results/eval.dvc``, ``data.dvc``)
with Snakemake's records of those jobs (``.snakemake/metadata``, copied to
``results/snakemake_records``),
``dvc push``\\ es them to the configured remote (``.dvc/config``: ``core.remote``) and commits the
``.dvc`` files. It refuses when an output it would share is missing or out of date.

``pull`` runs ``dvc pull``, checks what it brought (:func:`pulled_problem`: paths and links
inside results/, data/ and reports/, outputs records intact, pulled files matching them; else
one sentence, the pulled paths removed again, nothing run), gives every pulled file one common modification time (now, i.e.
newer than the freshly cloned code and equal among themselves, so Snakemake's mtime trigger
sees every pulled job as up to date: without it the order in which DVC happens to write the
files decides, e.g. a checkpoint written after its evaluation would rerun the evaluation), and
puts the producer's Snakemake records in place (the consumer's audit checks the same chain;
the params/code/input triggers compare against records made from the same commit and config)
and then runs ``snakemake`` with the given arguments (default ``--cores all``): only the tables,
figures, claims and reports are made. The parse-time
stale check (:mod:`softmax_ood.stale`) re-hashes what the pulled results record and finds the
pulled bytes equal. The rebuilt outputs are byte-identical to the producer's (provenance
records name the code commit, :func:`softmax_ood.provenance.git_info`, which a commit of only
DVC pointer files does not change), except ``reports/seddik_timing_<ds>.json`` (wall times).

Imports neither torch nor pandas.
"""

from __future__ import annotations

import argparse
import base64
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterable, Sequence
from pathlib import Path

from .errors import UserError
from .provenance import metadata_path as snakemake_metadata_path
from .provenance import (
    outputs_record_path,
    outputs_record_problem,
    outputs_records,
    path_sha256,
    read_outputs_records,
    record_path,
    refusal,
)

__all__ = [
    "COMPUTE_RULES",
    "ancestors",
    "main",
    "pull",
    "push",
    "set_mtimes",
    "shared_outputs",
    "tracked_units",
]

# The rules whose jobs a colleague must never have to run: training, evaluation, discriminator
# fitting, the studies' own trainings (Ulmer's networks, Seddik's trained softmax classifiers
# and network features). Everything upstream of them is shared too (see :func:`ancestors`):
# an upstream job that reran would make them out of date.
COMPUTE_RULES = (
    "train",
    "train_seed",  # the same training, one seed per job (config scheduling.per_seed)
    "evaluate",
    "evaluate_seed",
    "kang_discriminator_select",
    "kang_discriminator",
    "kang_evaluate",
    "kang_adversarial",  # Fig. 8: FGSM on every trained classifier
    "ulmer_run",
    "ulmer_run_grid",
    "seddik_frame",
    "seddik_fig5_frame",
    "seddik_features",
    "seddik_replication_frame",  # the trained classifiers of Figs. 2 and 4 on the fresh seeds
)
# top-level folders under which whole sub-folders are tracked; data/ is tracked as one unit
# (data.dvc, which predates this module)
_TOPS = ("results", "reports")
_DATA = "data"

# Snakemake's records of the shared jobs (.snakemake/metadata: rule, params, code, the sha256 of
# small inputs), shared beside the outputs: the colleague's audit then checks the same chain,
# and Snakemake's params/code/input triggers compare against the producer's records
RECORDS = "results/snakemake_records"
_METADATA = ".snakemake/metadata"

_NODE = re.compile(r'^\s*(\d+)\[label = "([^"]+)"')
_EDGE = re.compile(r"^\s*(\d+) -> (\d+)")


class ShareError(UserError):
    """Sharing cannot proceed; the message is one sentence."""


def parse_rulegraph(dot: str) -> dict[str, set[str]]:
    """``rule -> the rules it reads from`` from Snakemake's ``--rulegraph`` dot output."""
    names: dict[str, str] = {}
    deps: dict[str, set[str]] = {}
    for line in dot.splitlines():
        if m := _NODE.match(line):
            names[m[1]] = m[2]
            deps.setdefault(m[2], set())
    for line in dot.splitlines():
        if m := _EDGE.match(line):
            deps[names[m[2]]].add(names[m[1]])
    return deps


def ancestors(deps: dict[str, set[str]], rules: Iterable[str]) -> set[str]:
    """``rules`` (those present in the graph) and every rule upstream of them."""
    todo = [r for r in rules if r in deps]
    seen: set[str] = set()
    while todo:
        r = todo.pop()
        if r not in seen:
            seen.add(r)
            todo.extend(deps[r])
    return seen


def parse_summary(text: str) -> list[dict]:
    """Rows of Snakemake's ``--summary`` table (output_file, date, rule, ..., status, plan)."""
    lines = [ln for ln in text.splitlines() if "\t" in ln]
    if not lines:
        return []
    head = lines[0].split("\t")
    return [dict(zip(head, ln.split("\t"), strict=False)) for ln in lines[1:]]


def tracked_units(files: Iterable[str], root: Path, others: Iterable[str] = ()) -> list[str]:
    """The fewest paths that cover ``files``: the largest folder (below a top-level folder)
    holding none of ``others`` (the outputs of the rules not shared, on disk or not), else the
    file; anything under ``data/`` is ``data``. Files no rule declares (a script's side file)
    ride along with their folder."""
    wanted = {Path(f).as_posix().rstrip("/") for f in files}
    other = [Path(f).as_posix().rstrip("/") for f in others]
    units: set[str] = set()
    cache: dict[str, bool] = {}

    def covered(folder: Path) -> bool:
        key = folder.as_posix()
        if key not in cache:
            cache[key] = (root / folder).is_dir() and not any(
                o == key or o.startswith(key + "/") for o in other
            )
        return cache[key]

    for f in sorted(wanted):
        if Path(f).parts[0] == _DATA:
            units.add(_DATA)
            continue
        unit = Path(f)
        while len(unit.parent.parts) > 1 and covered(unit.parent):
            unit = unit.parent
        units.add(unit.as_posix())
    # drop units inside another unit
    return sorted(u for u in units if not any(u.startswith(v + "/") for v in units if v != u))


def shared_outputs(rows: list[dict], rules: set[str]) -> list[dict]:
    return [r for r in rows if r.get("rule") in rules]


def metadata_path(output: str) -> Path:
    """Where Snakemake keeps its record of ``output`` (relative to ``.snakemake/metadata``)."""
    return snakemake_metadata_path(output)


def copy_records(outputs: Iterable[str], src: Path, dst: Path) -> int:
    """Copy Snakemake's records of ``outputs`` from ``src`` to ``dst`` (metadata layout)."""
    n = 0
    for out in outputs:
        f = src / metadata_path(out)
        if f.is_file():
            (dst / metadata_path(out)).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(f, dst / metadata_path(out))
            n += 1
    return n


def set_mtimes(paths: Iterable[Path], when: float) -> int:
    """Give every file and folder under ``paths`` the modification time ``when``."""
    n = 0
    for p in paths:
        items = [p, *p.rglob("*")] if p.is_dir() else [p]
        for q in items:
            os.utime(q, (when, when), follow_symlinks=False)
            n += 1
    return n


def _run(cmd: Sequence[str], cwd: Path, what: str) -> str:
    proc = subprocess.run(list(cmd), cwd=cwd, capture_output=True, text=True)
    if proc.returncode != 0:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["(no output)"]
        raise ShareError(f"{what} failed ({' '.join(cmd[:4])} ...): {tail[0]}")
    return proc.stdout


def _snakemake(args: Sequence[str]) -> list[str]:
    return [sys.executable, "-m", "snakemake", *args]


def _dvc(args: Sequence[str]) -> list[str]:
    return [sys.executable, "-m", "dvc", *args]


def plan(root: Path, smk_args: Sequence[str]) -> tuple[set[str], list[dict], list[str]]:
    """(the rules to share, their ``--summary`` rows, every other rule's outputs) for the
    workflow at ``root``."""
    dot = _run(_snakemake(["--rulegraph", *smk_args]), root, "snakemake --rulegraph")
    deps = parse_rulegraph(dot)
    rules = ancestors(deps, COMPUTE_RULES)
    rows = parse_summary(_run(_snakemake(["--summary", *smk_args]), root, "snakemake --summary"))
    others = [r["output_file"] for r in rows if r.get("rule") not in rules]
    return rules, shared_outputs(rows, rules), others


def push(root: Path, smk_args: Sequence[str], *, commit: bool = True, remote: str | None = None):
    """Track the compute rules' outputs with DVC, push them, commit the ``.dvc`` files."""
    from .provenance import git_info

    if commit and git_info(root)["dirty"] is not False:
        raise ShareError(
            "the checkout has uncommitted code changes (or is not a git checkout): commit the "
            "code the models were made with first, so a colleague's clone has the same code"
        )
    rules, rows, others = plan(root, smk_args)
    if not rows:
        raise ShareError("the workflow has no training or evaluation outputs to share")
    pending = [r["output_file"] for r in rows if r.get("plan") != "no update"]
    if pending:
        raise ShareError(
            f"{len(pending)} output(s) to share are missing or out of date (first: {pending[0]}); "
            "run the workflow to the end with the same config first"
        )
    outputs = [r["output_file"] for r in rows]
    # each shared job's outputs record (the stale check and the audit compare its outputs with
    # it) rides along: a file tracked on its own would otherwise leave its record behind
    outputs += sorted(
        {
            rec.as_posix()
            for o in outputs
            if (rec := outputs_record_path([o])) is not None and (root / rec).is_file()
        }
    )
    units = tracked_units(outputs, root, others)
    if (root / RECORDS).exists():
        shutil.rmtree(root / RECORDS)
    if copy_records(outputs, root / _METADATA, root / RECORDS):
        units.append(RECORDS)
    paths = [root / u for u in units]
    # dvc add must not change what Snakemake sees: keep every file's modification time
    kept = {
        q: q.stat().st_mtime for p in paths for q in ([p, *p.rglob("*")] if p.is_dir() else [p])
    }
    _run(_dvc(["add", "--no-relink", "-q", *units]), root, "dvc add")
    for q, t in kept.items():
        if q.exists():
            os.utime(q, (t, t), follow_symlinks=False)
    _run(_dvc(["push", "-q", *(["-r", remote] if remote else []), *units]), root, "dvc push")
    pointers = [f"{u}.dvc" for u in units]
    if commit:
        _run(["git", "add", "-f", *pointers], root, "git add")
        staged = _run(["git", "diff", "--cached", "--name-only"], root, "git diff")
        if staged.strip():
            msg = f"DVC: trained models and evaluations ({len(units)} tracked paths)"
            _run(["git", "commit", "-q", "-m", msg, "--", *pointers], root, "git commit")
    print(
        f"share: {len(rows)} outputs of {len(rules)} rules ({', '.join(sorted(rules))}) "
        f"in {len(units)} DVC-tracked paths pushed: {', '.join(units)}"
    )
    return units


def pointer_units(root: Path) -> list[str]:
    """The paths the repository's ``.dvc`` files track (``results/train.dvc`` -> results/train)."""
    out = []
    for p in sorted(root.glob("*.dvc")) + sorted(root.glob("results/**/*.dvc")):
        if p.is_file():  # not the .dvc/ folder
            out.append(p.relative_to(root).as_posix()[: -len(".dvc")])
    return out


def pulled_problem(root: Path, units: Sequence[str]) -> str | None:
    """Why what ``dvc pull`` brought into ``units`` cannot be used (one sentence), else None:
    a unit or a link in it leading out of results/, data/ and reports/, an outputs record
    naming a path outside them (:func:`softmax_ood.provenance.record_path`) or not as its job
    wrote it, a pulled file whose sha256 differs from its outputs record, or a Snakemake record
    of an output outside them."""
    for unit in units:
        if record_path(root, unit) is None:
            return f"the pulled {unit} is or holds a link out of results/, data/ and reports/"
    refused: dict[str, str] = {}
    recorded = read_outputs_records(root, refused)
    pulled = [root / u for u in units]
    for rec, path in sorted(refused.items()):
        return refusal(rec, path)
    for rec in outputs_records(root):
        if any(rec.is_relative_to(u) for u in pulled) and (why := outputs_record_problem(rec)):
            return f"the pulled outputs record {rec.relative_to(root).as_posix()} {why}"
    for out, (rec, want) in sorted(recorded.items()):
        f = root / out
        if any(f.is_relative_to(u) for u in pulled) and f.is_file() and path_sha256(f) != want:
            return f"the pulled {out} does not match the sha256 its job recorded in {rec}"
    records = root / RECORDS
    for f in sorted(records.rglob("*")) if records.is_dir() else []:
        if f.is_file():
            enc = "".join(s.removeprefix("@") for s in f.relative_to(records).parts)
            try:
                out = base64.urlsafe_b64decode(enc).decode()
            except ValueError:
                return f"the pulled {f.relative_to(root).as_posix()} is no Snakemake record"
            if record_path(root, out) is None:
                return refusal(f.relative_to(root).as_posix(), out)
    return None


def pull(root: Path, smk_args: Sequence[str], *, run: bool = True, remote: str | None = None):
    """``dvc pull``, one modification time for every pulled file, then the workflow."""
    units = pointer_units(root)
    if not units:
        raise ShareError(
            "this checkout has no .dvc files; the producer runs `python -m softmax_ood.share "
            "push` and commits them"
        )
    before = {u for u in units if (root / u).exists() or (root / u).is_symlink()}
    _run(_dvc(["pull", "-q", *(["-r", remote] if remote else []), *units]), root, "dvc pull")
    missing = [u for u in units if not (root / u).exists()]
    if missing:
        raise ShareError(f"dvc pull left {missing[0]} missing")
    problem = pulled_problem(root, units)
    if problem is not None:  # what this pull brought is taken away again; nothing else moves
        for u in sorted(set(units) - before):
            p = root / u
            if p.is_dir() and not p.is_symlink():
                shutil.rmtree(p)
            else:
                p.unlink(missing_ok=True)
        raise ShareError(
            f"{problem}; the pulled files were removed again and nothing was run: ask the "
            "producer to push again from a complete run"
        )
    records = root / RECORDS
    if records.is_dir():  # the producer's Snakemake records of the pulled outputs
        shutil.copytree(records, root / _METADATA, dirs_exist_ok=True)
    now = time.time()
    n = set_mtimes([root / u for u in units], now)
    print(f"share: pulled {', '.join(units)} ({n} paths, one modification time)")
    if not run:
        return 0
    args = list(smk_args)
    if not any(a in ("--cores", "-c", "--jobs", "-j") or a.startswith("--cores") for a in args):
        args = ["--cores", "all", *args]
    print("share: " + " ".join(["snakemake", *args]), flush=True)
    return subprocess.run(_snakemake(args), cwd=root).returncode


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m softmax_ood.share",
        description="Share trained models and evaluations through DVC (see the module doc).",
    )
    ap.add_argument("command", choices=["push", "pull"])
    ap.add_argument("--configfile", nargs="+", default=[], help="as given to snakemake")
    ap.add_argument("--remote", default=None, help="DVC remote (default: core.remote)")
    ap.add_argument("--no-commit", action="store_true", help="push: leave the .dvc files")
    ap.add_argument("--no-run", action="store_true", help="pull: do not run the workflow")
    argv = list(sys.argv[1:] if argv is None else argv)
    extra = argv[argv.index("--") + 1 :] if "--" in argv else []
    ns = ap.parse_args(argv[: argv.index("--")] if "--" in argv else argv)
    smk = (["--configfile", *ns.configfile] if ns.configfile else []) + extra
    root = Path.cwd()
    try:
        if ns.command == "push":
            push(root, smk, commit=not ns.no_commit, remote=ns.remote)
            return 0
        return pull(root, smk, run=not ns.no_run, remote=ns.remote)
    except UserError as err:
        print(f"share: {err}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
