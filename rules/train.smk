# One training job per run (dataset, recipe, architecture, loss variant, seed): the union of
# the runs every enabled study declares, each trained once.


rule train:
    input:
        data="data/{dataset}",
        code=train_code,
    output:
        model="results/train/{dataset}/{recipe}/{arch}/{loss}/seed{seed}/model.pt",
        curve="results/train/{dataset}/{recipe}/{arch}/{loss}/seed{seed}/curve.tsv",
    log:
        "logs/train/{dataset}/{recipe}/{arch}/{loss}/seed{seed}.log",
    conda:
        "../envs/torch.yaml"
    threads: lambda w: config["recipes"][w.recipe]["threads"]
    resources:
        mem_mb=3000,
        runtime=120,
        gpu=GPU,
    params:
        arch_cfg=lambda w: config["architectures"][w.arch],
        loss_cfg=lambda w: LOSSES[w.loss],
        loss_code=loss_digest,
        train_cfg=lambda w: config["recipes"][w.recipe],
        device=config["device"],
    script:
        "../workflow/scripts/train.py"
