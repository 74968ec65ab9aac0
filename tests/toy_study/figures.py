"""The toy study's figure: every seed's points."""

from __future__ import annotations


def _lines(frames: dict, section: dict, path) -> None:
    from softmax_ood.analysis.style import new_figure, save_figure

    fig, (ax,) = new_figure((4.0, 3.0))
    for seed, g in frames["lines"].groupby("seed", sort=True):
        ax.plot(g["x"], g["y"], ".", markersize=3, label=f"seed {seed}")
    ax.set_xlabel("x")
    ax.set_ylabel("y")
    ax.legend(fontsize="small")
    save_figure(fig, path)


FIGURES = {"lines": _lines}
