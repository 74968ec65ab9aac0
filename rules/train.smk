# One training job per cell (dataset, recipe, architecture, loss variant) of the union of the
# runs every enabled study declares; the job trains every seed of the cell (TRAIN_SEEDS) one
# after the other in one process. Per-seed outputs stay per run; a job that fails keeps none.
# (One process per cell, not per seed: on these tiny models importing torch and loading the
# data costs as much as a training.)


rule train:
    input:
        data="data/{dataset}",
        code=train_code,
    output:
        model=seed_files("results/train/{dataset}/{recipe}/{arch}/{loss}", "model.pt"),
        curve=seed_files("results/train/{dataset}/{recipe}/{arch}/{loss}", "curve.tsv"),
    log:
        "logs/train/{dataset}/{recipe}/{arch}/{loss}.log",
    benchmark:
        "logs/benchmarks/train/{dataset}/{recipe}/{arch}/{loss}.tsv"
    conda:
        "../envs/torch.yaml"
    threads: lambda w: config["recipes"][w.recipe]["threads"]
    resources:
        mem_mb=3000,
        runtime=CLUSTER["minutes_per_seed"]["train"] * len(TRAIN_SEEDS),
        gpu=GPU,
    params:
        seeds=TRAIN_SEEDS,
        arch_cfg=lambda w: config["architectures"][w.arch],
        loss_cfg=lambda w: LOSSES[w.loss],
        loss_code=loss_digest,
        train_cfg=lambda w: config["recipes"][w.recipe],
        device=EXECUTION,
    script:
        "../workflow/scripts/train.py"
