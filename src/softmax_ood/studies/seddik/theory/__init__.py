r"""Deterministic theory of the L2-regularised softmax classifier (Seddik et al., Theorem 4.8).

Everything here is a function of the class statistics only: means ``means`` (k, p), covariances
``covs`` (k, p, p), proportions ``gammas`` (k,), the sample size ``n`` (p is ``means.shape[1]``)
and the regularisation ``lam``. Class ``0`` is the paper's :math:`\mathcal C_1`, class ``1`` its
:math:`\mathcal C_2`. Data points are rows; :math:`w` is a column vector.

Modules: :mod:`.common` (input checks, labels, quadrature), :mod:`.iteration` (the accelerated
fixed-point iteration both solvers share), :mod:`.binary` (two classes, scalar form),
:mod:`.multiclass` (k classes, block form), :mod:`.ridge` (the ridge closed-form reference).

The derivation (and each place the printed text slips): ``docs/studies/seddik.md``, section
*Derivation of Theorem 4.8's fixed point*.
"""

from __future__ import annotations

from .binary import BinaryTheory, solve_binary
from .common import SIGNS, FixedPointError
from .multiclass import MulticlassTheory, solve_multiclass
from .ridge import RidgeClosedForm, ridge_closed_form

__all__ = [
    "SIGNS",
    "BinaryTheory",
    "FixedPointError",
    "MulticlassTheory",
    "RidgeClosedForm",
    "ridge_closed_form",
    "solve_binary",
    "solve_multiclass",
]
