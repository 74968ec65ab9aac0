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
