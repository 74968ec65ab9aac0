"""A seeded 200-step SGD training of a small conv net (conv, batch norm, linear: oneDNN, ATen
and MKL all take part) plus a NumPy/SciPy/scikit-learn computation; prints the sha256 of the
weights and of the NumPy results as one JSON line.

    python workflow/bench/numerics_probe.py [--steps 200] [--pin pinned|native]

``--pin pinned`` applies the workflow's pinned numerics (softmax_ood.numerics) in this process
before torch and numpy load, exactly as the Snakefile does for its jobs. Run under different
environments (or under ``qemu-x86_64 -cpu Haswell``, a CPU without AVX-512) to compare hashes:
``tests/test_numerics.py`` does, and docs/provenance.md (pinned numerics) reports it.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "src"))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--pin", choices=["pinned", "native", "none"], default="none")
    ap.add_argument(
        "--channels-last", action="store_true", help="model and images in channels_last layout"
    )
    args = ap.parse_args()
    from softmax_ood import numerics

    if args.pin != "none":
        numerics.apply(args.pin)  # before torch/numpy load, as the workflow does
    import numpy as np
    import torch

    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(0)
    x = torch.randn(512, 1, 8, 8, generator=g)
    y = torch.randint(0, 10, (512,), generator=g)
    nn = torch.nn
    model = nn.Sequential(
        nn.Conv2d(1, 32, 3, padding=1),
        nn.BatchNorm2d(32),
        nn.ReLU(),
        nn.Conv2d(32, 64, 3, padding=1),
        nn.ReLU(),
        nn.AdaptiveAvgPool2d(2),
        nn.Flatten(),
        nn.Linear(256, 10),
    )
    if args.channels_last:
        model = model.to(memory_format=torch.channels_last)
        x = x.contiguous(memory_format=torch.channels_last)
    opt = torch.optim.SGD(
        model.parameters(), lr=0.1, momentum=0.9, nesterov=True, weight_decay=5e-4
    )
    loss = torch.tensor(float("nan"))  # the last step's loss
    for _ in range(args.steps):
        idx = torch.randint(0, 512, (64,), generator=g)
        loss = nn.functional.cross_entropy(model(x[idx]), y[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
    weights = hashlib.sha256(
        b"".join(p.detach().contiguous().numpy().tobytes() for p in model.state_dict().values())
    ).hexdigest()

    from scipy.linalg import solve
    from sklearn.linear_model import LogisticRegression

    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((300, 300)), rng.standard_normal((300, 300))
    value = (
        (np.exp(a) @ b).sum() + np.log(np.abs(a) + 1).sum() + solve(a + 300 * np.eye(300), b).sum()
    )
    clf = LogisticRegression(max_iter=200).fit(a[:, :20], (b[:, 0] > 0).astype(int))
    numpy_hash = hashlib.sha256(np.array([value]).tobytes() + clf.coef_.tobytes()).hexdigest()
    print(
        json.dumps(
            {
                "weights_sha256": weights,
                "numpy_sha256": numpy_hash,
                "final_loss": round(float(loss.detach()), 6),
                "torch_capability": torch.backends.cpu.get_cpu_capability(),
                "numerics": numerics.current_mode(),
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
