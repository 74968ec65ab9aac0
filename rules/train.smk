# Training of the union of the runs every enabled study declares, one rule per job unit
# (rules/common.smk JOB_UNITS, config scheduling.per_seed):
# - train: one job per cell (dataset, recipe, architecture, loss variant) that trains every seed
#   (TRAIN_SEEDS) one after the other in one process, for recipes whose seeds are cheap (importing
#   torch and loading the data cost as much as one training);
# - train_seed: one job per seed, for the expensive recipes, so their seeds run side by side
#   (and start first: their chains are the workflow's critical path).
# Per-run files are the same bytes either way; a job that fails keeps none of its files.
for _unit, _recipes in JOB_UNITS.items():

    rule:
        name:
            unit_rule("train", _unit)
        wildcard_constraints:
            recipe=recipe_pattern(_recipes),
        input:
            data="data/{dataset}",
            code=train_code,
        output:
            model=unit_files(_unit, "results/train/{dataset}/{recipe}/{arch}/{loss}", "model.pt"),
            curve=unit_files(_unit, "results/train/{dataset}/{recipe}/{arch}/{loss}", "curve.tsv"),
        log:
            unit_path(_unit, "logs/train/{dataset}/{recipe}/{arch}/{loss}", ".log"),
        benchmark:
            unit_benchmark("train", _unit, "{dataset}/{recipe}/{arch}/{loss}")
        priority: 0 if _unit == "cell" else 10
        conda:
            "../envs/torch.yaml"
        threads: lambda w: config["recipes"][w.recipe]["threads"]
        resources:
            mem_mb=3000,
            runtime=lambda w, _unit=_unit: train_minutes(
                config["recipes"][w.recipe], w.arch, CLUSTER
            )
            * unit_seed_count(_unit),
            gpu=GPU,
        params:
            seeds=unit_seeds(_unit),
            arch_cfg=lambda w: config["architectures"][w.arch],
            loss_cfg=lambda w: LOSSES[w.loss],
            loss_code=loss_digest,
            train_cfg=lambda w: config["recipes"][w.recipe],
            device=EXECUTION,
        script:
            "../workflow/scripts/train.py"
