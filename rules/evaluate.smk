# Every trained model on the ID test split and every OOD set, with every configured score it
# supports; one rule per job unit, as training (rules/train.smk): evaluate (every seed of a cell,
# one process) and evaluate_seed (one seed per job).
for _unit, _recipes in JOB_UNITS.items():

    rule:
        name:
            unit_rule("evaluate", _unit)
        wildcard_constraints:
            recipe=recipe_pattern(_recipes),
        input:
            model=unit_files(_unit, "results/train/{dataset}/{recipe}/{arch}/{loss}", "model.pt"),
            data="data/{dataset}",
            code=code("workflow/scripts/evaluate.py"),
        output:
            summary=unit_files(
                _unit, "results/eval/{dataset}/{recipe}/{arch}/{loss}", "summary.json"
            ),
            samples=unit_files(
                _unit, "results/eval/{dataset}/{recipe}/{arch}/{loss}", "scores.parquet"
            ),
        log:
            unit_path(_unit, "logs/eval/{dataset}/{recipe}/{arch}/{loss}", ".log"),
        benchmark:
            unit_benchmark("evaluate", _unit, "{dataset}/{recipe}/{arch}/{loss}")
        priority: 0 if _unit == "cell" else 10
        conda:
            "../envs/torch.yaml"
        threads: lambda w: config["recipes"][w.recipe]["threads"]
        resources:
            mem_mb=3000,
            runtime=CLUSTER["minutes_per_seed"]["evaluate"] * unit_seed_count(_unit),
            gpu=GPU,
        params:
            # what the checkpoints must have been trained with (checked when each is loaded)
            settings=lambda w: [
                config["architectures"][w.arch],
                LOSSES[w.loss],
                config["recipes"][w.recipe],
            ],
            scores=config["scores"],
            overrides=config["score_overrides"],
            evaluation=config["evaluation"],
            device=EXECUTION,
        script:
            "../workflow/scripts/evaluate.py"
