"""The GPU-hour estimate a paper-scale run prints (softmax_ood.estimate)."""

from __future__ import annotations

import pytest

from softmax_ood.estimate import gpu_hours, render_gpu_hours
from softmax_ood.runs import Run


def _run(arch: str, loss: str, seed: int, recipe: str = "paper-sgd") -> Run:
    fields = {f: None for f in Run._fields}
    fields.update(dataset="cifar10", recipe=recipe, arch=arch, loss=loss, seed=seed)
    return Run(**fields)


def test_hours_are_epochs_times_the_measured_seconds_and_unmeasured_archs_are_named():
    runs = [_run("wrn-40-2", loss, s) for loss in ("ce", "logitnorm") for s in range(5)]
    runs += [_run("resnet-34", "ce", s) for s in range(5)]
    runs += [_run("wrn-40-2", "ce", 0)]  # the same run asked twice counts once
    est = gpu_hours(runs, {"paper-sgd": {"epochs": 200}}, {"wrn-40-2": 18.0})
    t = est["train"]
    assert t["jobs"] == 3 and t["runs"] == 10
    assert t["hours"] == pytest.approx(10 * 200 * 18 / 3600)  # 10.0
    assert t["unmeasured"] == {"resnet-34": 5}
    text = render_gpu_hours(est, {"wrn-40-2": 18.0})
    assert "estimate: train 3 jobs, 10 runs: 10.0 GPU-hours" in text
    assert "not estimated (no measured time): resnet-34 (5 runs)" in text


def test_nothing_measured_counts_nothing():
    est = gpu_hours([_run("wrn-40-2", "ce", 0)], {"paper-sgd": {"epochs": 200}}, {})
    assert est["train"]["hours"] == 0.0 and est["train"]["unmeasured"] == {"wrn-40-2": 1}


def test_a_measured_epoch_time_sizes_the_training_limit():
    """A 200-epoch recipe at 18 s per epoch needs 60 minutes: its limit is 90 (margin 1.5), not
    the fixed 30 that would kill it; without a measured time the fixed limit stays."""
    from softmax_ood.estimate import train_minutes

    cluster = {"minutes_per_seed": {"train": 30}, "seconds_per_epoch": {"wrn-40-2": 18}}
    assert train_minutes({"epochs": 200}, "wrn-40-2", cluster) == 90
    assert train_minutes({"epochs": 200}, "densenet", cluster) == 30
    assert train_minutes({"epochs": 10}, "wrn-40-2", cluster) == 30  # never below the fixed limit
    assert train_minutes({"epochs": 201}, "wrn-40-2", cluster) == 91  # rounded up
