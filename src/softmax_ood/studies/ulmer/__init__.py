"""Ulmer & Cinà, "Know your limits: monotonicity & softmax make neural classifiers overconfident
on OOD data": seeded 2-D and breast-cancer data (:mod:`.data`), ReLU networks with MC dropout,
Bayes-by-backprop and deep ensembles behind one ``predict_probs(x, k_samples) -> (S, N, C)``
interface (:mod:`.models`, trained with the core optimiser settings), the four uncertainty metrics
of the paper's §3.3 and their input gradients computed from the stable log-softmax
(:mod:`.uncertainty`), the input-scaling experiment of Theorem 1 and the Fig. 1 grids
(:mod:`.scaling`), one (dataset, seed) job (:mod:`.experiment`), the seed tables
(:mod:`.tables`), the claims (:mod:`.claims`), the softmax-properties note's checks
(:mod:`.softmax_note`) and the figures (:mod:`.figures`). Registration: :mod:`.study`; rules:
``rules.smk``; notebook: ``report.ipynb``. Nothing is
imported here on purpose: import the submodule you need.
"""
