# Prepared data: the offline embedded default, or the paper-scale downloads with checksums.


rule download_paper_data:
    # real downloads, each verified against its md5/sha256 before anything is kept
    input:
        sources=config["data"]["sources"],
        code=code("workflow/scripts/download.py"),
    output:
        directory("data/raw"),
    log:
        "logs/data/download.log",
    conda:
        "../envs/torch.yaml"
    resources:
        runtime=240,
    params:
        names=[config["data"]["dataset"], *config["data"]["ood_test"]],
    script:
        "../workflow/scripts/download.py"


rule prepare_data:
    input:
        unpack(data_inputs),
    output:
        directory("data/{dataset}"),
    log:
        "logs/data/{dataset}.log",
    conda:
        "../envs/torch.yaml"
    resources:
        mem_mb=4000,
        runtime=30,
    params:
        data=config["data"],
    script:
        "../workflow/scripts/prepare_data.py"
