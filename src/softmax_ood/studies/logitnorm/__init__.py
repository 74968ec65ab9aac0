"""The LogitNorm study (Wei et al. 2022, "Mitigating Neural Network Overconfidence with Logit
Normalization"): Tables 1-6, Figures 1, 4, 5, the claims table and the report.

Registration: :mod:`.study`; rules: ``rules.smk``; notebook: ``report.ipynb``; printed values:
``paper_values.csv``. No imports here (a script importing one module of the study must not
depend on the others).
"""
