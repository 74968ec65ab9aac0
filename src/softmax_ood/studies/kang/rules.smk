# The Kang et al. study: shift grid -> discriminator per (featurizer, shift group) -> one grid
# evaluation per trained model -> frames and tables -> figures, claims -> report.
# Included by the Snakefile when "kang" is in config["studies"]; script: paths are
# relative to this file, inputs/outputs to the working directory; shared envs and captions come
# from rules/common.smk (ENV_*, caption()).

KG_STUDY = STUDIES["kang"]
KG_RUNS = KG_STUDY.study_runs(config)
KG_SPEC = KG_STUDY.spec(config)
KG_DIR = "src/softmax_ood/studies/kang"
KG = "results/kang/{dataset}"
KG_FEATURIZER = config["kang"]["featurizer"]["name"]
KG_EVAL = "results/kang/{dataset}/eval/{recipe}/{arch}/{loss}/seed{seed}"
KG_FRAMES = KG_STUDY.FRAMES  # what kang_aggregate writes (tables, figures, claims read them)


if KG_SPEC.get("corruption_source") == "cifar10c":

    rule kang_extract_cifar_c:
        # paper scale: the downloaded, checksum-verified CIFAR-10-C.tar, extracted safely
        input:
            archive=[f"data/raw/{f}" for f, n in RAW_FILES.items() if n == "cifar10c"],
            code=code(f"{KG_DIR}/scripts/extract.py"),
        output:
            directory(KG_SPEC["corruption_dir"]),
        log:
            "logs/kang/extract_cifar_c.log",
        benchmark:
            "logs/benchmarks/kang_extract_cifar_c/extract.tsv"
        conda:
            ENV_TORCH
        script:
            "scripts/extract.py"


rule kang_grid:
    # the ID test split under every corruption x severity and rotation, plus the far OOD sets
    input:
        unpack(lambda w: KG_STUDY.grid_inputs(KG_SPEC, w.dataset)),
        code=code(f"{KG_DIR}/scripts/grid.py"),
    output:
        x=f"{KG}/grid/x.npy",
        y=f"{KG}/grid/y.npy",
        index=f"{KG}/grid/index.parquet",
        provenance=f"{KG}/grid/index.prov.json",
    log:
        "logs/kang/{dataset}/grid.log",
    benchmark:
        "logs/benchmarks/kang_grid/{dataset}/grid.tsv"
    conda:
        ENV_TORCH
    resources:
        mem_mb=2000,
    params:
        spec=KG_STUDY.grid_spec(KG_SPEC),
    script:
        "scripts/grid.py"


rule kang_discriminator_select:
    # the discriminator's L2 strength, chosen on held-out data (the validation split under every
    # shift), once per featurizer, before any test score
    input:
        data="data/{dataset}",
        **KG_STUDY.featurizer_inputs(KG_SPEC),
        code=code(f"{KG_DIR}/scripts/select.py"),
    output:
        alpha=f"{KG}/discriminator/{{featurizer}}/alpha.json",
        table=f"{KG}/discriminator/{{featurizer}}/selection.parquet",
    log:
        "logs/kang/{dataset}/discriminator/{featurizer}/select.log",
    benchmark:
        "logs/benchmarks/kang_discriminator_select/{dataset}/discriminator/{featurizer}/select.tsv"
    wildcard_constraints:
        featurizer=re.escape(KG_FEATURIZER),
    conda:
        ENV_TORCH
    params:
        spec=KG_STUDY.select_spec(KG_SPEC),
    script:
        "scripts/select.py"


rule kang_discriminator:
    # fitted once per (featurizer, shift group), independent of every trained model
    input:
        data="data/{dataset}",
        x=f"{KG}/grid/x.npy",
        index=f"{KG}/grid/index.parquet",
        alpha=f"{KG}/discriminator/{{featurizer}}/alpha.json",
        **KG_STUDY.featurizer_inputs(KG_SPEC),
        code=code(f"{KG_DIR}/scripts/discriminator.py"),
    output:
        scores=f"{KG}/discriminator/{{featurizer}}/{{group}}.parquet",
        provenance=f"{KG}/discriminator/{{featurizer}}/{{group}}.prov.json",
    log:
        "logs/kang/{dataset}/discriminator/{featurizer}/{group}.log",
    benchmark:
        "logs/benchmarks/kang_discriminator/{dataset}/discriminator/{featurizer}/{group}.tsv"
    wildcard_constraints:
        featurizer=re.escape(KG_FEATURIZER),
        group="|".join(re.escape(g) for g in KG_SPEC["groups"]),
    conda:
        ENV_TORCH
    resources:
        mem_mb=2000,
    params:
        featurizer=KG_SPEC["featurizer"],
        discriminator=KG_SPEC["discriminator"],
    script:
        "scripts/discriminator.py"


rule kang_evaluate:
    # one job per trained model: loaded once, the whole shift grid in one batched pass
    input:
        model="results/train/{dataset}/{recipe}/{arch}/{loss}/seed{seed}/model.pt",
        data="data/{dataset}",
        x=f"{KG}/grid/x.npy",
        y=f"{KG}/grid/y.npy",
        index=f"{KG}/grid/index.parquet",
        code=code(f"{KG_DIR}/scripts/evaluate.py"),
    output:
        **{name: f"{KG_EVAL}/{name}.parquet" for name in KG_STUDY.EVAL_FILES},
        provenance=f"{KG_EVAL}/sets.prov.json",
    log:
        "logs/kang/{dataset}/eval/{recipe}/{arch}/{loss}/seed{seed}.log",
    benchmark:
        "logs/benchmarks/kang_evaluate/{dataset}/eval/{recipe}/{arch}/{loss}/seed{seed}.tsv"
    conda:
        ENV_TORCH
    resources:
        mem_mb=3000,
        runtime=30,
    params:
        loss_entry=lambda w: LOSSES[w.loss],
        rewards=lambda w: {
            k: v
            for k, v in LOSSES[config["kang"]["reward_model"]].items()
            if k != "loss"
        },
        figure_class=KG_SPEC["figure_class"],
        batch_size=KG_SPEC["batch_size"],
        mechanism=lambda w: KG_STUDY.mechanism_params(KG_SPEC, w.recipe, w.arch, w.loss),
    script:
        "scripts/evaluate.py"


rule kang_aggregate:
    input:
        evals=KG_STUDY.eval_files(KG_RUNS),
        scores=expand(
            f"{KG}/discriminator/{KG_FEATURIZER}/{{group}}.parquet",
            group=KG_SPEC["groups"],
            allow_missing=True,
        ),
        index=f"{KG}/grid/index.parquet",
        selection=f"{KG}/discriminator/{KG_FEATURIZER}/selection.parquet",
        code=code(f"{KG_DIR}/scripts/aggregate.py"),
    output:
        **{name: f"{KG}/{name}.parquet" for name in KG_FRAMES},
        provenance=f"{KG}/grid.prov.json",
    log:
        "logs/kang/{dataset}/aggregate.log",
    benchmark:
        "logs/benchmarks/kang_aggregate/{dataset}/aggregate.tsv"
    conda:
        ENV_REPORT
    params:
        spec=KG_SPEC,
    script:
        "scripts/aggregate.py"


if replication_seeds(config, "kang") is not None:
    # the same models on the replication seeds (config replication): its claims' replicates
    KG_FRESH = with_seeds(config, "kang", replication_seeds(config, "kang"))

    rule kang_aggregate_replication:
        input:
            evals=KG_STUDY.eval_files(KG_STUDY.study_runs(KG_FRESH)),
            scores=expand(
                f"{KG}/discriminator/{KG_FEATURIZER}/{{group}}.parquet",
                group=KG_SPEC["groups"],
                allow_missing=True,
            ),
            index=f"{KG}/grid/index.parquet",
            selection=f"{KG}/discriminator/{KG_FEATURIZER}/selection.parquet",
            code=code(f"{KG_DIR}/scripts/aggregate.py"),
        output:
            **{name: f"{KG}/replication/{name}.parquet" for name in KG_FRAMES},
            provenance=f"{KG}/replication/grid.prov.json",
        log:
            "logs/kang/{dataset}/aggregate_replication.log",
        benchmark:
            "logs/benchmarks/kang_aggregate_replication/{dataset}/aggregate.tsv"
        conda:
            ENV_REPORT
        params:
            spec=KG_STUDY.spec(KG_FRESH),
        script:
            "scripts/aggregate.py"


rule kang_theory:
    # Sec. 4.2's theory on a toy (Thm 4.1, Props 4.1-4.2): small deep ReLU networks trained on
    # the exponential loss, a few seconds of CPU per seed; no data, no trained model
    input:
        code=code(f"{KG_DIR}/scripts/theory.py"),
    output:
        theory=f"{KG}/theory.parquet",
    log:
        "logs/kang/{dataset}/theory.log",
    benchmark:
        "logs/benchmarks/kang_theory/{dataset}/theory.tsv"
    conda:
        ENV_TORCH
    params:
        seeds=KG_SPEC["seeds"],
    script:
        "scripts/theory.py"


rule kang_adversarial:
    # Fig. 8 (App. A): one FGSM step per epsilon on the clean ID test images, per trained
    # classifier; distance to the OCS, accuracy, OOD score and per-layer norms (a few CPU s)
    input:
        model="results/train/{dataset}/{recipe}/{arch}/{loss}/seed{seed}/model.pt",
        data="data/{dataset}",
        x=f"{KG}/grid/x.npy",
        y=f"{KG}/grid/y.npy",
        index=f"{KG}/grid/index.parquet",
        alpha=f"{KG}/discriminator/{KG_FEATURIZER}/alpha.json",
        **KG_STUDY.featurizer_inputs(KG_SPEC),
        code=code(f"{KG_DIR}/scripts/adversarial.py"),
    output:
        adversarial=f"{KG_EVAL}/adversarial.parquet",
    log:
        "logs/kang/{dataset}/eval/{recipe}/{arch}/{loss}/seed{seed}.adversarial.log",
    benchmark:
        "logs/benchmarks/kang_adversarial/{dataset}/eval/{recipe}/{arch}/{loss}/seed{seed}.tsv"
    wildcard_constraints:
        loss=re.escape(KG_SPEC["classifier"]),
    conda:
        ENV_TORCH
    resources:
        mem_mb=2000,
    params:
        epsilons=KG_SPEC["adversarial"]["epsilons"],
        featurizer=KG_SPEC["featurizer"],
        discriminator=KG_SPEC["discriminator"],
    script:
        "scripts/adversarial.py"
