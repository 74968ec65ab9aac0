"""Provenance audit: a result's chain back to the raw data, with every recorded hash checked.

    python3 -m softmax_ood.audit results/logitnorm/fashion/tables/table1.parquet

Given any file under ``results/`` or ``reports/`` (or ``data/``), prints what made it — rule,
script, the library modules the script imports (:func:`softmax_ood.codedeps.code_inputs`), git
commit, config sha256, seeds — and the sha256 of each input as recorded, then does the same for
each input, down to the prepared data. Every recorded hash is compared with the file on disk;
each one that differs (or is missing) is named, and the exit status is 1. Exit status 2: the
file does not exist or nothing about it is recorded.

Where the records come from:

* tables and aggregated frames (parquet): the provenance record in the schema metadata (and its
  ``.prov.json`` sidecar, which must agree): ``inputs`` = ``{name: {path, sha256}}``;
* figures and other files with a ``<name>.prov.json`` sidecar: the sidecar;
* ``results/eval/.../summary.json``: ``inputs.model_sha256`` (the run's ``results/train/.../
  model.pt``) and ``inputs.data_sha256`` (``data/<dataset>``);
* ``results/train/.../model.pt``: the checkpoint's ``spec`` (``data_sha256``, git, seed, ...);
* any output Snakemake made: ``.snakemake/metadata`` (rule, inputs, and the sha256 Snakemake
  recorded for small inputs such as the library modules).

Files with no record of their own (a table's markdown, ``scores.parquet``, ``curve.tsv``) are
audited through the file written beside them by the same job.

Every file a job wrote under ``results/`` or ``reports/`` is also compared with the sha256 its
job recorded when it ended (``*.outputs.json``, :func:`softmax_ood.provenance.write_outputs_record`):
a damaged leaf (a table's markdown, a figure, a report, the LaTeX) is named although nothing
reads it; and a record itself is checked against its own sha256 (``record_sha256``).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from . import rulefiles
from .codedeps import code_inputs, module_inputs
from .provenance import (
    OUTPUTS_SUFFIX,
    PROVENANCE_KEY,
    RECORD_TREES,
    outputs_record_problem,
    outputs_records,
    path_sha256,
    read_outputs_records,
    record_path,
    refusal,
    snakemake_metadata,
)

__all__ = ["audit", "main"]

SHORT = 12
# besides what the workflow makes, the checkout's code and config, which Snakemake's records of
# a job name as its inputs; anything else they name (a raw file of a system package) is
# neither hashed nor followed
CHECKOUT_TREES = (*RECORD_TREES, "src", "workflow", "config", "rules")
# the record a check's source names, for a file ``{}``; a source not listed is the record's path
RECORD_NAMES = {
    "embedded record": "the record embedded in {}",
    "checkpoint": "the checkpoint {}",
    "summary.json": "{}",
    "meta.json": "{}/meta.json",
}
# files written beside another one by the same job, which carries the record
SIBLINGS = {
    ".md": (".parquet",),
    ".html": (".ipynb",),
    "scores.parquet": ("summary.json",),
    "msp.parquet": ("summary.json",),  # the same file under its old name (runs made before)
    "curve.tsv": ("model.pt",),
}


class AuditError(Exception):
    """The audit cannot start (no such file, nothing recorded); one sentence."""


@dataclass
class Check:
    """One recorded hash of one input, compared with the file on disk."""

    name: str
    path: str  # as recorded (relative to the workflow's working directory) or absolute
    sha256: str
    source: str  # which record holds it
    actual: str | None = None  # None: missing

    @property
    def ok(self) -> bool:
        return self.actual == self.sha256


@dataclass
class Node:
    path: str
    rule: str | None = None
    script: str | None = None
    function: str | None = None  # a shared rule's study function ("module:MAPPING[name]")
    modules: list[str] = field(default_factory=list)
    git: dict | None = None
    config_sha256: str | None = None
    seeds: list | None = None
    notes: list[str] = field(default_factory=list)
    checks: list[Check] = field(default_factory=list)
    code_checks: list[Check] = field(default_factory=list)  # library modules (Snakemake's)
    written: Check | None = None  # the file itself against its job's outputs record
    problems: list[str] = field(default_factory=list)  # differences not tied to one input
    children: list[str] = field(default_factory=list)


class Auditor:
    def __init__(self, root: Path):
        self.root = root.resolve()
        self.seen: set[str] = set()
        self.differs: list[str] = []
        self.n_checked = 0
        self._rule_scripts: dict[str, str] | None = None
        self._head: str | None = None
        self._hash_cache: dict[str, str | None] = {}
        self._outputs: dict[str, tuple[str, str]] | None = None
        self._refused: dict[str, str] = {}
        self._damaged: dict[str, tuple[str, str]] | None = None

    def output_record(self, rel: str) -> tuple[str, str] | None:
        """``(outputs record, sha256)`` its job recorded for the output ``rel``, if any."""
        if self._outputs is None:
            self._outputs = read_outputs_records(self.root, self._refused)
        return self._outputs.get(rel)

    def damaged_record(self, rel: str) -> str | None:
        """For an output ``rel`` no intact record names: a damaged outputs record beside it
        that names it (or is named after it), as one clause; else None."""
        if self._damaged is None:
            self._damaged = {}
            self.output_record(rel)  # the records refused for naming paths outside
            for rec in outputs_records(self.root):
                key = self.rel(rec)
                if key in self._refused:  # the refusal is the finding, whatever the file
                    outside = self._refused[key] == key  # the record itself: not read
                    text = "" if outside else rec.read_text(errors="replace")
                    self._damaged[key] = (refusal(key, self._refused[key]), text)
                elif (problem := outputs_record_problem(rec)) is not None:
                    self._damaged[key] = (problem, rec.read_bytes().decode("utf-8", "replace"))
        stem = Path(rel).name.split(".", 1)[0]
        for rec, (problem, text) in self._damaged.items():
            same = Path(rec).parent == Path(rel).parent
            if same and (f'"{rel}"' in text or Path(rec).name == stem + OUTPUTS_SUFFIX):
                if rec in self._refused:
                    return problem
                return f"{rec} (the outputs record of the job that wrote {rel}) {problem}"
        return None

    # -- paths ---------------------------------------------------------------------------------
    def rel(self, path: str | Path) -> str:
        p = Path(path)
        if p.is_absolute():
            try:
                return p.resolve().relative_to(self.root).as_posix()
            except ValueError:
                return p.as_posix()
        return p.as_posix()

    def disk(self, rel: str) -> Path:
        p = Path(rel)
        return p if p.is_absolute() else self.root / p

    def sha(self, rel: str) -> str | None:
        if rel not in self._hash_cache:
            p = self.disk(rel)
            self._hash_cache[rel] = path_sha256(p) if p.exists() else None
        return self._hash_cache[rel]

    # -- what Snakemake recorded ---------------------------------------------------------------
    def snakemake_meta(self, rel: str) -> dict | None:
        return snakemake_metadata(self.root, rel)

    def script_of(self, rule: str) -> str | None:
        """The script of ``rule``, read from the workflow's rule files
        (:func:`softmax_ood.rulefiles.script_of`)."""
        if self._rule_scripts is None:
            self._rule_scripts = rulefiles.rule_scripts(self.root)
        return rulefiles.script_of(self._rule_scripts, rule)

    def head(self) -> str:
        if self._head is None:
            try:
                self._head = subprocess.run(
                    ["git", "rev-parse", "HEAD"],
                    cwd=self.root,
                    capture_output=True,
                    text=True,
                    check=True,
                ).stdout.strip()
            except (OSError, subprocess.CalledProcessError):
                self._head = ""
        return self._head

    # -- building one node ---------------------------------------------------------------------
    def node(self, rel: str) -> Node:
        path = self.disk(rel)
        node = Node(rel)
        meta = self.snakemake_meta(rel)
        found = False
        written = self.output_record(rel)
        if written is not None:  # the file itself, as its job wrote it (not one of its inputs)
            node.written = Check("output", rel, written[1], written[0], self.sha(rel))
        elif not path.name.endswith(OUTPUTS_SUFFIX) and (bad := self.damaged_record(rel)):
            node.problems.append(bad)
        if path.name.endswith(OUTPUTS_SUFFIX):  # the record: every file it names
            node.notes.append("the outputs record of the job that wrote these files")
            problem = outputs_record_problem(path)
            if problem is not None:  # its own sha256: a changed rule or path shows too
                node.problems.append(f"{rel} {problem}")
                return node
            rec = json.loads(path.read_text())
            outside = [o for o in rec["outputs"] if record_path(self.root, o) is None]
            if outside:  # nothing it names is read
                node.problems.append(refusal(rel, outside[0]))
                return node
            node.rule, node.script = rec.get("rule"), rec.get("script")
            for out, sha in sorted((rec.get("outputs") or {}).items()):
                self._add(node, "output", self.rel(out), sha, rel, child=False)
            return node
        if (
            path.is_file()
            and path.parent.parent.name == "data"
            and (path.parent / "meta.json").is_file()
        ):  # a prepared-data file (meta.json too): audited with its folder
            node.notes.append(f"a file of the prepared data {self.rel(path.parent)}")
            node.children.append(self.rel(path.parent))
            return node
        if path.name.endswith(".prov.json"):  # the sidecar stands for the file it describes
            stem = path.name.removesuffix(".prov.json")
            for f in sorted(path.parent.glob(stem + ".*")):
                if f != path and not f.name.endswith(".prov.json"):
                    node.notes.append(f"the provenance sidecar of {self.rel(f)}")
                    node.children.append(self.rel(f))
                    return node
        if path.suffix == ".parquet":
            found = self._parquet(node, path) or found
        elif path.suffix == ".pt":
            found = self._checkpoint(node, path)
        elif path.name == "summary.json":
            found = self._summary(node, path)
        elif path.is_dir() and (path / "meta.json").is_file():
            found = self._data(node, path)
        if not found:
            side = path.with_suffix(".prov.json")
            if side.is_file() and side != path:
                self._from_record(node, json.loads(side.read_text()), f"{self.rel(side)}")
                node.notes.append(f"record: {self.rel(side)}")
                found = True
        if not found and meta is None:
            sib = self._sibling(path)
            if sib is not None:
                node.notes.append(f"no record of its own: written by the job that wrote {sib}")
                node.children.append(sib)
                return node
        if meta is not None:
            self._from_snakemake(node, meta)
            found = True
        if not found:
            node.notes.append("no provenance record")
        if node.rule and not node.script:
            node.script = self.script_of(node.rule)
        if node.script and not node.modules:
            script = self.disk(node.script)
            if script.is_file():
                src = self.root / "src"
                found = set(code_inputs(script, src))
                if node.function and ":" in node.function:  # the study module it calls
                    found |= set(module_inputs(node.function.split("[")[0], src))
                node.modules = sorted(self.rel(p) for p in found)
        return node

    def _sibling(self, path: Path) -> str | None:
        for key, cands in SIBLINGS.items():
            if path.name == key or (key.startswith(".") and path.suffix == key):
                for c in cands:
                    other = path.parent / c if not c.startswith(".") else path.with_suffix(c)
                    if other.exists() and other != path:
                        return self.rel(other)
        return None

    def _add(self, node: Node, name: str, rel: str, sha: str, source: str, child=True) -> None:
        trees = CHECKOUT_TREES if source == "Snakemake" else (*RECORD_TREES, "src")
        inside = record_path(self.root, rel, trees)
        if inside is None:  # never hashed: the record is refused (Snakemake's: not followed)
            if source == "Snakemake":
                node.notes.append(f"input {rel} lies outside the checkout: not read")
            else:
                names = RECORD_NAMES.get(source)
                problem = refusal(names.format(node.path) if names else source, rel)
                if problem not in node.problems:
                    node.problems.append(problem)
            return
        rel = inside
        if any(c.path == rel for c in node.checks + node.code_checks):
            return  # already checked against a record of ours
        check = Check(name, rel, sha, source, self.sha(rel))
        (node.code_checks if rel.startswith("src/") else node.checks).append(check)
        if child and not rel.startswith("src/") and rel not in node.children:
            node.children.append(rel)

    def _from_record(self, node: Node, rec: dict, source: str) -> None:
        node.rule = rec.get("rule") or node.rule
        node.script = rec.get("script") or node.script
        node.function = rec.get("function") or node.function
        node.git = rec.get("git") or node.git
        node.config_sha256 = rec.get("config_sha256") or node.config_sha256
        node.seeds = rec.get("seeds") if rec.get("seeds") is not None else node.seeds
        for name, inp in sorted((rec.get("inputs") or {}).items()):
            if isinstance(inp, dict) and "path" in inp and "sha256" in inp:
                self._add(node, name, self.rel(inp["path"]), inp["sha256"], source)

    def _parquet(self, node: Node, path: Path) -> bool:
        import pyarrow.parquet as pq

        try:
            meta = pq.read_schema(path).metadata or {}
        except Exception as err:  # noqa: BLE001 - any unreadable parquet is a finding
            node.problems.append(f"{node.path} cannot be read as parquet ({err})")
            return False
        if PROVENANCE_KEY not in meta:
            return False
        rec = json.loads(meta[PROVENANCE_KEY])
        self._from_record(node, rec, "embedded record")
        side = path.with_suffix(".prov.json")
        if side.is_file():
            try:
                same = json.loads(side.read_text()) == rec
            except ValueError:
                same = False
            if not same:
                node.problems.append(
                    f"{self.rel(side)} does not match the record embedded in {node.path}"
                )
        return True

    def _checkpoint(self, node: Node, path: Path) -> bool:
        try:
            import torch

            ckpt = torch.load(path, map_location="cpu", weights_only=True)
            spec = ckpt["spec"]
        except Exception as err:  # noqa: BLE001 - any unreadable checkpoint is a finding
            # never echo torch's advice to load with weights_only=False (unsafe)
            node.problems.append(
                f"{node.path} cannot be read as a checkpoint ({type(err).__name__})"
            )
            return False
        node.rule = node.rule or "train"
        node.git = spec.get("git")
        node.seeds = [spec["seed"]] if "seed" in spec else None
        node.notes.append(
            "run "
            + "/".join(str(spec.get(k)) for k in ("dataset", "recipe", "arch", "loss"))
            + f"/seed{spec.get('seed')}"
        )
        if spec.get("data_sha256"):
            self._add(node, "data", f"data/{spec['dataset']}", spec["data_sha256"], "checkpoint")
        return True

    def _summary(self, node: Node, path: Path) -> bool:
        try:
            summary = json.loads(path.read_text())
        except ValueError as err:
            node.problems.append(f"{node.path} is not valid JSON ({err})")
            return False
        inputs = summary.get("inputs") or {}
        if not inputs:
            return False
        node.rule = "evaluate"
        parts = Path(node.path).parts
        dataset = (summary.get("run") or {}).get("dataset")
        if "eval" in parts:
            i = parts.index("eval")
            dataset = dataset or (parts[i + 1] if len(parts) > i + 1 else None)
            model = Path(*parts[:i], "train", *parts[i + 1 : -1], "model.pt").as_posix()
            if inputs.get("model_sha256"):
                self._add(node, "model", model, inputs["model_sha256"], "summary.json")
        if inputs.get("data_sha256") and dataset:
            self._add(node, "data", f"data/{dataset}", inputs["data_sha256"], "summary.json")
        for name, inp in sorted(inputs.items()):  # records of the provenance_record shape
            if isinstance(inp, dict) and "path" in inp and "sha256" in inp:
                self._add(node, name, self.rel(inp["path"]), inp["sha256"], "summary.json")
        return True

    def _data(self, node: Node, path: Path) -> bool:
        # the folder as a whole (meta.json included) against what the evaluations recorded
        have, records = self.sha(node.path), []
        for summary in sorted((self.root / "results/eval" / path.name).glob("**/summary.json")):
            try:
                want = (json.loads(summary.read_text()).get("inputs") or {}).get("data_sha256")
            except (ValueError, AttributeError):
                continue
            if want and want != have:
                records.append((self.rel(summary), want))
        if records:
            more = f" and {len(records) - 1} other(s)" if len(records) > 1 else ""
            node.problems.append(
                f"{node.path} (sha256 {have[:SHORT]} on disk) is not the data_sha256 "
                f"{records[0][1][:SHORT]} recorded in {records[0][0]}{more}"
            )
        try:
            meta = json.loads((path / "meta.json").read_text())
        except ValueError:
            node.problems.append(f"{node.path}/meta.json is not valid JSON")
            return False
        node.rule = node.rule or "prepare_data"
        what = [f"prepared data ({meta.get('source', meta.get('id_dataset', '?'))})"]
        ood = meta.get("ood_test") or meta.get("ood")
        if isinstance(ood, (list, dict)):
            what.append("OOD sets: " + ", ".join(sorted(ood)))
        node.notes.append("; ".join(what) + f"; sources in {node.path}/meta.json")
        files = meta.get("files")
        for name, want in sorted(files.items() if isinstance(files, dict) else []):
            self._add(node, "data file", f"{node.path}/{name}", want, "meta.json", child=False)
        return True

    def _from_snakemake(self, node: Node, meta: dict) -> None:
        node.rule = node.rule or meta.get("rule")
        code = (meta.get("code") or "").strip().strip('"')
        if not node.script and node.rule:
            node.script = self.script_of(node.rule)
        if not node.script and code.endswith((".py", ".ipynb")):
            node.script = code
        inputs = [i for i in meta.get("input") or [] if isinstance(i, str)]
        code_files = [i for i in inputs if i.startswith("src/") and i.endswith(".py")]
        if code_files:  # the rule's derived code inputs, as the job saw them (each once)
            node.modules = sorted(set(code_files))
        if not node.script:
            nb = [i for i in inputs if i.endswith(".ipynb")]
            if nb:
                node.script = nb[0]
        for rel, value in sorted((meta.get("input_checksums") or {}).items()):
            if isinstance(value, str) and value.startswith("sha256:"):
                self._add(node, "input", rel, value.removeprefix("sha256:"), "Snakemake")
        for rel in inputs:  # the chain continues through every non-code input in the checkout
            inside = record_path(self.root, rel, CHECKOUT_TREES)
            if inside is None:
                note = f"input {rel} lies outside the checkout: not read"
                if note not in node.notes:
                    node.notes.append(note)
            elif not inside.startswith("src/") and inside not in node.children:
                node.children.append(inside)

    # -- walking and printing ------------------------------------------------------------------
    def walk(self, rel: str, depth: int = 0, out=None) -> None:
        out = out or sys.stdout
        pad = "  " * depth
        if rel in self.seen:
            print(f"{pad}{rel}  (above)", file=out)
            return
        self.seen.add(rel)
        if not self.disk(rel).exists():
            print(f"{pad}{rel}  MISSING", file=out)
            return
        node = self.node(rel)
        print(f"{pad}{rel}", file=out)
        pad += "  "
        if node.rule:
            print(
                f"{pad}rule     {node.rule}" + (f"  ({node.script})" if node.script else ""),
                file=out,
            )
        if node.modules:
            short = [m.removeprefix("src/softmax_ood/") for m in node.modules]
            print(f"{pad}modules  {', '.join(short)}", file=out)
        info = []
        if node.git:
            commit = str(node.git.get("commit", "unknown"))
            g = f"git {commit[:SHORT]}" + (" (dirty)" if node.git.get("dirty") else "")
            if self.head() and commit not in ("unknown", self.head()):
                g += f" [checkout now at {self.head()[:SHORT]}]"
            info.append(g)
        if node.config_sha256:
            info.append(f"config sha256 {node.config_sha256[:SHORT]}")
        if node.seeds is not None:
            info.append("seeds " + ",".join(str(s) for s in node.seeds))
        if info:
            print(f"{pad}{'  '.join(info)}", file=out)
        for note in node.notes:
            print(f"{pad}{note}", file=out)
        if node.written is not None:
            w = node.written
            self.n_checked += 1
            status = "ok     " if w.ok else ("MISSING" if w.actual is None else "DIFFERS")
            line = (
                f"{pad}{status}  {rel}  sha256 {w.sha256[:SHORT]} as its job wrote it ({w.source})"
            )
            if not w.ok:
                now = "no such file" if w.actual is None else f"on disk {w.actual[:SHORT]}"
                line += f", {now}"
                self._differs(f"{rel}: its job wrote sha256 {w.sha256[:SHORT]} ({w.source}), {now}")
            print(line, file=out)
        bad_code = [c for c in node.code_checks if not c.ok]
        if node.code_checks and not bad_code:
            n = len(node.code_checks)
            print(f"{pad}ok       the {n} module hashes Snakemake recorded", file=out)
        self.n_checked += len(node.code_checks) - len(bad_code)
        for c in node.checks + bad_code:
            self.n_checked += 1
            if c.ok:
                status = "ok     "
            elif c.actual is None:
                status = "MISSING"
            else:
                status = "DIFFERS"
            line = f"{pad}{status}  {c.path}  sha256 {c.sha256[:SHORT]}"
            if not c.ok:
                now = "no such file" if c.actual is None else f"on disk {c.actual[:SHORT]}"
                line += f" recorded by {c.source}, {now}"
                self._differs(f"{c.path} ({c.name} of {rel}): recorded {c.sha256[:SHORT]}, {now}")
            print(line, file=out)
        for p in node.problems:
            print(f"{pad}DIFFERS  {p}", file=out)
            self._differs(p)
        for child in node.children:
            self.walk(child, depth + 1, out)

    def _differs(self, msg: str) -> None:
        if msg not in self.differs:
            self.differs.append(msg)


def _find_root(path: Path) -> Path:
    for p in path.resolve().parents:
        if p.name in ("results", "reports", "data"):
            return p.parent
    return Path.cwd()


def audit(path: str | Path, root: str | Path | None = None, out=None) -> int:
    """Print ``path``'s chain and check its recorded hashes: 0 all match, 1 some differ."""
    out = out or sys.stdout
    path = Path(path)
    if not path.exists():
        raise AuditError(f"{path} does not exist")
    base = Path(root) if root is not None else _find_root(path)
    auditor = Auditor(base)
    rel = auditor.rel(path.resolve())
    first = auditor.node(rel)
    if not (first.checks or first.children or first.rule or first.problems or first.written):
        raise AuditError(
            f"nothing is recorded about {rel}: it has no provenance record, no .prov.json "
            f"sidecar and no Snakemake metadata under {base}"
        )
    print(f"provenance of {rel}  (workflow folder {base})", file=out)
    auditor.walk(rel, out=out)
    if auditor.differs:
        print(f"audit: {len(auditor.differs)} recorded hash(es) differ from the files:", file=out)
        for d in auditor.differs:
            print(f"  {d}", file=out)
        return 1
    print(f"audit: all {auditor.n_checked} recorded hashes match the files on disk", file=out)
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(
        prog="python3 -m softmax_ood.audit",
        description="Print a result's provenance chain and check every recorded hash.",
    )
    ap.add_argument("paths", nargs="+", help="files under results/ or reports/")
    ap.add_argument("--root", help="the workflow folder (default: found from the path)")
    args = ap.parse_args(argv)
    status = 0
    for p in args.paths:
        try:
            status = max(status, audit(p, args.root))
        except AuditError as err:
            print(f"audit error: {err}", file=sys.stderr)
            status = 2
        except BrokenPipeError:  # e.g. piped into `head`
            sys.stderr.close()
            return status
    return status


if __name__ == "__main__":
    sys.exit(main())
