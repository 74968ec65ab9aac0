"""Pay the one-off lazy imports once per session, in fixture setup, instead of inside whichever
test comes first: torch's optimizer pulls in ``torch._dynamo`` (~1.5 s) and the first figure loads
matplotlib's fonts."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session", autouse=True)
def _warm_up():
    import numpy as np

    from softmax_ood.analysis.style import new_figure, style
    from softmax_ood.studies.ulmer.models import train_model

    x = np.array([[0.0, 1.0], [1.0, 0.0]], dtype=np.float32)
    from softmax_ood.studies.ulmer.tests.helpers import model_cfg, optim

    train_model("single", x, np.array([0, 1]), model_cfg(hidden=(2,)), optim(epochs=1), seed=0)
    with style():
        fig, axes = new_figure((1.0, 1.0))
        axes[0].set_title("warm-up")
        fig.canvas.draw()
