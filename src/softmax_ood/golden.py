"""Golden hashes: the smoke config's every output, hashed under pinned numerics, committed in
``tests/golden/smoke_sha256.json``; a fresh smoke run on any x86-64 machine with AVX2 must
reproduce every one (``tests/test_golden.py``).

    python3 -m softmax_ood.golden --update            # run the smoke config in a fresh copy, rewrite the manifest
    python3 -m softmax_ood.golden --update --from DIR # take an existing smoke run in DIR instead
    python3 -m softmax_ood.golden --check DIR         # compare the run in DIR with the manifest

What is hashed: every file under ``data/<ds>/``, ``results/`` and ``reports/`` except wall-time
files (``reports/*_timing_*.json``), the jobs' outputs records (``*.outputs.json``: hashes of
files hashed here, some of which embed the commit) and Snakemake's own bookkeeping. A file's *golden digest* is
the sha256 of its bytes, except where a provenance record is inside it: the git commit (and the
input hashes that change with it) cannot be in a manifest committed in the same repository, so

* ``*.parquet``: the Arrow table (schema without the provenance metadata, all column data) plus
  the record with ``git`` and ``inputs`` taken out;
* ``*.json`` (``*.prov.json``, ``summary.json``, ...): the JSON with every ``git`` and ``inputs``
  key taken out, canonical;
* ``model.pt``: the tensors (name, dtype, shape, bytes) plus the checkpoint's ``spec`` without
  ``git``;
* text (notebooks, HTML, markdown, TSV): the bytes with a printed provenance record's
  ``"commit": "<40 hex>"`` and ``"dirty": …`` replaced by placeholders (reports print Table 1's
  record), and the results page's commit-dependent spans (``<code class="rs-git">``: the commit,
  input hashes) likewise;
* everything else (PNG, ``.npy``): the bytes.

``python3 -m softmax_ood.audit`` checks the recorded input hashes; this checks the results.
On a mismatch the comparison names the first differing file in pipeline order (data, training,
evaluation, study results, reports) and the rule that makes it.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import re
import shutil
import sys
import tempfile
from pathlib import Path

from .provenance import PROVENANCE_KEY, WALL_TIME_GLOBS, canonical_json

__all__ = ["MANIFEST", "compare", "digest", "manifest_of", "main"]

ROOT = Path(__file__).resolve().parents[2]  # the checkout (src/softmax_ood/golden.py)
MANIFEST = ROOT / "tests/golden/smoke_sha256.json"
SMOKE = ["--configfile", "config/smoke.yaml"]
DROP_KEYS = frozenset({"git", "inputs"})
EXCLUDE_SUFFIXES = (".log", ".outputs.json")
# wall times are not reproducible bytes by nature (the Seddik solver's timing)
EXCLUDE_GLOBS = WALL_TIME_GLOBS
ORDER = ("data/", "results/train/", "results/eval/", "results/", "reports/")


def _strip(obj):
    if isinstance(obj, dict):
        return {k: _strip(v) for k, v in obj.items() if k not in DROP_KEYS}
    if isinstance(obj, list):
        return [_strip(v) for v in obj]
    return obj


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _parquet_digest(path: Path) -> str:
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pq.read_table(path)
    meta = dict(table.schema.metadata or {})
    record = meta.pop(PROVENANCE_KEY, None)
    table = table.replace_schema_metadata(meta)
    buf = io.BytesIO()
    with pa.ipc.new_stream(buf, table.schema) as writer:
        writer.write_table(table)
    h = hashlib.sha256(buf.getvalue())
    if record is not None:
        h.update(canonical_json(_strip(json.loads(record))).encode())
    return h.hexdigest()


def _checkpoint_digest(path: Path) -> str:
    import torch

    ckpt = torch.load(path, map_location="cpu", weights_only=True)
    h = hashlib.sha256()

    def tensors(prefix, obj):
        if isinstance(obj, torch.Tensor):
            t = obj.detach().contiguous()
            h.update(f"{prefix}\0{t.dtype}\0{tuple(t.shape)}\0".encode())
            h.update(t.numpy().tobytes() if t.numel() else b"")
        elif isinstance(obj, dict):
            for k in sorted(obj, key=str):
                if k not in DROP_KEYS:
                    tensors(f"{prefix}/{k}", obj[k])
        elif isinstance(obj, list | tuple):
            for i, v in enumerate(obj):
                tensors(f"{prefix}/{i}", v)
        else:
            h.update(f"{prefix}\0{canonical_json(_strip(obj))}\0".encode())

    tensors("", ckpt)
    return h.hexdigest()


# a provenance record printed in a report (notebook JSON escapes its quotes; HTML may too)
_Q = r'(?:\\?"|&quot;)'
_COMMIT = re.compile(_Q + r"commit" + _Q + r":\s*" + _Q + r"[0-9a-f]{40}")
_DIRTY = re.compile(_Q + r"dirty" + _Q + r":\s*(?:true|false|null)")
# the results page marks what changes with the commit: <code class="rs-git">...</code>
_MARKED = re.compile(r"(rs-git" + _Q + r">)[^<]*")
TEXT_SUFFIXES = (".html", ".ipynb", ".md", ".txt", ".tsv", ".csv", ".svg")


def _text_digest(data: bytes) -> str:
    """Bytes with any printed git commit / dirty flag replaced by a placeholder."""
    text = data.decode("utf-8", errors="surrogateescape")
    text = _COMMIT.sub('"commit": "<commit>', text)
    text = _DIRTY.sub('"dirty": <dirty>', text)
    text = _MARKED.sub(r"\1<git>", text)
    return _sha(text.encode("utf-8", errors="surrogateescape"))


def digest(path: Path | str) -> str:
    """The golden digest of one file (see the module docstring)."""
    path = Path(path)
    if path.suffix == ".parquet":
        return _parquet_digest(path)
    if path.suffix == ".pt":
        return _checkpoint_digest(path)
    if path.suffix == ".json":
        try:
            obj = json.loads(path.read_text())
        except ValueError:
            return _sha(path.read_bytes())
        return _sha(canonical_json(_strip(obj)).encode())
    if path.suffix in TEXT_SUFFIXES:
        return _text_digest(path.read_bytes())
    return _sha(path.read_bytes())


def _included(rel: str) -> bool:
    from fnmatch import fnmatch

    if rel.endswith(EXCLUDE_SUFFIXES) or "/." in f"/{rel}":
        return False
    return not any(fnmatch(rel, g) for g in EXCLUDE_GLOBS)


def _rank(rel: str) -> tuple[int, str]:
    return next(i for i, p in enumerate((*ORDER, "")) if rel.startswith(p)), rel


def manifest_of(run: Path | str, dataset: str = "digits") -> dict[str, str]:
    """``{relative path: golden digest}`` of every included output in the run folder ``run``."""
    run = Path(run)
    files = {}
    for top in (f"data/{dataset}", "results", "reports"):
        for p in sorted((run / top).rglob("*")):
            rel = p.relative_to(run).as_posix()
            if p.is_file() and _included(rel):
                files[rel] = digest(p)
    return dict(sorted(files.items(), key=lambda kv: _rank(kv[0])))


def _rule_of(run: Path, rel: str) -> str:
    """The rule that makes ``rel`` (Snakemake's metadata, else the provenance record)."""
    from .audit import Auditor

    try:
        node = Auditor(run).node(rel)
    except Exception:  # noqa: BLE001 - a name for the message only
        return "unknown"
    return node.rule or "unknown"


def compare(run: Path | str, manifest: dict | None = None) -> list[str]:
    """Sentences naming every difference between the run in ``run`` and the manifest (first
    the first differing file in pipeline order, with its rule); empty when identical."""
    run = Path(run)
    manifest = manifest if manifest is not None else load()
    want = manifest["files"]
    have = manifest_of(run, manifest.get("dataset", "digits"))
    problems = []
    order = sorted(set(want) | set(have), key=_rank)
    differing = [f for f in order if want.get(f) != have.get(f)]
    for f in differing:
        rule = _rule_of(run, f) if f in have else "unknown"
        if f not in have:
            problems.append(f"{f} is in the golden manifest but the run did not make it")
        elif f not in want:
            problems.append(f"{f} (rule {rule}) is not in the golden manifest")
        else:
            problems.append(
                f"{f} (rule {rule}) differs from the golden manifest: "
                f"{have[f][:12]} vs {want[f][:12]}"
            )
    return problems


def load(path: Path | str = MANIFEST) -> dict:
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(
            f"no golden manifest at {path}; make it with: python3 -m softmax_ood.golden --update"
        )
    return json.loads(path.read_text())


def write(run: Path | str, path: Path | str = MANIFEST) -> dict:
    from .numerics import PINNED_ENV
    from .provenance import versions

    files = manifest_of(run)
    manifest = {
        "about": (
            "golden digests of every output of the smoke config under pinned numerics "
            "(softmax_ood.golden); regenerate: python3 -m softmax_ood.golden --update"
        ),
        "command": "snakemake --cores 2 --configfile config/smoke.yaml",
        "dataset": "digits",
        "numerics": {"mode": "pinned", "env": dict(sorted(PINNED_ENV.items()))},
        "versions": versions(),
        "files": files,
    }
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(manifest, indent=1) + "\n")
    return manifest


def smoke_run(dst: Path, cores: str = "2") -> Path:
    """The smoke config from scratch in a fresh copy of this checkout at ``dst`` (the same
    copy the end-to-end tests make)."""
    sys.path.insert(0, str(ROOT / "tests"))
    from e2e import fresh_copy, snakemake

    work = fresh_copy(dst)
    proc = snakemake(work, "--cores", cores, *SMOKE)
    if proc.returncode != 0:
        raise SystemExit(f"the smoke run failed in {work}:\n{proc.stderr[-4000:]}")
    return work


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(
        prog="python3 -m softmax_ood.golden", description=__doc__.split("\n")[0]
    )
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--update", action="store_true", help="rewrite the manifest")
    g.add_argument("--check", metavar="DIR", help="compare the smoke run in DIR with it")
    ap.add_argument("--from", dest="src", metavar="DIR", help="with --update: an existing run")
    ap.add_argument("--cores", default="2")
    ap.add_argument("--manifest", default=str(MANIFEST))
    args = ap.parse_args(argv)
    if args.check:
        problems = compare(args.check, load(args.manifest))
        if problems:
            print(f"golden: {len(problems)} file(s) differ; first: {problems[0]}")
            try:
                for p in problems[1:]:
                    print(f"  {p}")
            except BrokenPipeError:  # e.g. piped into `head`
                sys.stderr.close()
            return 1
        print(f"golden: all {len(load(args.manifest)['files'])} files match {args.manifest}")
        return 0
    tmp = None
    try:
        if args.src:
            run = Path(args.src)
        else:
            tmp = Path(tempfile.mkdtemp(prefix="golden-"))
            run = smoke_run(tmp / "repo", args.cores)
        manifest = write(run, args.manifest)
        print(f"golden: wrote {len(manifest['files'])} digests to {args.manifest}")
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
