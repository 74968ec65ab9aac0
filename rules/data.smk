# Prepared data: the offline embedded default, or the paper-scale downloads with checksums.


rule download_source:
    # one job and one output per source (a failed download keeps every other verified file);
    # each file is verified against its md5/sha256 before it is kept. The job depends on its
    # own entry of the sources file only (a params digest, not the file): editing another
    # entry downloads nothing again.
    input:
        code=code("workflow/scripts/download.py"),
    output:
        "data/raw/{filename}",
    log:
        "logs/data/download/{filename}.log",
    benchmark:
        "logs/benchmarks/download_source/download/{filename}.tsv"
    wildcard_constraints:
        filename="|".join(re.escape(f) for f in RAW_FILES) or "^$",
    conda:
        "../envs/torch.yaml"
    resources:
        runtime=240,
    params:
        name=lambda w: RAW_FILES[w.filename],
        entry=lambda w: SOURCE_ENTRIES[RAW_FILES[w.filename]],
        limits=config["data"]["download"],
    script:
        "../workflow/scripts/download.py"


rule prepare_data:
    input:
        unpack(data_inputs),
    output:
        directory("data/{dataset}"),
    log:
        "logs/data/{dataset}.log",
    benchmark:
        "logs/benchmarks/prepare_data/{dataset}.tsv"
    conda:
        "../envs/torch.yaml"
    resources:
        mem_mb=4000,
        runtime=30,
    params:
        data=config["data"],
    script:
        "../workflow/scripts/prepare_data.py"
