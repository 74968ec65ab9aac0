# Every trained model on the ID test split and every OOD set, with every configured score.


rule evaluate:
    input:
        model="results/train/{dataset}/{arch}/{loss}/seed{seed}/model.pt",
        data="data/{dataset}",
        code=[
            "src/softmax_ood/scores.py",
            "src/softmax_ood/metrics.py",
            "src/softmax_ood/calibration.py",
            "src/softmax_ood/experiment.py",
        ],
    output:
        summary="results/eval/{dataset}/{arch}/{loss}/seed{seed}/summary.json",
        samples="results/eval/{dataset}/{arch}/{loss}/seed{seed}/msp.parquet",
    log:
        "logs/eval/{dataset}/{arch}/{loss}/seed{seed}.log",
    conda:
        "../envs/torch.yaml"
    threads: config["train"]["threads"]
    resources:
        mem_mb=3000,
        runtime=60,
    params:
        scores=config["scores"],
        overrides=config["score_overrides"],
        evaluation=config["evaluation"],
    script:
        "../workflow/scripts/evaluate.py"
