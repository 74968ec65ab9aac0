"""Benchmark ``softmax_ood.metrics.ood_metrics`` against sklearn on a large score set.

Usage::

    python workflow/bench/bench_metrics.py [--n 1000000] [--repeat 3] [--seed 0]

On ``n`` scores (``n/2`` ID, ``n/2`` OOD; float32, fixed seed) and on a tie-heavy variant
(integer-valued scores in 0..99), times in the same process

(a) ``sklearn.metrics.roc_auc_score`` + ``average_precision_score`` (ID positive), and
(b) ``ood_metrics`` (which additionally computes FPR95 and AUPR-Out),

reports the best-of-``repeat`` wall time (``time.perf_counter``), checks that AUROC and AUPR-In
agree (``np.isclose(rtol=1e-10, atol=1e-12)``) -- and, untimed, that FPR95 and AUPR-Out match
``roc_curve``/``average_precision_score`` -- and exits 1 if anything differs. The last line is the
summary over both variants (sum of best times).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
from sklearn.metrics import average_precision_score, roc_auc_score, roc_curve

try:
    from softmax_ood.metrics import ood_metrics
except ImportError:  # running from a checkout without PYTHONPATH=src
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "src"))
    from softmax_ood.metrics import ood_metrics


def best_time(fn, repeat: int):
    best, out = float("inf"), None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def make_scores(n: int, seed: int, tie_heavy: bool):
    rng = np.random.default_rng(seed)
    n_id, n_ood = n // 2, n - n // 2
    if tie_heavy:
        ids = rng.integers(0, 100, n_id).astype(np.float32)
        oods = rng.integers(0, 90, n_ood).astype(np.float32)
    else:
        ids = rng.normal(1.0, 1.0, n_id).astype(np.float32)
        oods = rng.normal(0.0, 1.0, n_ood).astype(np.float32)
    return ids, oods


def run_variant(name: str, ids, oods, repeat: int):
    y = np.r_[np.ones(ids.size, dtype=np.int64), np.zeros(oods.size, dtype=np.int64)]
    s = np.concatenate([ids, oods])

    def sk():
        return roc_auc_score(y, s), average_precision_score(y, s)

    def ours():
        return ood_metrics(ids, oods)

    # warm-up both once (imports, page faults), then interleave timing
    sk(), ours()
    t_sk, (sk_auroc, sk_ap) = best_time(sk, repeat)
    t_ours, m = best_time(ours, repeat)
    # untimed check of the extra outputs against their sklearn definitions
    fpr, tpr, _ = roc_curve(y, s, drop_intermediate=False)
    sk_fpr95 = fpr[np.searchsorted(tpr, 0.95, side="left")]
    sk_ap_out = average_precision_score(1 - y, -s.astype(np.float64))
    pairs = [
        (m["auroc"], sk_auroc),
        (m["aupr_in"], sk_ap),
        (m["fpr95"], sk_fpr95),
        (m["aupr_out"], sk_ap_out),
    ]
    same = all(bool(np.isclose(a, b, rtol=1e-10, atol=1e-12)) for a, b in pairs)
    print(
        f"  [{name}] ours {t_ours:.3f}s vs sklearn {t_sk:.3f}s -> {t_sk / t_ours:.2f}x; "
        f"auroc {m['auroc']:.12f} / {sk_auroc:.12f}, aupr_in {m['aupr_in']:.12f} / {sk_ap:.12f}, "
        f"fpr95 {m['fpr95']:.6f}, aupr_out {m['aupr_out']:.6f}"
    )
    return t_ours, t_sk, same


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=1_000_000, help="total number of scores")
    ap.add_argument("--repeat", type=int, default=3, help="best-of repeats")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    if args.n < 2 or args.repeat < 1:
        ap.error("need --n >= 2 and --repeat >= 1")

    total_ours = total_sk = 0.0
    all_same = True
    for name, tie in (("continuous", False), ("tie-heavy", True)):
        ids, oods = make_scores(args.n, args.seed, tie)
        t_ours, t_sk, same = run_variant(name, ids, oods, args.repeat)
        total_ours += t_ours
        total_sk += t_sk
        all_same &= same

    verdict = "values identical" if all_same else "VALUES DIFFER"
    print(
        f"metrics: ours {total_ours:.3f}s vs sklearn {total_sk:.3f}s -> "
        f"speedup {total_sk / total_ours:.2f}x ({verdict})"
    )
    return 0 if all_same else 1


if __name__ == "__main__":
    sys.exit(main())
