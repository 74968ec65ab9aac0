"""The toy study's frame: ``n_points`` points of the line ``y = slope * x`` plus Gaussian noise,
one line per seed."""

from __future__ import annotations

import numpy as np
import pandas as pd


def lines(section: dict) -> pd.DataFrame:
    rows = []
    for seed in section["seeds"]:
        rng = np.random.default_rng(int(seed))
        x = np.linspace(0.0, 1.0, int(section["n_points"]))
        y = float(section["slope"]) * x + rng.normal(0.0, float(section["noise"]), x.size)
        rows.append(pd.DataFrame({"seed": int(seed), "x": x, "y": y}))
    return pd.concat(rows, ignore_index=True)


def slopes(frame: pd.DataFrame) -> pd.DataFrame:
    """The least-squares slope and residual spread of each seed's line."""
    out = []
    for seed, g in frame.groupby("seed", sort=True):
        slope, intercept = np.polyfit(g["x"], g["y"], 1)
        residual = g["y"] - (slope * g["x"] + intercept)
        out.append({"seed": int(seed), "slope": float(slope), "residual_sd": float(residual.std())})
    return pd.DataFrame(out)
