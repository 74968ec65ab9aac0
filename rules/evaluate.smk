# Every trained model of a cell (all its seeds, one process) on the ID test split and every OOD
# set, with every configured score it supports.


rule evaluate:
    input:
        model=seed_files("results/train/{dataset}/{recipe}/{arch}/{loss}", "model.pt"),
        data="data/{dataset}",
        code=code("workflow/scripts/evaluate.py"),
    output:
        summary=seed_files(
            "results/eval/{dataset}/{recipe}/{arch}/{loss}", "summary.json"
        ),
        samples=seed_files(
            "results/eval/{dataset}/{recipe}/{arch}/{loss}", "msp.parquet"
        ),
    log:
        "logs/eval/{dataset}/{recipe}/{arch}/{loss}.log",
    benchmark:
        "logs/benchmarks/evaluate/{dataset}/{recipe}/{arch}/{loss}.tsv"
    conda:
        "../envs/torch.yaml"
    threads: lambda w: config["recipes"][w.recipe]["threads"]
    resources:
        mem_mb=3000,
        runtime=CLUSTER["minutes_per_seed"]["evaluate"] * len(TRAIN_SEEDS),
        gpu=GPU,
    params:
        # what the checkpoints must have been trained with (checked when each is loaded)
        settings=lambda w: [
            config["architectures"][w.arch],
            LOSSES[w.loss],
            config["recipes"][w.recipe],
        ],
        scores=config["scores"],
        overrides=config["score_overrides"],
        evaluation=config["evaluation"],
        device=EXECUTION,
    script:
        "../workflow/scripts/evaluate.py"
