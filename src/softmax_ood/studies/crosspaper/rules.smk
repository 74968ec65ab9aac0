# The cross-paper study: Kang's shift grid (on a declared image budget) plus Ulmer's rays ->
# the discriminator's OOD score of every set (model-independent) and the LogitNorm study's
# networks on the grid and the rays, and Seddik's Theorem 4.8 on their features -> frames; tables, figures, claims and report come from the
# shared rules (rules/study.smk). Included by the Snakefile when "crosspaper" is in
# config["studies"]; script: paths are relative to this file.

CP_STUDY = STUDIES["crosspaper"]
CP_RUNS = CP_STUDY.runs(config)
CP_SPEC = CP_STUDY.spec(config)
CP_DIR = "src/softmax_ood/studies/crosspaper"
CP = "results/crosspaper/{dataset}"


rule crosspaper_grid:
    # the test images under the study's shifts, the far sets and the rays (budget: grid.eval_size)
    input:
        data="data/{dataset}",
        code=code(f"{CP_DIR}/scripts/grid.py"),
    output:
        x=f"{CP}/grid/x.npy",
        y=f"{CP}/grid/y.npy",
        index=f"{CP}/levels.parquet",
        provenance=f"{CP}/levels.prov.json",
    log:
        "logs/crosspaper/{dataset}/grid.log",
    benchmark:
        "logs/benchmarks/crosspaper_grid/{dataset}/grid.tsv"
    conda:
        ENV_TORCH
    resources:
        mem_mb=2000,
    params:
        spec={k: CP_SPEC[k] for k in ("grid", "rays", "axis", "far_ood")},  # what build_grid reads
    script:
        "scripts/grid.py"


rule crosspaper_discriminator:
    # Kang's OOD score of every set (independent of every trained model)
    input:
        data="data/{dataset}",
        x=f"{CP}/grid/x.npy",
        index=f"{CP}/levels.parquet",
        code=code(f"{CP_DIR}/scripts/discriminator.py"),
    output:
        scores=f"{CP}/ood_scores.parquet",
        provenance=f"{CP}/ood_scores.prov.json",
    log:
        "logs/crosspaper/{dataset}/discriminator.log",
    benchmark:
        "logs/benchmarks/crosspaper_discriminator/{dataset}/discriminator.tsv"
    conda:
        ENV_TORCH
    resources:
        mem_mb=2000,
    params:
        discriminator=CP_SPEC["discriminator"],
    script:
        "scripts/discriminator.py"


rule crosspaper_evaluate:
    # the networks (core runs, trained once for every study that names them) on grid and rays
    input:
        models=run_files(CP_RUNS, "train", "model.pt"),
        curves=run_files(CP_RUNS, "train", "curve.tsv"),
        data="data/{dataset}",
        x=f"{CP}/grid/x.npy",
        y=f"{CP}/grid/y.npy",
        index=f"{CP}/levels.parquet",
        code=code(f"{CP_DIR}/scripts/evaluate.py"),
    output:
        shift=f"{CP}/shift.parquet",
        rays=f"{CP}/rays.parquet",
        fit=f"{CP}/fit.parquet",
        provenance=f"{CP}/shift.prov.json",
    log:
        "logs/crosspaper/{dataset}/evaluate.log",
    benchmark:
        "logs/benchmarks/crosspaper_evaluate/{dataset}/evaluate.tsv"
    conda:
        ENV_TORCH
    resources:
        mem_mb=3000,
    params:
        runs=[
            {"name": r.name, "loss": r.loss, "family": LOSSES[r.loss]["loss"], "seed": r.seed}
            for r in CP_RUNS
        ],
        tau=CP_SPEC["tau"],
        rays=CP_SPEC["rays"],
        batch_size=CP_SPEC["batch_size"],
    script:
        "scripts/evaluate.py"


rule crosspaper_seddik:
    # (c) Seddik's Theorem 4.8 on both networks' penultimate features (the Seddik study's
    # feature extraction and Fig. 5 frame, per loss; only the frame is written)
    input:
        models=run_files(CP_RUNS, "train", "model.pt"),
        data="data/{dataset}",
        code=code(f"{CP_DIR}/scripts/seddik.py"),
    output:
        frame=f"{CP}/seddik.parquet",
        provenance=f"{CP}/seddik.prov.json",
    log:
        "logs/crosspaper/{dataset}/seddik.log",
    benchmark:
        "logs/benchmarks/crosspaper_seddik/{dataset}/seddik.tsv"
    conda:
        ENV_TORCH
    resources:
        mem_mb=2000,
    params:
        runs=[{"name": r.name, "loss": r.loss, "seed": r.seed} for r in CP_RUNS],
        losses=[CP_SPEC["baseline"], CP_SPEC["method"]],
        section={k: CP_SPEC[k] for k in ("seddik",)},
    script:
        "scripts/seddik.py"


rule crosspaper_departures:
    input:
        code=code(f"{CP_DIR}/scripts/departures.py"),
    output:
        table=f"{CP}/departures.parquet",
        provenance=f"{CP}/departures.prov.json",
        markdown=f"{CP}/departures.md",
    log:
        "logs/crosspaper/{dataset}/departures.log",
    benchmark:
        "logs/benchmarks/crosspaper_departures/{dataset}/departures.tsv"
    conda:
        ENV_REPORT
    params:
        section=CP_SPEC,
    script:
        "scripts/departures.py"
