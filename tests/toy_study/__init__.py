"""A toy study kept under ``tests/``: the smallest package obeying the study contract
(:mod:`softmax_ood.studies.registry`), registered from outside the library through
``SOFTMAX_OOD_EXTRA_STUDIES=toy=toy_study.study`` (``tests/test_toy_study.py``). Its config
section defaults to its schema's defaults and its captions live in ``captions/``: a new study
needs its package and one registry entry, nothing else."""
