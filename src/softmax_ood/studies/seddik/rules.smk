# The Seddik study (Seddik et al. 2021): frames (theory vs practice) -> figures, claims -> report.
# Included by the Snakefile when "seddik" is in config["studies"]; script: paths are
# relative to this file, inputs/outputs to the working directory; shared envs and captions come
# from rules/common.smk (ENV_*, caption()).
# Compute (frames) and drawing (figures) are separate rules: restyling a figure recomputes nothing.

SD_STUDY = STUDIES["seddik"]
SD_RUNS = SD_STUDY.fig5_runs(config)
SD_F5 = config["seddik"]["fig5"]
SD_DIR = "src/softmax_ood/studies/seddik"
SD = "results/seddik/{dataset}"


rule seddik_frame:
    # Figs. 2-4 and the validation: functions of the config alone (no trained network)
    input:
        code=code(f"{SD_DIR}/scripts/frame.py"),
    output:
        frame=f"{SD}/frames/{{frame}}.parquet",
        provenance=f"{SD}/frames/{{frame}}.prov.json",
    log:
        "logs/seddik/{dataset}/frame_{frame}.log",
    benchmark:
        "logs/benchmarks/seddik_frame/{dataset}/frame_{frame}.tsv"
    wildcard_constraints:
        frame="|".join(SD_STUDY.FRAMES),
    conda:
        ENV_REPORT
    resources:
        mem_mb=2000,
    params:
        kwargs=lambda w: SD_STUDY.frame_kwargs(config, w.frame),
    script:
        "scripts/frame.py"


if replication_seeds(config, "seddik") is not None:

    rule seddik_replication_frame:
        # Figs. 2 and 4 and the validation drawn again on the replication seeds (its claims'
        # replicates column; config replication)
        input:
            code=code(f"{SD_DIR}/scripts/frame.py"),
        output:
            frame=f"{SD}/replication/frames/{{frame}}.parquet",
            provenance=f"{SD}/replication/frames/{{frame}}.prov.json",
        log:
            "logs/seddik/{dataset}/replication_frame_{frame}.log",
        benchmark:
            "logs/benchmarks/seddik_replication_frame/{dataset}/frame_{frame}.tsv"
        wildcard_constraints:
            frame="|".join(SD_STUDY.REPLICATED_FRAMES),
        conda:
            ENV_REPORT
        resources:
            mem_mb=2000,
        params:
            kwargs=lambda w: SD_STUDY.frame_kwargs(
                SD_STUDY.replication_config(config, replication_seeds(config, "seddik")), w.frame
            ),
        script:
            "scripts/frame.py"


rule seddik_features:
    # penultimate-layer features of the Fig. 5 networks (trained by the core's train rule)
    input:
        models=run_files(SD_RUNS, "train", "model.pt"),
        data="data/{dataset}",
        code=code(f"{SD_DIR}/scripts/features.py"),
    output:
        features=f"{SD}/features.parquet",
        provenance=f"{SD}/features.prov.json",
    log:
        "logs/seddik/{dataset}/features.log",
    benchmark:
        "logs/benchmarks/seddik_features/{dataset}/features.tsv"
    conda:
        ENV_TORCH
    resources:
        mem_mb=2000,
    params:
        runs=[r.name for r in SD_RUNS],
        seeds=[r.seed for r in SD_RUNS],
        splits=list(SD_F5["splits"]),
    script:
        "scripts/features.py"


rule seddik_fig5_frame:
    input:
        features=f"{SD}/features.parquet",
        code=code(f"{SD_DIR}/scripts/fig5_frame.py"),
    output:
        frame=f"{SD}/frames/fig5.parquet",
        provenance=f"{SD}/frames/fig5.prov.json",
    log:
        "logs/seddik/{dataset}/frame_fig5.log",
    benchmark:
        "logs/benchmarks/seddik_fig5_frame/{dataset}/frame_fig5.tsv"
    conda:
        ENV_REPORT
    resources:
        mem_mb=2000,
    params:
        runs=[r.name for r in SD_RUNS],
        kwargs=SD_STUDY.frame_kwargs(config, "fig5"),
    script:
        "scripts/fig5_frame.py"


rule seddik_timing:
    # iterations/residuals are results; wall times (not reproducible bytes) sit beside the report
    input:
        code=code(f"{SD_DIR}/scripts/timing.py"),
    output:
        timing=f"{SD}/timing.parquet",
        provenance=f"{SD}/timing.prov.json",
        seconds="reports/seddik_timing_{dataset}.json",
    log:
        "logs/seddik/{dataset}/timing.log",
    benchmark:
        "logs/benchmarks/seddik_timing/{dataset}/timing.tsv"
    conda:
        ENV_REPORT
    params:
        kwargs=SD_STUDY.frame_kwargs(config, "timing"),
    script:
        "scripts/timing.py"


rule seddik_departures:
    input:
        code=code(f"{SD_DIR}/scripts/departures.py"),
    output:
        table=f"{SD}/departures.parquet",
        provenance=f"{SD}/departures.prov.json",
        markdown=f"{SD}/departures.md",
    params:
        # the settings the table is derived from (digits source, leave-one-out, claims, scale)
        config={"seddik": config["seddik"], "data": {"source": config["data"].get("source")}},
    log:
        "logs/seddik/{dataset}/departures.log",
    benchmark:
        "logs/benchmarks/seddik_departures/{dataset}/departures.tsv"
    conda:
        ENV_REPORT
    script:
        "scripts/departures.py"
