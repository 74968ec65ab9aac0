"""Tidy frames for Seddik et al.'s Figures 2-5, the validation checks and the solver timing.

Every function is deterministic given its arguments (seeded sampling, deterministic theory)
and returns a long :class:`pandas.DataFrame`; :mod:`.figures` draws them.

Common columns: ``source`` (``"theory"`` or ``"practice"``), ``split`` (``"train"`` or
``"test"``), ``cls`` (``"all"`` or the class index as a string), ``seed`` (nullable integer,
missing on theory rows).

Modules: :mod:`.common` (solver and training options, accuracy rows), :mod:`.model_free`
(Figs. 2-4, functions of the config alone), :mod:`.input_shape` (the input's distance from
Gaussian, Fig. 3), :mod:`.validation` (checks where an answer is known), :mod:`.pool` (cutting
Fig. 5's pool), :mod:`.network` (Fig. 5 on network features), :mod:`.solver_timing`.
"""

from __future__ import annotations

from ..theory import FixedPointError
from .common import binary_options, multiclass_options
from .input_shape import INPUT_BOOTSTRAP, gauss_distance, input_gauss_distance
from .model_free import fig2_frame, fig3_frame, fig4_frame
from .network import fig5_frame, fig5_networks
from .pool import CUTS, cut_seed, fit_test_split, pool_parts
from .solver_timing import timing
from .validation import validation_frame

__all__ = [
    "CUTS",
    "INPUT_BOOTSTRAP",
    "FixedPointError",
    "binary_options",
    "cut_seed",
    "fig2_frame",
    "fig3_frame",
    "fig4_frame",
    "fig5_frame",
    "fig5_networks",
    "fit_test_split",
    "gauss_distance",
    "input_gauss_distance",
    "multiclass_options",
    "pool_parts",
    "timing",
    "validation_frame",
]
