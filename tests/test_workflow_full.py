"""A CPU rehearsal of config/full.yaml: the overlay shrunk (two training steps, two seeds, narrow
widths, two ID classes and two small far sets, the LogitNorm study alone) and run through
Snakemake to the LogitNorm tables and figure it adds to the default. Plumbing only: nothing it
computes is a result (the full config's cost: docs/benchmarks.md, project_full.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import yaml

sys.path.insert(0, str(Path(__file__).parent))

from e2e import fresh_copy, snakemake  # noqa: E402

pytestmark = pytest.mark.slow

#: what config/full.yaml adds to the default's LogitNorm outputs: Table 3 (architectures),
#: Table 5 (LogitPenalty), Table 6 (GODIN), the tau ablation and its Fig. 5
ADDED = [
    "results/logitnorm/fashion/tables/table3.parquet",
    "results/logitnorm/fashion/tables/table5.parquet",
    "results/logitnorm/fashion/tables/table6.parquet",
    "results/logitnorm/fashion/tables/tau_ablation.parquet",
    "results/logitnorm/fashion/figures/fig5.png",
]


def _shrunk_full(work: Path) -> list[str]:
    """config/full.yaml with an override that keeps its cells' structure (the three families,
    the four main losses, a tau grid) and shrinks everything that costs: one job per cell
    (each job's start-up costs as much as two seeds of two steps; the per-seed rules run in
    the default's own tests)."""
    override = {
        "studies": ["logitnorm"],
        "seeds": [0, 1],  # the paired claims need two
        "scheduling": {"per_seed": []},
        # a cell's job trains all its seeds: the replication's five would triple the cost
        "replication": {"studies": []},
        # two ID classes (2,000 test images) and two 30-image far sets: no near set (the held-out
        # classes would be 8,000 images)
        "data": {
            "id_classes": [0, 1],
            "ood_test": ["glyphs", "textures"],  # every recipe's monitor set is one of them
            "ood_val": ["digits_val"],
            "ood_size": 30,
            "val_fraction": 0.02,
        },
        "recipes": {
            "sgd-fashion": {
                "epochs": 1,
                "train_size": 128,
                "batch_size": 64,
                "milestones": [1],
                "warmup_steps": 1,
                "monitor_size": 20,
                "chance_margin": None,
                # LogitNorm ignores the logits' scale: two steps at lr 0.1 may pass the guards
                "max_logit_norm": 1.0e12,
                "max_loss": 1.0e12,
            }
        },
        # at least 8 channels per conv (tests/test_workflow_paper.py: oneDNN under the AVX2 pin)
        "architectures": {"resnet-8": {"base_width": 8}, "densenet-bc-10": {"growth_rate": 4}},
        "logitnorm": {"near_ood": [], "tau_ablation": [0.04, 0.05], "bootstrap": 20},
    }
    (work / "shrunk_full.yaml").write_text(yaml.safe_dump(override, sort_keys=False))
    return ["--configfile", "config/full.yaml", "shrunk_full.yaml"]


def test_the_full_config_shrunk_runs_to_the_logitnorm_tables_it_adds(tmp_path):
    import pandas as pd

    work = fresh_copy(tmp_path / "repo")
    proc = snakemake(work, *ADDED, "--cores", "2", *_shrunk_full(work), timeout=900)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-5000:]
    full = yaml.safe_load((work / "config/full.yaml").read_text())["logitnorm"]
    table3 = pd.read_parquet(work / ADDED[0])
    assert len(table3) and table3.to_string().count("resnet-8") >= 1
    for arch in full["arch_table"]:
        assert arch in table3.to_string(), arch
    for t in ADDED[1:4]:
        assert len(pd.read_parquet(work / t)), t
    assert (work / ADDED[4]).stat().st_size > 0
    runs = sorted(p.parent.parent.name for p in (work / "results/train").rglob("seed1/model.pt"))
    # the main losses, the two more architectures' CE and LogitNorm, tau 0.05
    assert len(runs) == len(full["main_losses"]) + 2 * 2 + 1
