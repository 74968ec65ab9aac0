# Prepared data: the offline embedded default, or the paper-scale downloads with checksums.


def data_inputs(wildcards):
    inputs = {"code": ["src/softmax_ood/data.py"]}
    if config["data"]["source"] == "paper":
        inputs["raw"] = "data/raw"
        inputs["code"] += ["src/softmax_ood/paper_data.py", config["data"]["sources"]]
    return inputs


rule download_paper_data:
    # real downloads, each verified against its md5/sha256 before anything is kept
    input:
        sources=config["data"]["sources"],
        code="src/softmax_ood/download.py",
    output:
        directory("data/raw"),
    log:
        "logs/data/download.log",
    params:
        names=[config["data"]["dataset"], *config["data"]["ood_test"]],
    resources:
        runtime=240,
    conda:
        "../envs/torch.yaml"
    script:
        "../workflow/scripts/download.py"


rule prepare_data:
    input:
        unpack(data_inputs),
    output:
        directory("data/{dataset}"),
    log:
        "logs/data/{dataset}.log",
    params:
        data=config["data"],
    resources:
        mem_mb=4000,
        runtime=30,
    conda:
        "../envs/torch.yaml"
    script:
        "../workflow/scripts/prepare_data.py"
