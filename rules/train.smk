# One training job per (dataset, architecture, loss variant, seed).


rule train:
    input:
        data="data/{dataset}",
        code=[
            "src/softmax_ood/train.py",
            "src/softmax_ood/experiment.py",
        ],
        model_code=model_code,
    output:
        model="results/train/{dataset}/{arch}/{loss}/seed{seed}/model.pt",
        curve="results/train/{dataset}/{arch}/{loss}/seed{seed}/curve.tsv",
    log:
        "logs/train/{dataset}/{arch}/{loss}/seed{seed}.log",
    conda:
        "../envs/torch.yaml"
    threads: config["train"]["threads"]
    resources:
        mem_mb=3000,
        runtime=120,
    params:
        arch_cfg=lambda w: config["architectures"][w.arch],
        loss_cfg=lambda w: LOSSES[w.loss],
        loss_code=loss_digest,
        train_cfg=config["train"],
        monitor_set=config["logitnorm"]["monitor_set"],
    script:
        "../workflow/scripts/train.py"
