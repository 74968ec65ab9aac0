"""How Fig. 5's pool of images is cut into the classifier's fit part, its test part and the
theory's statistics part: stratified, seeded, disjoint draws from one pool."""

from __future__ import annotations

import numpy as np


def fit_test_split(groups: np.ndarray, fit_fraction: float, seed: int) -> np.ndarray:
    """Boolean mask of the fit half: within every group (e.g. (ID split, class)),
    ``round(fit_fraction * size)`` members drawn without replacement (seeded), so the fit and
    test parts are random draws from the same pool with the same mix of groups."""
    groups = np.asarray(groups)
    if not 0 < fit_fraction < 1:
        raise ValueError(f"fit_fraction must lie strictly between 0 and 1, got {fit_fraction}")
    rng = np.random.default_rng(seed)
    mask = np.zeros(len(groups), dtype=bool)
    for g in sorted(set(groups.tolist())):
        idx = np.flatnonzero(groups == g)
        mask[rng.choice(idx, int(round(fit_fraction * len(idx))), replace=False)] = True
    return mask


def pool_parts(
    groups: np.ndarray, fit_fraction: float, seed: int, stats_fraction: float | None = None
) -> np.ndarray:
    """The pool cut into disjoint parts, one label per member: ``"fit"``, ``"stats"``, ``"test"``.

    Within every group (e.g. (ID split, class)): the fit part is :func:`fit_test_split`'s
    (``round(fit_fraction * size)`` members, the same draw as without statistics); with
    ``stats_fraction``, ``round(stats_fraction * size)`` of the group's other members are drawn
    for the class statistics (a second seeded stream of ``seed``); the rest is the test part.
    The three parts are disjoint and together the whole group, so each is a random draw from
    one pool with the same mix of groups. ``stats_fraction`` ``None`` (or 0): fit and test
    only.

    :raises ValueError: a share outside (0, 1), or shares that leave no test part
        (``fit_fraction + stats_fraction >= 1``).
    """
    groups = np.asarray(groups)
    fit = fit_test_split(groups, fit_fraction, seed)
    parts = np.full(len(groups), "test", dtype="<U5")
    parts[fit] = "fit"
    if not stats_fraction:
        return parts
    if not 0 < stats_fraction < 1 or fit_fraction + stats_fraction >= 1:
        raise ValueError(
            f"stats_fraction must lie strictly between 0 and 1 - fit_fraction "
            f"({1 - fit_fraction:g}) so that a test part remains, got {stats_fraction}"
        )
    rng = np.random.default_rng([seed, 1])  # its own stream: the fit part stays fit_test_split's
    for g in sorted(set(groups.tolist())):
        rest = np.flatnonzero((groups == g) & ~fit)
        m = min(int(round(stats_fraction * int((groups == g).sum()))), len(rest))
        parts[rng.choice(rest, m, replace=False)] = "stats"
    return parts


#: how Fig. 5's pool is cut into statistics / fit / test parts across networks
CUTS = ("per_network", "shared")


def cut_seed(split_seed: int, network_seed: int) -> int:
    """The seed of network ``network_seed``'s own cut of the pool (``seddik.fig5.cut:
    per_network``): a 31-bit draw of ``SeedSequence([split_seed, network_seed])``, so each
    network's cut is an independent draw and the same network always gets the same cut."""
    state = np.random.SeedSequence([int(split_seed), int(network_seed)]).generate_state(1)
    return int(state[0] >> 1)
