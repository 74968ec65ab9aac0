"""Nothing stale unnoticed: the recorded hashes of what existing results rest on, checked at
the start of every Snakemake run (``Snakefile``), so a file changed with its mtime kept (a
truncated array or checkpoint, a restored backup) is rebuilt instead of "Nothing to be done".

Snakemake decides from modification times; a file whose bytes changed but whose mtime did not
looks up to date. Every result here carries a record of the sha256 of what it was made from:

* ``data/<ds>/meta.json``: ``files`` = the sha256 of every prepared array (the producer's own
  record);
* ``results/eval/.../summary.json``: ``inputs.model_sha256`` (the run's ``model.pt``) and
  ``inputs.data_sha256`` (``data/<ds>``);
* every ``*.prov.json`` sidecar under ``results/`` (tables, frames, figures): ``inputs`` =
  ``{name: {path, sha256}}``;
* every job's outputs record (``*.outputs.json`` under ``results/`` and ``reports/``,
  :func:`softmax_ood.provenance.write_outputs_record`): the sha256 of every file it wrote, so a
  damaged leaf (a table's markdown, a figure, a report, the LaTeX, the audit) is rebuilt too;
  and the record's own sha256, so a damaged record reruns the job that wrote it.

A recorded input is *stale* when it exists, is not newer than the record (if it were newer,
Snakemake reruns the consumer anyway: no check needed) and its sha256 differs from the record;
or when it is missing (Snakemake 9 says "Nothing to be done" when a deleted intermediate's
consumers are up to date). A recorded output is stale when its sha256 differs from what its job
recorded, whatever its mtime (a missing output Snakemake remakes itself). :func:`find_stale` returns those files and :func:`mark` ages what
must rerun: a changed file itself (a prepared-data file: its folder ``data/<ds>``), or, for a
missing one, the consumer whose record names it. Snakemake then sees those outputs older than
their inputs and reruns their jobs and everything made from them. (Not ``--forcerun``: the
Snakefile cannot change the DAG settings, Snakemake 9 hands them to the workflow only after
parsing; and not deleting: a deleted intermediate is exactly what Snakemake overlooks.)

Each distinct file is hashed once per start, or not at all when its stat identity (inode, size,
mtime, ctime) is the one :mod:`softmax_ood.startcache` recorded with its hash: a no-op rerun
reads the records and stats the files. Imports neither torch nor pandas (the Snakefile uses it).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from .provenance import (
    OUTPUTS_SUFFIX,
    inside_trees,
    outputs_record_problem,
    outputs_records,
    path_sha256,
    read_outputs_records,
    record_path,
    refusal,
    snakemake_metadata,
)

__all__ = ["MARK_MTIME", "Stale", "find_stale", "mark"]


MARK_MTIME = 86400.0  # 1970-01-02: older than any input, so Snakemake reruns the producer


@dataclass(frozen=True)
class Stale:
    """A file whose bytes differ from what ``record`` says its consumer was made from, or that
    is missing although a consumer's record names it."""

    path: str  # relative to the workflow folder
    record: str  # the file holding the record
    marks: tuple[str, ...]  # the outputs whose mtime :func:`mark` sets to MARK_MTIME
    missing: bool = False
    kept: bool = True  # its mtime is not newer than the record's (changed with its mtime kept)
    output: bool = False  # the record is its own job's outputs record
    damaged: str | None = None  # ``path`` is an outputs record, not as its job wrote it: why
    refused: str | None = None  # the record ``path`` names this path outside the trees

    def sentence(self) -> str:
        if self.refused is not None:
            return refusal(self.path, self.refused)
        if self.damaged:
            return (
                f"{self.path}, the outputs record of the job that made {self.marks[0]}, "
                f"{self.damaged}; rebuilding {self.marks[0]} and everything made from it"
            )
        if self.missing:
            return (
                f"{self.path} is missing but recorded as an input in {self.record}; rerunning "
                "the job that made it and everything made from it"
            )
        how = (
            "changed with its modification time kept"
            if self.kept
            else "changed after the record was written"
        )
        what = "its job recorded" if self.output else "recorded"
        target = "it" if self.marks[0] == self.path else self.marks[0]
        return (
            f"{self.path} does not match the sha256 {what} in {self.record} ({how}); "
            f"rebuilding {target} and everything made from it"
        )


class _Checker:
    def __init__(self, root: Path, cache=None):
        self.root = root
        self.cache = cache
        self._sha: dict[str, str | None] = {}
        self._mtime: dict[str, float | None] = {}
        self.found: dict[str, Stale] = {}

    def rel(self, path: str | Path) -> str:
        p = Path(path)
        if p.is_absolute():
            for base in (self.root.absolute(), self.root.resolve()):
                try:
                    return p.relative_to(base).as_posix()
                except ValueError:
                    pass
        return p.as_posix()

    def refuse(self, record: str | Path, path) -> None:
        """``record`` names ``path`` outside results/, data/ and reports/: it is ignored."""
        rel = self.rel(record)
        self.found.setdefault(f"\0{rel}", Stale(rel, rel, (), refused=str(path)))

    def confined(self, record: str | Path, paths) -> list[str] | None:
        """``paths`` (as ``record`` names them) relative to the workflow folder, if the record
        and each of them lie inside results/, data/ or reports/ (symlinks resolved,
        :func:`softmax_ood.provenance.record_path`); else None, and the record is refused."""
        rels = []
        for path in [record, *paths]:
            rel = record_path(self.root, path)
            if rel is None:
                self.refuse(record, path)
                return None
            rels.append(rel)
        return rels[1:]

    def sha(self, rel: str) -> str | None:
        if rel not in self._sha:
            p = self.root / rel
            try:
                self._sha[rel] = path_sha256(p, self.cache) if p.exists() else None
            except OSError:
                self._sha[rel] = None
        return self._sha[rel]

    def mtime(self, rel: str) -> float | None:
        """A file's mtime; a folder's newest mtime (itself or any file in it)."""
        if rel not in self._mtime:
            p = self.root / rel
            try:
                t = p.stat().st_mtime
                if p.is_dir():
                    t = max([t, *(f.stat().st_mtime for f in p.rglob("*") if f.is_file())])
            except OSError:
                t = None
            self._mtime[rel] = t
        return self._mtime[rel]

    def compare(self, rel: str, want: str, record: Path, rebuild: str | None = None) -> None:
        """``rel`` must exist and hash to ``want`` unless it is newer than ``record`` (then
        Snakemake reruns the consumer anyway). A missing one is reported too: Snakemake does
        not remake an intermediate file whose consumers are up to date."""
        if rel in self.found:
            return
        t_in, t_rec = self.mtime(rel), self.mtime(self.rel(record))
        if t_rec is None:
            return
        if t_in is None:  # rerun its consumer (the record's file and its same-stem siblings)
            stem = record.name.removesuffix(".prov.json").removesuffix(".json")
            marks = [self.rel(f) for f in sorted(record.parent.glob(stem + ".*"))]
            self.found[rel] = Stale(rel, self.rel(record), tuple(marks), missing=True)
            return
        if t_in > t_rec:
            return
        have = self.sha(rel)
        if have is not None and have != want:
            self.found[rel] = Stale(rel, self.rel(record), (rebuild or rel,))

    def compare_output(self, rel: str, want: str, record: str) -> None:
        """An output must hash to what its job recorded, whatever its mtime (a missing one:
        Snakemake remakes it)."""
        if rel in self.found:
            return
        have = self.sha(rel)
        if have is not None and have != want:
            # the job's end: Snakemake sets its outputs' mtime when it ends, after the record
            # was written; its metadata keeps that time (endtime), else the record's mtime
            t_out, t_end = self.mtime(rel), self.mtime(record)
            end = (snakemake_metadata(self.root, rel) or {}).get("endtime")
            if isinstance(end, (int, float)) and t_end is not None:
                t_end = max(t_end, float(end))
            kept = t_out is not None and t_end is not None and t_out <= t_end + 0.01
            marks = [rel]
            if rel.endswith(".prov.json"):  # a sidecar the rule may not declare: its table too
                table = rel.removesuffix(".prov.json") + ".parquet"
                if self.mtime(table) is not None:
                    marks.append(table)
            self.found[rel] = Stale(rel, record, tuple(marks), kept=kept, output=True)


def _read_json(path: Path):
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None  # an unreadable record is the audit's finding, not a reason to rebuild


def find_stale(root: str | Path = ".", data_dirs=None, cache=None) -> list[Stale]:
    """Every recorded input under ``root`` whose bytes no longer match its record (see the
    module docstring); ``data_dirs`` (default: every ``data/*`` with a ``meta.json``);
    ``cache``: file hashes kept between starts (:mod:`softmax_ood.startcache`; a file whose
    bytes changed always misses it)."""
    root = Path(root)
    c = _Checker(root, cache)
    if data_dirs is None:
        data_dirs = sorted(p.parent for p in (root / "data").glob("*/meta.json"))
    for d in data_dirs:
        d = root / d
        meta = d / "meta.json"
        if c.confined(meta, [d]) is None:
            continue
        meta = _read_json(meta)
        files = meta.get("files") if isinstance(meta, dict) else None
        if not isinstance(files, dict):
            continue
        folder = c.rel(d)
        names = sorted(files.items())
        rels = c.confined(f"{folder}/meta.json", [f"{folder}/{name}" for name, _ in names])
        for rel, (_, want) in zip(rels or [], names if rels else [], strict=True):
            have = c.sha(rel)
            if have is not None and have != want and rel not in c.found:
                t_file, t_meta = c.mtime(rel), c.mtime(f"{folder}/meta.json")
                kept = t_file is not None and t_meta is not None and t_file <= t_meta
                c.found[rel] = Stale(rel, f"{folder}/meta.json", (folder,), kept=kept)
    results = root / "results"
    for summary in sorted(results.glob("eval/**/summary.json")):
        parts = summary.relative_to(root).parts  # results/eval/<ds>/.../seed<k>/summary.json
        model = Path("results", "train", *parts[2:-1], "model.pt").as_posix()
        if c.confined(summary, [model, f"data/{parts[2]}"]) is None:
            continue
        rec = _read_json(summary)
        inputs = rec.get("inputs") if isinstance(rec, dict) else None
        if not isinstance(inputs, dict):
            continue
        if inputs.get("model_sha256"):
            c.compare(model, inputs["model_sha256"], summary)
        if inputs.get("data_sha256") and len(parts) > 2:
            c.compare(f"data/{parts[2]}", inputs["data_sha256"], summary)
    for side in sorted(results.rglob("*.prov.json")):
        if c.confined(side, []) is None:
            continue
        rec = _read_json(side)
        inputs = rec.get("inputs") if isinstance(rec, dict) else None
        if not isinstance(inputs, dict):
            continue
        recorded = [
            (inp["path"], inp["sha256"])
            for inp in inputs.values()
            if isinstance(inp, dict) and isinstance(inp.get("path"), str) and inp.get("sha256")
        ]
        # code (the checkout's src/): Snakemake's own code trigger, not read here
        recorded = [(p, h) for p, h in recorded if record_path(root, p, ("src",)) is None]
        rels = c.confined(side, [p for p, _ in recorded])
        for rel, (_, want) in zip(rels or [], recorded if rels else [], strict=True):
            c.compare(rel, want, side)
    refused: dict[str, str] = {}
    for out, (record, want) in sorted(read_outputs_records(root, refused).items()):
        c.compare_output(out, want, record)
    for record, path in sorted(refused.items()):
        c.refuse(record, path)
    for record in outputs_records(root):  # a damaged record itself: rerun the job that wrote it
        if c.rel(record) in refused:
            continue
        problem = outputs_record_problem(record)
        if problem is None:
            continue
        # the record is named after its job's first output: that file's siblings (same stem)
        stem = record.name.removesuffix(OUTPUTS_SUFFIX)
        marks = [
            c.rel(f)
            for f in sorted(record.parent.glob(stem + ".*"))
            if f.is_file() and f != record and record_path(root, f) is not None
        ]
        if marks:  # none left: Snakemake remakes the job's outputs, and the record with them
            rel = c.rel(record)
            c.found[rel] = Stale(rel, rel, tuple(marks), damaged=problem)
    return list(c.found.values())


def mark(stale: list[Stale], root: str | Path = ".") -> list[str]:
    """Age the outputs each finding names (mtime := :data:`MARK_MTIME`; a folder: itself and
    every file in it), so Snakemake sees them older than their inputs and reruns their jobs
    and everything downstream. The mark persists until the job rewrites them (a dry run marks
    too). Only what lies in results/, data/ or reports/, symlinks resolved, is touched: a path
    outside is skipped, a folder is walked without following links and a link is never
    followed. Returns the paths marked."""
    root = Path(root)
    done: list[str] = []
    for item in stale:
        for rel in item.marks:
            if rel in done or record_path(root, rel) is None:
                continue
            p = root / rel
            targets = [p]
            if p.is_dir() and not p.is_symlink():
                for folder, dirs, files in os.walk(p):  # followlinks=False
                    targets += sorted(Path(folder, n) for n in dirs + files)
            for t in targets:
                if t.is_symlink() or not inside_trees(root, t):
                    continue  # a link stays as it is; what it leads to is not the mark's
                try:
                    os.utime(t, (MARK_MTIME, MARK_MTIME), follow_symlinks=False)
                except OSError:
                    pass
            done.append(rel)
    return done
