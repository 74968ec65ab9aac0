# Data: the paper sources' downloads (download_source) and the prepared data set (prepare_data).
# Which files each source gives, and what prepare_data reads and tracks: rules/sources.smk.

# Prepared data: the offline embedded default, or the paper-scale downloads with checksums.


rule download_source:
    # one job and one output per source (a failed download keeps every other verified file);
    # each file is verified against its md5/sha256 before it is kept. The job tracks only what
    # defines the file's bytes: its name and checksums (params, not the sources file). The
    # URL, the texts, the size and the limits (data.download) are read by the job from the
    # sources file and the config: editing them, or another entry, downloads nothing again.
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
        checksums=lambda w: download_identity(SOURCE_ENTRIES[RAW_FILES[w.filename]]),
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
        # the data section but its download limits, and what defines the data of each source
        # the job reads (its entry but the texts, URL and size: softmax_ood.paper_data):
        # editing a description or a limit prepares nothing again
        data={k: v for k, v in config["data"].items() if k != "download"},
        sources=data_sources,
    script:
        "../workflow/scripts/prepare_data.py"
