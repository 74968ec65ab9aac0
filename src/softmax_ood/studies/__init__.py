"""One package per paper's study (see :mod:`softmax_ood.studies.registry`).

This file stays empty of imports on purpose: a workflow script that imports one study must not
import (and so depend on) the others.
"""
