# The LogitNorm study (Wei et al. 2022): aggregate -> tables, figures, claims -> report.
# Included by the Snakefile when "logitnorm" is in config["studies"]; script: paths are
# relative to this file, inputs/outputs to the working directory; shared envs and captions come
# from rules/common.smk (ENV_*, caption()).

LN_STUDY = STUDIES["logitnorm"]
LN_RUNS = LN_STUDY.study_runs(config)
LN_SPEC = LN_STUDY.spec(config)
LN_DIR = "src/softmax_ood/studies/logitnorm"
LN = "results/logitnorm/{dataset}"


rule logitnorm_aggregate:
    input:
        summaries=run_files(LN_RUNS, "eval", "summary.json"),
        samples=run_files(LN_RUNS, "eval", "scores.parquet"),
        curves=run_files(LN_RUNS, "train", "curve.tsv"),
        data="data/{dataset}",
        code=code(f"{LN_DIR}/scripts/aggregate.py"),
    output:
        runs=f"{LN}/runs.parquet",
        ood=f"{LN}/ood.parquet",
        curves=f"{LN}/curves.parquet",
        samples=f"{LN}/samples.parquet",
        floor=f"{LN}/floor.parquet",
        provenance=multiext(
            f"{LN}/",
            "runs.prov.json",
            "ood.prov.json",
            "curves.prov.json",
            "samples.prov.json",
            "floor.prov.json",
        ),
    log:
        "logs/logitnorm/{dataset}/aggregate.log",
    benchmark:
        "logs/benchmarks/logitnorm_aggregate/{dataset}/aggregate.tsv"
    conda:
        ENV_REPORT
    resources:
        mem_mb=8000,  # every score per test image of every run: several GB at paper scale
    params:
        spec=LN_SPEC,
        losses={r.loss: LOSSES[r.loss] for r in LN_RUNS},
    script:
        "scripts/aggregate.py"


rule logitnorm_softmax:
    # Figs. 2 and 3: the baseline's and the method's softmax outputs (one training seed's models)
    # on seeded subsets of the ID test images and every OOD test set, with each model's t-SNE
    input:
        models=run_files(LN_STUDY.softmax_runs(config), "train", "model.pt"),
        data="data/{dataset}",
        code=code(f"{LN_DIR}/scripts/softmax.py"),
    output:
        frame=f"{LN}/softmax.parquet",
        provenance=f"{LN}/softmax.prov.json",
    log:
        "logs/logitnorm/{dataset}/softmax.log",
    benchmark:
        "logs/benchmarks/logitnorm_softmax/{dataset}/softmax.tsv"
    conda:
        ENV_TORCH
    resources:
        mem_mb=2000,
    params:
        runs=[
            {"name": r.name, "loss": r.loss, "seed": r.seed}
            for r in LN_STUDY.softmax_runs(config)
        ],
        sets=list(config["data"]["ood_test"]),
        section=LN_STUDY.softmax_section(config),
        batch_size=config["evaluation"]["batch_size"],
    script:
        "scripts/softmax.py"


rule logitnorm_readme_block:
    # the generated block of docs/studies/logitnorm.md (checked against it by the release step)
    input:
        claims=f"{LN}/claims.parquet",
        floor=f"{LN}/floor.parquet",
        code=code(f"{LN_DIR}/scripts/readme_block.py"),
    output:
        readme=f"{LN}/readme_block.md",
    log:
        "logs/logitnorm/{dataset}/readme_block.log",
    benchmark:
        "logs/benchmarks/logitnorm_readme_block/{dataset}/readme_block.tsv"
    conda:
        ENV_REPORT
    script:
        "scripts/readme_block.py"


if replication_seeds(config, "logitnorm") is not None:
    # the same grid on the replication seeds (config replication): its claims' replicates column
    LN_FRESH = with_seeds(config, "logitnorm", replication_seeds(config, "logitnorm"))
    LN_FRESH_RUNS = LN_STUDY.study_runs(LN_FRESH)

    rule logitnorm_aggregate_replication:
        input:
            summaries=run_files(LN_FRESH_RUNS, "eval", "summary.json"),
            samples=run_files(LN_FRESH_RUNS, "eval", "scores.parquet"),
            curves=run_files(LN_FRESH_RUNS, "train", "curve.tsv"),
            data="data/{dataset}",
            code=code(f"{LN_DIR}/scripts/aggregate.py"),
        output:
            runs=f"{LN}/replication/runs.parquet",
            ood=f"{LN}/replication/ood.parquet",
            curves=f"{LN}/replication/curves.parquet",
            samples=f"{LN}/replication/samples.parquet",
            floor=f"{LN}/replication/floor.parquet",
            provenance=multiext(
                f"{LN}/replication/",
                "runs.prov.json",
                "ood.prov.json",
                "curves.prov.json",
                "samples.prov.json",
                "floor.prov.json",
            ),
        log:
            "logs/logitnorm/{dataset}/aggregate_replication.log",
        benchmark:
            "logs/benchmarks/logitnorm_aggregate_replication/{dataset}/aggregate.tsv"
        conda:
            ENV_REPORT
        resources:
            mem_mb=8000,
        params:
            spec=LN_STUDY.spec(LN_FRESH),
            losses={r.loss: LOSSES[r.loss] for r in LN_FRESH_RUNS},
        script:
            "scripts/aggregate.py"
