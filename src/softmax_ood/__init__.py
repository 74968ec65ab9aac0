"""softmax_ood: the library behind the softmax-overconfidence / OOD reproducibility pipeline.

Conventions used everywhere in this package:

* Every OOD score maps a batch to an ``(N,)`` array where HIGHER = MORE IN-DISTRIBUTION.
* OOD metrics treat in-distribution as the positive class unless told otherwise
  (the ODIN / Energy / LogitNorm convention; OpenOOD and pytorch-ood use OOD-positive).
* Registries are plain dicts; an unknown name raises ``ValueError`` listing the valid choices.
"""

__version__ = "0.1.0"
