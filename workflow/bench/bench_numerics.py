"""Pinned numerics, measured in one run: do the weights depend on the CPU, and what does the
pin cost?

1. Identity. ``numerics_probe.py`` (a seeded 200-step SGD training of a small conv net plus a
   NumPy/SciPy/scikit-learn computation) runs under pinned numerics with a clean environment,
   and again with every back end's variable set by the "user" to another code path
   (``ATEN_CPU_CAPABILITY=default``, ``ONEDNN_MAX_CPU_ISA=SSE41``, ``MKL_CBWR=AUTO``,
   ``OPENBLAS_CORETYPE=Sandybridge``, 2 threads): the pin must win, so the hashes must agree.
   Native runs with the same variables show that each of them changes the bytes when not
   pinned (so the agreement above is not vacuous).
2. Another CPU. If ``qemu-x86_64`` is installed (Debian: ``apt-get install qemu-user``), the
   probe also runs under emulated CPUs without AVX-512 (an Intel Haswell and an AMD EPYC-Rome:
   there every library's own CPU detection sees AVX2 only and another vendor), pinned and
   native; the pinned hashes must equal this machine's (also with the channels_last layout).
3. Cost. ``bench_train.py``'s bare loop, pinned vs native, best of ``--repeat``.

    python workflow/bench/bench_numerics.py [--steps 200] [--qemu-steps 60] [--no-qemu]

Exit status 1 if a pinned hash differs anywhere.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PROBE = ROOT / "workflow/bench/numerics_probe.py"
sys.path.insert(0, str(ROOT / "src"))

from softmax_ood.numerics import ENV_KEY, PINNED_ENV, host_description  # noqa: E402

# what a user's shell (or another machine's defaults) might hold: another path per back end
USER_ENV = {
    "ATEN_CPU_CAPABILITY": "default",
    "ONEDNN_MAX_CPU_ISA": "SSE41",
    "DNNL_MAX_CPU_ISA": "SSE41",
    "MKL_CBWR": "AUTO",
    "OPENBLAS_CORETYPE": "Sandybridge",
    "OMP_NUM_THREADS": "2",
}
# native runs with one back end moved to another path each: does each change the bytes?
NATIVE_VARIANTS = {
    "ATEN_CPU_CAPABILITY": "default",
    "ONEDNN_MAX_CPU_ISA": "SSE41",
    "MKL_CBWR": "COMPATIBLE",
    "OPENBLAS_CORETYPE": "Sandybridge",
    "OMP_NUM_THREADS": "2",
}
QEMU_CPUS = ("Haswell", "EPYC-Rome")


def clean_env() -> dict:
    env = {k: v for k, v in os.environ.items() if k not in PINNED_ENV and k != ENV_KEY}
    env["PYTHONPATH"] = str(ROOT / "src")
    return env


def probe(
    pin: str,
    steps: int,
    extra: dict | None = None,
    qemu_cpu: str | None = None,
    channels_last: bool = False,
) -> dict:
    env = {**clean_env(), **(extra or {})}
    cmd = [sys.executable, str(PROBE), "--steps", str(steps), "--pin", pin]
    if channels_last:
        cmd.append("--channels-last")
    if qemu_cpu:
        cmd = ["qemu-x86_64", "-cpu", qemu_cpu, os.path.realpath(sys.executable), *cmd[1:]]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=ROOT)
    if proc.returncode != 0:
        raise SystemExit(f"probe failed ({' '.join(cmd)}):\n{proc.stderr[-2000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def bare_loop_seconds(pin: str, repeat: int) -> float:
    """bench_train.py's yardstick (its bare loop) in a fresh process, pinned or native."""
    env = clean_env()
    if pin == "pinned":
        env.update(PINNED_ENV)
        env[ENV_KEY] = "pinned"
    cmd = [sys.executable, str(ROOT / "workflow/bench/bench_train.py"), "--yardstick"]
    proc = subprocess.run(
        [*cmd, "--repeat", str(repeat)], capture_output=True, text=True, env=env, cwd=ROOT
    )
    m = re.search(r"yardstick: ([\d.]+) s", proc.stdout)
    if proc.returncode != 0 or not m:
        raise SystemExit(f"bench_train failed:\n{proc.stdout[-1000:]}{proc.stderr[-2000:]}")
    return float(m.group(1))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--qemu-steps", type=int, default=60, help="steps under emulation (slow)")
    ap.add_argument("--no-qemu", action="store_true")
    ap.add_argument("--no-speed", action="store_true")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    print(f"CPU: {host_description()}")
    rows, ok = [], True

    def show(label, r, ref=None, ref_name="pinned"):
        nonlocal ok
        same = ""
        if ref is not None:
            agree = (
                r["weights_sha256"] == ref["weights_sha256"]
                and r["numpy_sha256"] == ref["numpy_sha256"]
            )
            same = f"same as {ref_name}" if agree else f"DIFFERS from {ref_name}"
            if label.startswith("pinned") and not agree:
                ok = False
        print(
            f"  {label:<46} weights {r['weights_sha256'][:12]}  numpy {r['numpy_sha256'][:12]}  "
            f"loss {r['final_loss']:.6f}  torch {r['torch_capability']:<7} {same}"
        )
        rows.append((label, r))

    print(f"identity ({args.steps} SGD steps; sha256 of the weights and of the NumPy results):")
    ref = probe("pinned", args.steps)
    show("pinned, clean environment", ref)
    show(
        "pinned, user env "
        + ",".join(f"{k}" for k in ("ATEN", "ONEDNN", "MKL", "OPENBLAS", "OMP")),
        probe("pinned", args.steps, USER_ENV),
        ref,
    )
    native = probe("native", args.steps)
    show("native (this CPU's own paths)", native, ref)
    for k, v in NATIVE_VARIANTS.items():
        show(f"native + {k}={v}", probe("native", args.steps, {k: v}), native, "native")
    if not args.no_qemu:
        if shutil.which("qemu-x86_64") is None:
            print("emulated CPUs: skipped (qemu-x86_64 not installed: apt-get install qemu-user)")
        else:
            print(f"emulated CPUs without AVX-512 (qemu-x86_64, {args.qemu_steps} steps):")
            qref = probe("pinned", args.qemu_steps)
            show(f"pinned, this machine ({args.qemu_steps} steps)", qref)
            for cpu in QEMU_CPUS:
                show(
                    f"pinned, emulated {cpu}", probe("pinned", args.qemu_steps, qemu_cpu=cpu), qref
                )
                show(
                    f"native, emulated {cpu}", probe("native", args.qemu_steps, qemu_cpu=cpu), qref
                )
            # the training code's channels_last layout (config compute.channels_last) is pinned too
            cref = probe("pinned", args.qemu_steps, channels_last=True)
            show("pinned channels_last, this machine", cref)
            for cpu in QEMU_CPUS:
                show(
                    f"pinned channels_last, emulated {cpu}",
                    probe("pinned", args.qemu_steps, qemu_cpu=cpu, channels_last=True),
                    cref,
                    "pinned channels_last",
                )
    if not args.no_speed:
        t_pin = bare_loop_seconds("pinned", args.repeat)
        t_nat = bare_loop_seconds("native", args.repeat)
        print(
            f"cost of pinning: bench_train.py bare loop pinned {t_pin:.2f} s vs native "
            f"{t_nat:.2f} s -> ratio {t_pin / t_nat:.2f}"
        )
    print("pinned hashes agree everywhere" if ok else "PINNED HASHES DIFFER")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
