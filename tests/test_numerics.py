"""Pinned numerics (softmax_ood.numerics): the environment the workflow sets for every job,
what provenance records, and (slow) that the pin decides the bytes whatever the user's
environment holds."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from softmax_ood import numerics
from softmax_ood.numerics import ENV_KEY, PINNED_ENV, NumericsError, apply, check, record

ROOT = Path(__file__).resolve().parents[1]
PROBE = ROOT / "workflow/bench/numerics_probe.py"


def test_pinned_overrides_the_users_values_and_native_sets_nothing():
    env = {"ATEN_CPU_CAPABILITY": "avx512", "MKL_CBWR": "AUTO", "HOME": "/root"}
    apply("pinned", env)
    assert {k: env[k] for k in PINNED_ENV} == PINNED_ENV
    assert env[ENV_KEY] == "pinned" and env["HOME"] == "/root"
    env = {"ATEN_CPU_CAPABILITY": "avx512"}
    apply("native", env)
    assert env == {"ATEN_CPU_CAPABILITY": "avx512", ENV_KEY: "native"}
    with pytest.raises(ValueError, match="numerics is 'fast'; allowed values: pinned, native"):
        apply("fast", {})


def test_the_pin_is_the_avx2_baseline_with_one_thread():
    assert PINNED_ENV["ATEN_CPU_CAPABILITY"] == "avx2"
    assert PINNED_ENV["ONEDNN_MAX_CPU_ISA"] == PINNED_ENV["DNNL_MAX_CPU_ISA"] == "AVX2"
    # the one MKL mode honoured on AMD as on Intel (MKL_CBWR=AVX2 reads back as AUTO on AMD)
    assert PINNED_ENV["MKL_CBWR"] == "COMPATIBLE"
    assert PINNED_ENV["OPENBLAS_CORETYPE"] == "Haswell"
    assert all(PINNED_ENV[k] == "1" for k in PINNED_ENV if k.endswith("_NUM_THREADS"))


def test_record_is_host_independent_and_names_the_mode():
    env = {}
    apply("pinned", env)
    rec = record(env)
    assert rec == {
        "mode": "pinned",
        "baseline": "x86-64 AVX2",
        "env": dict(sorted(PINNED_ENV.items())),
    }
    assert record({ENV_KEY: "native"}) == {"mode": "native"}
    assert record({}) == {"mode": "unset"}


def test_provenance_records_carry_the_numerics(monkeypatch, tmp_path):
    from softmax_ood.provenance import provenance_record

    monkeypatch.setenv(ENV_KEY, "native")
    f = tmp_path / "x.txt"
    f.write_text("x")
    assert provenance_record(inputs=[f])["numerics"] == {"mode": "native"}


def test_check_stops_with_one_sentence_when_the_pin_does_not_hold(monkeypatch):
    env = {}
    apply("pinned", env)
    check(env, capability="AVX2")  # holds
    with pytest.raises(NumericsError, match="PyTorch found DEFAULT on this one"):
        check(env, capability="DEFAULT")  # a CPU without AVX2
    env["MKL_CBWR"] = "AUTO"
    with pytest.raises(NumericsError, match=r"^numerics: pinned, but MKL_CBWR differ"):
        check(env, capability="AVX2")
    apply("pinned", env)
    monkeypatch.setattr(numerics, "_x86_64", lambda: False)
    with pytest.raises(NumericsError, match="needs an x86-64 CPU with AVX2"):
        check(env, capability="AVX2")
    check({ENV_KEY: "native"})  # native: nothing to check


def _probe(pin: str, steps: int, extra: dict) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in PINNED_ENV and k != ENV_KEY}
    env.update(extra, PYTHONPATH=str(ROOT / "src"))
    proc = subprocess.run(
        [sys.executable, str(PROBE), "--steps", str(steps), "--pin", pin],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_pinned_bytes_do_not_depend_on_the_users_environment():
    """A seeded training (conv, batch norm, linear) and a NumPy/SciPy/sklearn computation:
    pinned, the user's ATEN/oneDNN/MKL/OpenBLAS/thread variables change nothing; native, the
    same variables change the bytes (so the pin is what makes them agree)."""
    user = {
        "ATEN_CPU_CAPABILITY": "default",
        "ONEDNN_MAX_CPU_ISA": "SSE41",
        "MKL_CBWR": "AUTO",
        "OPENBLAS_CORETYPE": "Sandybridge",
        "OMP_NUM_THREADS": "2",
    }
    pinned = _probe("pinned", 60, {})
    assert pinned["torch_capability"] == "AVX2" and pinned["numerics"] == "pinned"
    again = _probe("pinned", 60, user)
    assert again == pinned
    native_user = _probe("native", 60, user)
    assert native_user["weights_sha256"] != pinned["weights_sha256"]
    assert native_user["numpy_sha256"] != pinned["numpy_sha256"]


def test_a_rules_thread_count_is_not_a_broken_pin():
    """Snakemake sets OMP/MKL/OPENBLAS_NUM_THREADS to a rule's ``threads``: that is the job's
    setting, not a changed pin; an ISA variable changed after the workflow set it is."""
    from softmax_ood.numerics import ENV_KEY, NumericsError, check

    env = {**PINNED_ENV, ENV_KEY: "pinned", "OMP_NUM_THREADS": "4", "MKL_NUM_THREADS": "4"}
    check(env, capability="AVX2")
    with pytest.raises(NumericsError, match="MKL_CBWR"):
        check({**env, "MKL_CBWR": "AUTO"}, capability="AVX2")


# The project's Adam (softmax_ood.train.build_optimizer) for 20 steps on one tensor, pinned, then
# MKL_CBWR overridden: MKL's code path, as another CPU would choose it.
_ADAM = """
import hashlib, os, sys
from softmax_ood import numerics
numerics.apply("pinned")
os.environ["MKL_CBWR"] = sys.argv[1]
import torch
from softmax_ood.train import TrainConfig, build_optimizer
torch.manual_seed(0)
model = torch.nn.Linear(1000, 100)
cfg = TrainConfig(epochs=1, batch_size=1, optimizer="adam", lr=1e-3, weight_decay=5e-4)
opt, _ = build_optimizer(model, cfg, 20)
g = torch.Generator().manual_seed(1)
for _ in range(20):
    for p in model.parameters():
        p.grad = torch.randn(p.shape, generator=g) * 1e-2
    opt.step()
print(hashlib.sha256(model.weight.detach().numpy().tobytes()).hexdigest())
"""


@pytest.mark.slow
def test_adam_steps_do_not_depend_on_mkls_code_path():
    """Adam's square root must not come from MKL's vector maths: torch's per-tensor Adam step
    took it from vsSqrt, which under MKL_CBWR=COMPATIBLE on an Intel CPU is not correctly rounded
    (AUTO is), so every Adam-trained model differed between an Intel and an AMD machine."""
    env = {k: v for k, v in os.environ.items() if k not in PINNED_ENV and k != ENV_KEY}
    env["PYTHONPATH"] = str(ROOT / "src")
    digests = {
        mode: subprocess.run(
            [sys.executable, "-c", _ADAM, mode],
            capture_output=True,
            text=True,
            env=env,
            timeout=300,
            check=True,
        ).stdout.strip()
        for mode in ("COMPATIBLE", "AUTO")
    }
    assert len(digests["AUTO"]) == 64
    assert digests["COMPATIBLE"] == digests["AUTO"]
