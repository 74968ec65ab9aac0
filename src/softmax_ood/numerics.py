"""Pinned numerics: the same bytes on every x86-64 machine with AVX2.

The numerical back ends choose their code path from the CPU they find: PyTorch's ATen kernels
(``ATEN_CPU_CAPABILITY``: default / AVX2 / AVX-512), oneDNN's convolutions (its maximal ISA),
MKL's GEMM (its code path, which differs between Intel and AMD), OpenBLAS's kernels for
NumPy/SciPy/scikit-learn (its core type) and NumPy's own SIMD loops. Each path sums in its own
order, so the same seeded training gives other weights on another CPU. ``numerics: pinned``
(the default) makes every job use one baseline every current x86-64 machine has:

=========================  ===============================  =====================================
variable                   value                            what it pins
=========================  ===============================  =====================================
ATEN_CPU_CAPABILITY        avx2                             PyTorch's vectorised CPU kernels
ONEDNN_MAX_CPU_ISA         AVX2 (and DNNL_MAX_CPU_ISA)      oneDNN (convolutions)
MKL_CBWR                   COMPATIBLE                       MKL's GEMM (Linear layers): the one
                                                            mode MKL honours on Intel and AMD alike
MKL_ENABLE_INSTRUCTIONS    AVX2                             MKL's other routines
OPENBLAS_CORETYPE          Haswell                          OpenBLAS (NumPy, SciPy, scikit-learn)
NPY_DISABLE_CPU_FEATURES   X86_V4 AVX512_ICL AVX512_SPR     NumPy's AVX-512 loops (AVX2 kept)
*_NUM_THREADS              1                                thread counts (OpenMP, MKL, OpenBLAS)
=========================  ===============================  =====================================

The variables must be in the environment before those libraries load, so the workflow sets
them in its own process at parse time (:func:`apply`, called by ``rules/common.smk``) and every
job it starts (scripts, notebooks, cluster jobs that re-read the Snakefile) inherits them. A
script checks at start (:func:`check`) that PyTorch really runs its AVX2 kernels (a CPU without
AVX2 stops with one sentence). ``numerics: native`` leaves the environment as it is (faster on
AVX-512 machines; bytes then depend on the CPU). Every provenance record carries
:func:`record` (mode and pinned values, nothing host-specific).

This module imports neither torch nor numpy (the Snakefile uses it).
"""

from __future__ import annotations

import os
import platform
import sys

from .errors import UserError

__all__ = ["ENV_KEY", "MODES", "PINNED_ENV", "apply", "check", "current_mode", "record"]

MODES = ("pinned", "native")
ENV_KEY = "SOFTMAX_OOD_NUMERICS"  # the mode the workflow set for its jobs

PINNED_ENV = {
    "ATEN_CPU_CAPABILITY": "avx2",
    "ONEDNN_MAX_CPU_ISA": "AVX2",
    "DNNL_MAX_CPU_ISA": "AVX2",
    "MKL_CBWR": "COMPATIBLE",
    "MKL_ENABLE_INSTRUCTIONS": "AVX2",
    "OPENBLAS_CORETYPE": "Haswell",
    "NPY_DISABLE_CPU_FEATURES": "X86_V4 AVX512_ICL AVX512_SPR",
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
}
# what PyTorch reports under the pin (torch.backends.cpu.get_cpu_capability())
PINNED_TORCH_CAPABILITY = "AVX2"


class NumericsError(UserError, RuntimeError):
    """Pinned numerics cannot hold on this machine; the message is one sentence."""


def _x86_64() -> bool:
    return platform.machine().lower() in ("x86_64", "amd64")


def apply(mode: str, environ=None) -> dict:
    """Set the environment for ``mode`` ("pinned" or "native") in ``environ`` (default:
    ``os.environ``, inherited by every job started afterwards); returns what it set.

    Pinned overrides whatever the user's shell had for these variables (a pin the user can
    change by accident is no pin); native sets nothing but the mode itself.
    """
    if mode not in MODES:
        raise ValueError(f"numerics is {mode!r}; allowed values: {', '.join(MODES)}")
    env = os.environ if environ is None else environ
    values = dict(PINNED_ENV) if mode == "pinned" else {}
    values[ENV_KEY] = mode
    env.update(values)
    return values


def current_mode(environ=None) -> str:
    """The mode the workflow set ("pinned", "native"), or "unset" outside the workflow."""
    env = os.environ if environ is None else environ
    return env.get(ENV_KEY, "unset")


def record(environ=None) -> dict:
    """What a provenance record says about the numerics: the mode and, when pinned, the
    pinned values (identical on every machine, so pinned records stay byte-identical)."""
    env = os.environ if environ is None else environ
    mode = current_mode(env)
    out = {"mode": mode}
    if mode == "pinned":
        out["baseline"] = "x86-64 AVX2"
        out["env"] = {k: env.get(k) for k in sorted(PINNED_ENV)}
    return out


def check(environ=None, capability: str | None = None) -> None:
    """In a job under pinned numerics, stop with one sentence if the pin does not hold:
    the environment was changed after the workflow set it, the machine is not x86-64, or
    PyTorch (when already imported; or ``capability`` as given) does not run its AVX2 kernels
    (a CPU without AVX2)."""
    env = os.environ if environ is None else environ
    if current_mode(env) != "pinned":
        return
    # thread counts are the job's own setting: Snakemake sets them from a rule's ``threads``
    # (1 in the embedded default; more at paper scale), so they are not part of the check
    changed = sorted(
        k for k, v in PINNED_ENV.items() if not k.endswith("_NUM_THREADS") and env.get(k) != v
    )
    if changed:
        raise NumericsError(
            f"numerics: pinned, but {', '.join(changed)} differ from the pinned values; run "
            "through snakemake (it sets them) or set numerics: native"
        )
    if not _x86_64():
        raise NumericsError(
            f"numerics: pinned needs an x86-64 CPU with AVX2, this machine is "
            f"{platform.machine()}; set numerics: native in the config (results are then "
            "reproducible on this machine only)"
        )
    torch = sys.modules.get("torch")
    if capability is None and torch is not None:
        capability = torch.backends.cpu.get_cpu_capability()
    if capability is not None:
        cap = capability
        if cap != PINNED_TORCH_CAPABILITY:
            raise NumericsError(
                f"numerics: pinned needs an x86-64 CPU with AVX2, PyTorch found {cap} on this "
                "one; set numerics: native in the config (results are then reproducible on "
                "this machine only)"
            )


def host_description() -> str:
    """This machine's CPU model and vector ISA, for benchmark output (never for provenance:
    pinned records must not depend on the host)."""
    model, flags = platform.processor() or platform.machine(), set()
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name") and ":" in line:
                    model = line.split(":", 1)[1].strip()
                elif line.startswith("flags") and ":" in line:
                    flags = set(line.split(":", 1)[1].split())
                if flags and model:
                    break
    except OSError:
        pass
    isa = next(
        (
            name
            for flag, name in (("avx512f", "AVX-512"), ("avx2", "AVX2"), ("avx", "AVX"))
            if flag in flags
        ),
        "unknown ISA" if not flags else "SSE",
    )
    return f"{model} ({platform.machine()}, {isa})"
