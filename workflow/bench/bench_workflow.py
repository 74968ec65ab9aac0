"""Benchmark: the whole default (every registered study) from scratch, then a no-op rerun.

Copies this checkout (without results/data/logs) to a temporary directory, runs
``snakemake --cores N`` there from scratch, then runs it again (nothing to do), and prints each
wall time against the budget (10 min from scratch on 2 cores, 10 s for a no-op rerun):

    python workflow/bench/bench_workflow.py [--cores 2] [--configfile config/default.yaml]

Prints e.g. ``from scratch: 513.5 s vs budget 600 s -> ratio 0.86``, and the jobs per rule.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))
from e2e import fresh_copy  # noqa: E402  (the same copy the end-to-end tests make)


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


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cores", default="2")
    ap.add_argument("--configfile", default=None)
    ap.add_argument("--keep", action="store_true", help="keep the temporary copy")
    args = ap.parse_args()
    extra = ["--configfile", args.configfile] if args.configfile else []
    tmp = Path(tempfile.mkdtemp(prefix="bench-workflow-"))
    try:
        work = tmp / "repo"
        fresh_copy(work)
        scratch = run(work, ["--cores", args.cores, *extra])
        noop = run(work, ["--cores", args.cores, *extra])
        print(f"from scratch: {scratch:.1f} s vs budget 600 s -> ratio {scratch / 600:.2f}")
        print(f"no-op rerun:  {noop:.1f} s vs budget 10 s -> ratio {noop / 10:.2f}")
    finally:
        if args.keep:
            print(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
