# Every trained model on the ID test split and every OOD set, with every configured score it
# supports.


rule evaluate:
    input:
        model="results/train/{dataset}/{recipe}/{arch}/{loss}/seed{seed}/model.pt",
        data="data/{dataset}",
        code=code("workflow/scripts/evaluate.py"),
    output:
        summary="results/eval/{dataset}/{recipe}/{arch}/{loss}/seed{seed}/summary.json",
        samples="results/eval/{dataset}/{recipe}/{arch}/{loss}/seed{seed}/msp.parquet",
    log:
        "logs/eval/{dataset}/{recipe}/{arch}/{loss}/seed{seed}.log",
    conda:
        "../envs/torch.yaml"
    threads: lambda w: config["recipes"][w.recipe]["threads"]
    resources:
        mem_mb=3000,
        runtime=60,
        gpu=GPU,
    params:
        scores=config["scores"],
        overrides=config["score_overrides"],
        evaluation=config["evaluation"],
        device=config["device"],
    script:
        "../workflow/scripts/evaluate.py"
