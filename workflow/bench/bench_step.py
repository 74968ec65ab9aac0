"""A faster training step at the same bytes (issue 44): candidates vs today's step, in one run.

The default's main model (``logitnorm.main_arch`` at ``data.image_size``, its recipe's batch
size, the config's numerics and ``compute.channels_last``; synthetic random images and labels)
is trained by train.py's own loop (``_Loop.train_epoch``: the batch draw, forward, loss, the
finiteness check, backward, optimiser and schedule steps, the running sums) under each
candidate:

=============================  ==================================================================
eager                          (a) today's step, exactly as ``train.fit`` runs it
compile                        (b) ``torch.compile`` of the model (inductor's C++ back end), its
                               code pinned: ``cpp.simdlen`` 256 (AVX2 vectors on every host) and
                               gcc's target ``-march=x86-64-v3`` instead of ``native``; dropout's
                               masks from inductor's own generator (a Philox draw per element)
compile-aten-rng               (b') as (b), the masks drawn by ATen's kernels as in eager
                               (inductor's ``fallback_random``)
fused-sgd                      (c) ``torch.optim.SGD(..., fused=True)`` (ATen's one-kernel step)
rand-mask                      (d) dropout's mask as ``rand_like(x) >= p`` (one uniform draw per
                               element; keep-probability 1 - p as ``bernoulli_(1 - p)``)
fused-sgd+rand-mask            (e) the eager combination of (c) and (d)
compile-aten-rng+fused+rand    (e) all three: (b') with (c) and (d)
=============================  ==================================================================

Speed: one process, numerics pinned, one thread; each candidate compiled (if it compiles) and
warmed up first (compile seconds reported apart, cold and warm, inductor's cache in the named
``--cache-dir``), then ``--repeat`` rounds, each timing ``--steps`` steps of every candidate in
turn (a, b, c, ..., a, b, c, ...: machine load hits all alike). Per round the ratio
eager / candidate (CPU time); printed: the median ratio, its quartiles and its range over the
rounds.

Bytes: per emulated host, one process trains every candidate ``--check-steps`` steps from the
same seed, for each loss of the main cell, and prints the sha256 of the state_dict's tensors.
Hosts are emulated as bench_numerics.py does it, by capping what each library detects: "avx512"
is this machine; "avx2" is this machine seen as an AVX2-only CPU: torch's CPU-feature queries
(which inductor reads to choose its vector ISA) report no AVX-512, gcc's ``-march=native``
becomes ``-march=haswell``, glibc's ifuncs skip AVX-512 (``GLIBC_TUNABLES``); ATen and oneDNN
are capped at AVX2 by the pin on both. Each host has its own fresh inductor cache (a shared one
would hand the second host the first one's code). ``compile-native`` is a bytes-only control:
inductor's code as it chooses it without the pin (the host's widest vectors, ``-march=native``);
if its bytes differ between the hosts, the check can tell code paths apart (it is not vacuous)
and the pin is what makes the compiled candidates agree.

    nice -n 10 python workflow/bench/bench_step.py [--steps 5] [--repeat 20] [--check-steps 20]
        [--candidates eager compile ...] [--cache-dir DIR] [--no-bytes]

The adoption bar (issue 44): median ratio >= 1.3 on the whole step and identical bytes across
the emulated hosts; identity with eager's bytes is reported beside it.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_flops import load_config, main_model_settings  # noqa: E402

from softmax_ood.numerics import ENV_KEY, PINNED_ENV, host_description  # noqa: E402

BAR = 1.3  # issue 44: the whole step at least this much faster, with identical bytes
SIMDLEN = 256  # AVX2's vector width: what every x86-64 host with AVX2 can run
MARCH = "x86-64-v3"  # gcc's AVX2 + FMA baseline, generic tuning
EMULATED_NATIVE_MARCH = "haswell"  # what gcc's -march=native means on the emulated AVX2 host
# glibc's CPU features an AVX2-only host lacks (its ifuncs then take their AVX2 paths)
AVX2_GLIBC_TUNABLES = "glibc.cpu.hwcaps=" + ",".join(
    f"-{f}"
    for f in (
        "AVX512F",
        "AVX512CD",
        "AVX512BW",
        "AVX512DQ",
        "AVX512VL",
        "AVX512_VNNI",
        "AVX512_BF16",
        "AVX512_IFMA",
        "AVX512_VBMI",
        "AVX512_VBMI2",
        "AVX512_BITALG",
        "AVX512_VPOPCNTDQ",
    )
)
HOSTS = ("avx512", "avx2")

# name -> (compile: None / "pinned" / "native", fused SGD, dropout mask, inductor fallback_random)
CANDIDATES = {
    "eager": (None, False, "bernoulli", False),
    "compile": ("pinned", False, "bernoulli", False),
    "compile-aten-rng": ("pinned", False, "bernoulli", True),
    "fused-sgd": (None, True, "bernoulli", False),
    "rand-mask": (None, False, "rand", False),
    "fused-sgd+rand-mask": (None, True, "rand", False),
    "compile-aten-rng+fused+rand": ("pinned", True, "rand", True),
}
RAND_MASK_F = None  # the _Functional the rand-mask candidates' blocks use (made on first use)
CONTROLS = {"compile-native": ("native", False, "bernoulli", False)}


def rand_mask_dropout(x, p: float = 0.5, training: bool = True, inplace: bool = False):
    """``F.dropout`` with its mask drawn as ``rand_like(x) >= p``: each element kept with
    probability ``1 - p`` (float32 uniforms on a 2^-24 grid; ``bernoulli_`` draws its own
    way), the kept ones scaled by ``1 / (1 - p)`` as ATen's dropout does."""
    import torch

    if not training or p == 0:
        return x
    if p == 1:
        return torch.zeros_like(x)
    noise = torch.rand_like(x).ge_(p).div_(1 - p)  # in place: 1.0 (kept) or 0.0, then scaled
    return x.mul_(noise) if inplace else x * noise


class _Functional:
    """``torch.nn.functional`` with :func:`rand_mask_dropout` as its ``dropout``."""

    def __init__(self, functional):
        self._f = functional

    def __getattr__(self, name):
        return rand_mask_dropout if name == "dropout" else getattr(self._f, name)


def _rand_mask_functional():
    """One instance for the whole run: a compiled model guards on the object its dropout is
    looked up on, so a new one per call would recompile."""
    from torch.nn import functional

    return _Functional(functional)


def _settings(args) -> dict:
    """The main model's settings from the config (the candidate list's defaults beside)."""
    cfg = load_config(ROOT, args.configfile)
    s = main_model_settings(cfg)
    ln = cfg["logitnorm"]
    recipe = dict(cfg["recipes"][ln["recipe"]])
    recipe["train_size"] = None  # synthetic data: every image is a training image
    if args.batch:
        recipe["batch_size"] = s["batch"] = args.batch
    if args.image_size:
        s["image_size"] = args.image_size
    arch = args.arch or s["arch"]
    return {
        **s,
        "arch": arch,
        "arch_cfg": cfg["architectures"][arch],
        "recipe_name": ln["recipe"],
        "recipe": recipe,
        "losses": {name: cfg["losses"][name] for name in ln["main_losses"]},
        "classes": len(cfg["data"].get("id_classes") or range(10)),
    }


# ---------------------------------------------------------------- worker side (imports torch)


def inductor_options(mode: str, fallback_random: bool, host: str) -> dict:
    """Inductor's settings for one compiled candidate: its code pinned (``mode`` "pinned") or
    as inductor chooses it on a host without the pin ("native": the host's widest vectors, its
    ISA list's first, and ``-march=native``, which on the emulated AVX2 host is what gcc picks
    there). Passed to ``torch.compile(options=...)``: each candidate gets its own back end (a
    global setting would be ignored by a graph another candidate compiled)."""
    if mode == "pinned":
        simdlen, march = SIMDLEN, MARCH
    else:
        from torch._inductor import cpu_vec_isa

        simdlen = cpu_vec_isa.valid_vec_isa_list()[0].bit_width()
        march = EMULATED_NATIVE_MARCH if host == "avx2" else None
    return {
        "cpp.simdlen": simdlen,
        "cpp.march": march,
        "fallback_random": fallback_random,
    }


def _emulate_host(host: str) -> None:
    """On the emulated AVX2 host torch's CPU-feature queries (inductor's ISA choice) report no
    AVX-512, VNNI or AMX (the environment part, glibc's tunables, is set by the parent)."""
    if host != "avx2":
        return
    import torch

    for name in dir(torch.cpu):
        if name.startswith(("_is_avx512", "_is_vnni", "_is_amx")):
            setattr(torch.cpu, name, lambda: False)


def _run(s: dict, cand: tuple, loss_name: str, seed: int, steps: int, host: str):
    """A fresh model, optimiser and train.py loop for candidate ``cand``: returns
    ``(epoch, model)``, ``epoch()`` one pass of ``steps`` steps over the synthetic images."""
    import torch

    from softmax_ood import train
    from softmax_ood.experiment import build_run
    from softmax_ood.models import wrn

    compile_mode, fused, mask, fallback_rng = cand
    train.seed_everything(seed, 1)
    meta = {"num_classes": s["classes"], "channels": 1, "image_size": s["image_size"]}
    model, loss_fn = build_run(s["arch_cfg"], s["losses"][loss_name], meta)
    if s["channels_last"]:
        model = model.to(memory_format=torch.channels_last)
    cfg = train.TrainConfig.from_dict(s["recipe"])
    opt, sched = train.build_optimizer(model, cfg, steps)
    if fused:  # the same hyper-parameters and schedule, ATen's fused step
        group = {k: v for k, v in opt.defaults.items() if k not in ("fused", "foreach")}
        group["lr"] = cfg.lr
        opt = torch.optim.SGD(model.parameters(), **group, fused=True)
        sched = torch.optim.lr_scheduler.LambdaLR(opt, sched.lr_lambdas[0])
    net = model
    if compile_mode:
        net = torch.compile(model, options=inductor_options(compile_mode, fallback_rng, host))
    gen = torch.Generator().manual_seed(seed)
    n, size = steps * cfg.batch_size, s["image_size"]
    x = torch.rand(n, 1, size, size, generator=gen)
    y = torch.randint(0, s["classes"], (n,), generator=gen)
    loop = train._Loop(net, loss_fn, opt, sched, gen, cfg, "bench", None, False, s["channels_last"])
    functional = wrn.F
    global RAND_MASK_F
    RAND_MASK_F = RAND_MASK_F or _rand_mask_functional()

    def epoch(number: int = 1) -> None:
        wrn.F = RAND_MASK_F if mask == "rand" else functional
        try:
            loop.train_epoch(x, y, steps, n, number)
        finally:
            wrn.F = functional

    return epoch, model


def _state_sha(model) -> str:
    """sha256 of the state_dict's tensors in the standard layout (as checkpoints hold them)."""
    import torch

    model = model.to(memory_format=torch.contiguous_format)
    blob = b"".join(t.detach().contiguous().numpy().tobytes() for t in model.state_dict().values())
    return hashlib.sha256(blob).hexdigest()


def worker_time(s: dict, names: list[str], steps: int, repeat: int) -> dict:
    """Compile and warm every candidate, then ``repeat`` interleaved rounds of ``steps``
    steps each: CPU seconds per step, per candidate and round."""
    import torch

    loss = next(iter(s["losses"]))
    runs, compile_s = {}, {}
    for name in names:
        epoch, _ = _run(s, CANDIDATES[name], loss, 0, steps, "avx512")
        t = time.perf_counter()
        epoch()  # compiles (forward, backward) and warms up
        first = time.perf_counter() - t
        t = time.perf_counter()
        epoch()
        if CANDIDATES[name][0]:
            compile_s[name] = round(first - (time.perf_counter() - t), 2)
        runs[name] = epoch
    torch._dynamo.config.error_on_recompile = True  # every graph is compiled: none in the timing
    per_step = {name: [] for name in names}
    for _ in range(repeat):
        for name in names:
            t = time.process_time()
            runs[name]()
            per_step[name].append((time.process_time() - t) / steps)
    return {
        "per_step": per_step,
        "compile_s": compile_s,
        "kernels": torch.backends.cpu.get_cpu_capability(),
        "torch": torch.__version__,
        "loss": loss,
    }


def worker_bytes(s: dict, names: list[str], steps: int, host: str) -> dict:
    """sha256 of each candidate's state_dict after ``steps`` steps from seed 0, per loss."""
    import torch

    out = {}
    for name in names:
        for loss in s["losses"]:
            torch._dynamo.reset()
            epoch, model = _run(s, {**CANDIDATES, **CONTROLS}[name], loss, 0, steps, host)
            epoch()
            out[f"{name}/{loss}"] = _state_sha(model)
    from torch._inductor import cpu_vec_isa

    return {
        "sha": out,
        "kernels": torch.backends.cpu.get_cpu_capability(),
        "inductor_isas": [str(isa) for isa in cpu_vec_isa.valid_vec_isa_list()],
    }


def worker(args) -> int:
    """Run in a fresh process whose environment the parent set (pin, host, cache)."""
    s = json.loads(args.settings)
    if args.worker == "bytes":
        _emulate_host(args.host)
    import torch

    torch.set_num_threads(1)
    from softmax_ood import numerics

    numerics.check()
    if args.worker == "time":
        out = worker_time(s, args.candidates, args.steps, args.repeat)
    else:
        out = worker_bytes(s, args.candidates, args.check_steps, args.host)
    print(json.dumps(out))
    return 0


# ---------------------------------------------------------------- parent side (no torch)


def _child(args, s: dict, mode: str, cache: Path, host: str = "avx512", names=None) -> dict:
    """One worker process with the config's numerics, ``host``'s caps and inductor's cache in
    ``cache``."""
    env = {k: v for k, v in os.environ.items() if k not in PINNED_ENV and k != ENV_KEY}
    if s["numerics"] == "pinned":
        env.update(PINNED_ENV)
        env[ENV_KEY] = "pinned"
    env["TORCHINDUCTOR_CACHE_DIR"] = str(cache)
    env["TORCHINDUCTOR_COMPILE_THREADS"] = "1"  # a shared 2-core machine
    env["PYTHONPATH"] = str(ROOT / "src")
    if host == "avx2":
        env["GLIBC_TUNABLES"] = AVX2_GLIBC_TUNABLES
    cmd = [
        sys.executable,
        str(Path(__file__).resolve()),
        "--worker",
        mode,
        "--host",
        host,
    ]
    cmd += [
        "--settings",
        json.dumps(s),
        "--steps",
        str(args.steps),
        "--repeat",
        str(args.repeat),
    ]
    cmd += [
        "--check-steps",
        str(args.check_steps),
        "--candidates",
        *(names or args.candidates),
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=ROOT)
    if proc.returncode != 0:
        raise SystemExit(f"bench_step worker failed ({mode}, {host}):\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def ratios(per_step: dict) -> dict:
    """Per candidate: eager / candidate per round, its median, quartiles, min and max (the
    quartiles need 2 rounds or more)."""
    base = per_step["eager"]
    out = {}
    for name, times in per_step.items():
        r = [b / t for b, t in zip(base, times, strict=True)]
        q1, _, q3 = statistics.quantiles(r, n=4) if len(r) > 1 else (r[0], r[0], r[0])
        out[name] = {
            "ms": 1e3 * statistics.median(times),
            "median": statistics.median(r),
            "q1": q1,
            "q3": q3,
            "low": min(r),
            "high": max(r),
        }
    return out


def report_speed(s: dict, t: dict, args, cache: Path) -> dict:
    """Print the speed part; returns :func:`ratios`."""
    print(
        f"CPU: {host_description()}; torch {t['torch']} kernels {t['kernels']}; numerics "
        f"{s['numerics']}; 1 thread; {s['arch']} at {s['image_size']}x{s['image_size']}, batch "
        f"{s['batch']}, loss {t['loss']}, recipe {s['recipe_name']}"
        + (", channels_last" if s["channels_last"] else "")
    )
    if t["compile_s"]:
        first = next(iter(t["compile_s"]))
        warm = ", ".join(f"{k} {v:.1f} s" for k, v in t["compile_s"].items() if k != first)
        print(
            f"compile (inductor C++, simdlen {SIMDLEN}, -march={MARCH}; cache {cache}; wall, "
            f"not in the step times): {first} {t['compile_s'][first]:.1f} s (first)"
            + (f", then {warm}" if warm else "")
        )
    r = ratios(t["per_step"])
    print(
        f"step time (CPU, median of {args.repeat} interleaved rounds of {args.steps} steps); "
        "ratio = eager / candidate per round: median (quartiles; range):"
    )
    for name, v in r.items():
        print(
            f"  {name:<29} {v['ms']:7.1f} ms/step  ratio {v['median']:.2f} "
            f"({v['q1']:.2f}-{v['q3']:.2f}; {v['low']:.2f}-{v['high']:.2f})"
        )
    return r


def report_bytes(hosts: dict, names: list[str], steps: int) -> dict:
    """Print the bytes part (``hosts``: each emulated host's worker output); returns
    candidate -> (identical across hosts, identical to eager)."""
    print(
        f"bytes (sha256 of the state_dict after {steps} steps from seed 0, per loss; emulated "
        "hosts, one process each, ISAs inductor may choose there: "
        + "; ".join(f"{h} [{', '.join(r['inductor_isas'])}]" for h, r in hosts.items())
        + "):"
    )
    shas = {h: r["sha"] for h, r in hosts.items()}
    verdict = {}
    ref = shas[HOSTS[0]]
    for name in names:
        keys = [k for k in ref if k.split("/")[0] == name]
        across = all(shas[h][k] == ref[k] for h in HOSTS for k in keys)
        same = {k.split("/")[1]: ref[k] == ref["eager/" + k.split("/")[1]] for k in keys}
        verdict[name] = (across, all(same.values()))
        digests = " ".join(f"{k.split('/')[1]} {ref[k][:10]}" for k in keys)
        if all(same.values()) or not any(same.values()):
            vs = "identical" if all(same.values()) else "differ"
        else:
            vs = ", ".join(f"{loss} {'identical' if v else 'differs'}" for loss, v in same.items())
        print(
            f"  {name:<29} {digests}  across hosts: {'identical' if across else 'DIFFER'}"
            + ("" if name == "eager" else f"; vs eager: {vs}")
        )
    return verdict


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--candidates", nargs="+", default=list(CANDIDATES))
    ap.add_argument("--steps", type=int, default=5, help="steps per candidate and round")
    ap.add_argument("--repeat", type=int, default=20, help="interleaved rounds")
    ap.add_argument("--check-steps", type=int, default=20, help="steps before hashing")
    ap.add_argument("--cache-dir", type=Path, default=None, help="inductor's cache (timing)")
    ap.add_argument("--no-bytes", action="store_true")
    ap.add_argument("--no-controls", action="store_true", help="skip compile-native's bytes")
    ap.add_argument("--arch", default=None, help="default: the config's main model")
    ap.add_argument("--image-size", type=int, default=None, help="default: data.image_size")
    ap.add_argument("--batch", type=int, default=None, help="default: the recipe's batch size")
    ap.add_argument("--configfile", default=None, help="overlay on config/default.yaml")
    ap.add_argument("--worker", choices=["time", "bytes"], help=argparse.SUPPRESS)
    ap.add_argument("--host", choices=HOSTS, default="avx512", help=argparse.SUPPRESS)
    ap.add_argument("--settings", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        return worker(args)
    names = ["eager", *[c for c in args.candidates if c != "eager"]]
    args.candidates = names
    unknown = sorted(set(names) - set(CANDIDATES))
    if unknown:
        ap.error(f"unknown candidate(s) {unknown}; choose among {list(CANDIDATES)}")
    s = _settings(args)
    with tempfile.TemporaryDirectory(prefix="bench_step-") as tmp:
        cache = args.cache_dir or Path(tmp) / "inductor-timing"
        r = report_speed(s, _child(args, s, "time", cache), args, cache)
        if args.no_bytes:
            return 0
        checked = names + ([] if args.no_controls else list(CONTROLS))
        hosts = {
            h: _child(args, s, "bytes", Path(tmp) / f"inductor-{h}", h, checked) for h in HOSTS
        }
    verdict = report_bytes(hosts, checked, args.check_steps)
    print(f"verdict (bar: ratio >= {BAR} and identical bytes across the emulated hosts):")
    for name in names[1:]:
        fast, (same, eager) = r[name]["median"] >= BAR, verdict[name]
        print(
            f"  {name:<29} {'ADOPT' if fast and same else 'not adopted'}: ratio "
            f"{r[name]['median']:.2f} {'>=' if fast else '<'} {BAR}, bytes "
            f"{'identical' if same else 'differ'} across hosts"
            + (", identical to eager" if eager else ", not all identical to eager")
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
