"""Seddik et al. (2021), "The Unexpected Deterministic and Universal Behavior of Large Softmax
Classifiers": Theorem 4.8's fixed point (two classes and k classes), the ridge closed-form
reference, trained classifiers, Figures 2-5, validation checks and the list of departures from
the printed text.

Modules: :mod:`.theory` (fixed point), :mod:`.practice` (training, LOO, data),
:mod:`.experiments` (tidy frames), :mod:`.figures`, :mod:`.departures`. No imports here (a
script importing one module of the study must not depend on the others).
"""
