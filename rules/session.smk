# The run around the jobs (included last by the Snakefile, after every rule): cluster resources
# of every rule, each job's benchmark file, the user's command and the rebuild-hint note, the
# unlock hint, the planned GPU-hours, stale files marked, and the one handler per event.

# the config's cluster: section (partitions, GPU model, runtimes) as every rule's resources
cluster_resources()

# every job writes its exact CPU seconds beside its benchmark file (softmax_ood.cli.run_job)
from softmax_ood.cli import BENCHMARKS_ENV

os.environ[BENCHMARKS_ENV] = json.dumps(
    {r.name: str(r.benchmark) for r in workflow.rules if r.benchmark}
)


# The command the user ran (with their --configfile) for the rebuild hints jobs print, and a
# file a job notes them in (softmax_ood.errors); only the main process sets them, every job
# (local or on a cluster) inherits them.
from softmax_ood.errors import (
    COMMAND_ENV,
    HINTS_ENV,
    rebuild_hints_printed,
    user_command,
)

if workflow.is_main_process:
    from softmax_ood.cli import one_line_on_interrupt

    one_line_on_interrupt()  # Ctrl-C: the one line on the console, not Snakemake's account
    os.environ[COMMAND_ENV] = user_command(sys.argv)
    _HINTS = Path(".snakemake/softmax_ood") / f"rebuild-hints-{os.getpid()}"
    _HINTS.parent.mkdir(parents=True, exist_ok=True)
    _HINTS.unlink(missing_ok=True)
    os.environ[HINTS_ENV] = str(_HINTS.resolve())

# A run killed (SIGKILL, a lost session) leaves Snakemake's locks behind, and the next run stops
# on its LockException: say first, in one line, which command unlocks (softmax_ood.errors).
if workflow.is_main_process:
    from softmax_ood.errors import unlock_hint

    _hint = unlock_hint(Path(".snakemake/locks"), sys.argv)
    if _hint:
        print(_hint, file=sys.stderr)

# The training GPU-hours this configuration plans, at measured per-epoch times (when the config
# gives them: cluster.seconds_per_epoch; softmax_ood.estimate), next to the dry run's job counts.
if workflow.is_main_process and config["cluster"]["seconds_per_epoch"]:
    from softmax_ood.estimate import gpu_hours, render_gpu_hours

    _spe = config["cluster"]["seconds_per_epoch"]
    print(render_gpu_hours(gpu_hours(RUNS, config["recipes"], _spe), _spe), file=sys.stderr)

# Nothing stale unnoticed (softmax_ood.stale): a file whose bytes no longer match the sha256
# its consumers recorded (changed with its mtime kept), or a deleted intermediate, is marked
# (mtime set to 1970) so that its job and everything made from it rerun. Checked in the main
# process only, once per invocation (well under a second).
if workflow.is_main_process:
    from softmax_ood.stale import find_stale, mark
    from softmax_ood.startcache import open_cache

    _stale = find_stale(
        workflow.basedir, data_dirs=[f"data/{DATASET}"], cache=open_cache(workflow.basedir, "sha256")
    )
    _seen = set()
    for _s in _stale:  # one line per job to rerun, one per refused record
        if (_s.marks or _s.path) not in _seen:
            print(f"stale: {_s.sentence()}", file=sys.stderr)
            _seen.add(_s.marks or _s.path)
    mark(_stale, workflow.basedir)


# Before the first job (not a dry run; the lock is held), in one handler (Snakemake keeps one):
# - a folder this run writes that is read-only is one sentence, not Snakemake's traceback when
#   it prepares that job (softmax_ood.errors.unwritable);
# - a download killed outright (SIGKILL, a lost session) left its .<file>.<random>.part in
#   data/raw/: removed (no other run's transfer is in flight); the download job also removes
#   its own file's.
onstart:
    from softmax_ood.download import remove_all_partial_files
    from softmax_ood.errors import unwritable

    _ro = unwritable(workflow.dag.needrun_jobs())
    if _ro:
        raise WorkflowError(_ro)
    for _part in remove_all_partial_files("data/raw"):
        print(f"removed {_part}, the partial file of a killed download", file=sys.stderr)


onsuccess:
    rebuild_hints_printed()


onerror:
    from softmax_ood.cli import interrupted

    _printed = rebuild_hints_printed()  # (and removes the note)
    if interrupted():
        pass  # Ctrl-C: its one line is printed (softmax_ood.cli.one_line_on_interrupt)
    elif _printed:
        print(
            "A job stopped on a file that does not match its record: run the rebuild command "
            "printed above (it rebuilds that file and everything made from it).",
            file=sys.stderr,
        )
    else:
        print(
            "To resume: rerun the same command (incomplete files are redone); after a kill, "
            "if the folder is locked: snakemake --unlock, then rerun.",
            file=sys.stderr,
        )
