"""What every workflow script shares: logging to the rule's log file and one-sentence errors."""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable

__all__ = [
    "BENCHMARKS_ENV",
    "INTERRUPTED",
    "QUIET_INTERRUPT_ENV",
    "cpu_seconds",
    "interrupted",
    "job_script",
    "one_line_on_interrupt",
    "run_job",
    "run_script",
    "set_job_pythonpath",
    "user_errors",
]

INTERRUPTED = "interrupted: rerun the same snakemake command to resume"


# set by the Snakefile in the Snakemake process, which then prints the line itself (once, not
# once per running job: one_line_on_interrupt); a job then writes it to its rule log only
QUIET_INTERRUPT_ENV = "SOFTMAX_OOD_QUIET_INTERRUPT"


def _say_interrupted() -> None:
    import os

    if not os.environ.get(QUIET_INTERRUPT_ENV):
        print(INTERRUPTED, file=sys.stderr)


def _quiet_interrupt(exc_type, exc, tb, _previous=sys.excepthook):
    """Ctrl-C while a script is still importing (torch takes seconds): one line, no traceback."""
    if issubclass(exc_type, KeyboardInterrupt):
        _say_interrupted()
        return
    _previous(exc_type, exc, tb)


# scripts import this module first, before torch: an interrupt from here on is one line
sys.excepthook = _quiet_interrupt


def user_errors() -> tuple[type[BaseException], ...]:
    """What a script reports as one sentence without a traceback: :class:`~.errors.UserError`
    (config, missing data, downloads, artifacts, numerics, divergence). Anything else is a bug
    and keeps its traceback."""
    from .errors import UserError

    return (UserError,)


def _note_rebuild_hint(message: str) -> None:
    """A job that printed a rebuild command tells the Snakemake process (its ``onerror``
    then does not also say "rerun the same command")."""
    import os

    from .errors import HINTS_ENV

    path = os.environ.get(HINTS_ENV)
    if path and "--forcerun" in message:
        try:
            with open(path, "a") as fh:
                fh.write(message.replace("\n", " ") + "\n")
        except OSError:
            pass  # only the wording of the closing line depends on it


def run_script(main: Callable[[], None], log_path: str) -> None:
    """Run ``main`` with INFO logging to ``log_path`` (and stderr).

    A user-facing error (bad config value, missing data, checksum mismatch, non-finite loss)
    or a write the machine refused (a full disk, a read-only folder: :func:`.errors.disk_error`)
    ends the job with its one-sentence message on stderr and in the log, exit status 1, and no
    traceback; any other exception propagates with its traceback (a bug). Ctrl-C (SIGINT) ends
    it with one line and exit status 130; atomic writes leave no partial file behind.
    """
    console = logging.StreamHandler(sys.stderr)
    console.setLevel(logging.WARNING)  # progress goes to the rule's log file only
    console.setFormatter(logging.Formatter("%(levelname)s: %(message)s"))
    handlers = [logging.FileHandler(log_path, mode="w"), console]
    logging.basicConfig(
        level=logging.INFO,
        handlers=handlers,
        force=True,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",  # file handler only
    )
    try:
        from .numerics import check

        check()  # under numerics: pinned, stop if the pin does not hold on this machine
        main()
    except user_errors() as err:
        logging.getLogger("softmax_ood").error("%s", err)  # to the log file and stderr
        _note_rebuild_hint(str(err))
        sys.exit(1)
    except OSError as err:
        from .errors import disk_error

        sentence = disk_error(err)  # a full disk, a read-only folder: the machine, not a bug
        if sentence is None:
            raise
        # the rule log and stderr; on a disk still full, the log's write fails quietly, not
        # with logging's own traceback (the half-written file is gone, so it usually fits)
        logging.raiseExceptions = False
        logging.getLogger("softmax_ood").error("%s", sentence)
        sys.exit(1)
    except KeyboardInterrupt:
        logging.getLogger("softmax_ood").info("%s", INTERRUPTED)  # the log file only
        _say_interrupted()
        sys.exit(130)


_TERMINATING = "Terminating processes on user request"  # Snakemake's notice on Ctrl-C


class _OneLineOnInterrupt(logging.Filter):
    """On Snakemake's console handler: its Ctrl-C notice becomes the one line (written to the
    handler's stream), and nothing after it passes (the cancelled jobs' errors, the path of
    its log, its closing WorkflowError)."""

    seen = False

    def __init__(self, stream) -> None:
        super().__init__()
        self.stream = stream

    def filter(self, record) -> bool:
        if _OneLineOnInterrupt.seen:
            return False
        if str(record.msg).startswith(_TERMINATING):
            _OneLineOnInterrupt.seen = True
            print(INTERRUPTED, file=self.stream, flush=True)
            return False
        return True


def one_line_on_interrupt(logger: logging.Logger | None = None) -> int:
    """In the Snakemake process (the Snakefile): a Ctrl-C shows the one line :data:`INTERRUPTED`
    and nothing more on the console (Snakemake's log file under ``.snakemake/log`` keeps its
    whole account), and every job (``$SOFTMAX_OOD_QUIET_INTERRUPT``) writes that line to its
    rule log only. Returns the number of console handlers filtered."""
    import os

    logger = logger or logging.getLogger("snakemake.logging")
    consoles = [
        h
        for h in logger.handlers
        if isinstance(h, logging.StreamHandler) and not isinstance(h, logging.FileHandler)
    ]
    for handler in consoles:
        handler.addFilter(_OneLineOnInterrupt(handler.stream))
    if consoles:
        os.environ[QUIET_INTERRUPT_ENV] = "1"
    return len(consoles)


def interrupted() -> bool:
    """Has this (Snakemake) process shown the Ctrl-C line (:func:`one_line_on_interrupt`)?"""
    return _OneLineOnInterrupt.seen


def job_script(smk) -> str:
    """The path (relative to the working directory, the checkout) of the script a Snakemake job
    runs: Snakemake runs a copy named ``.snakemake/scripts/tmp<random>.<name>`` of the script in
    ``smk.scriptdir``."""
    import os

    copy = os.path.basename(sys.argv[0])
    name = copy.split(".", 1)[1] if copy.startswith("tmp") and "." in copy else copy
    return os.path.relpath(os.path.join(smk.scriptdir, name))


def run_job(smk, main: Callable[[], None]) -> None:
    """What every workflow script calls: ``run_job(snakemake, main)``. Runs ``main`` as
    :func:`run_script` does (log to the rule's log file, one sentence for a user error, one line
    for Ctrl-C) after naming the job's rule and script for every provenance record it writes
    (:func:`softmax_ood.provenance.set_job`), and at its successful end records the sha256 of
    every output it wrote (:func:`softmax_ood.provenance.write_outputs_record`). The library is
    importable because the workflow puts this checkout's ``src`` on every job's PYTHONPATH (the
    Snakefile)."""
    startup = cpu_seconds()  # python start, Snakemake's script preamble, the script's imports
    from .provenance import set_job, write_outputs_record

    script = job_script(smk)
    set_job(smk.rule, script)
    run_script(main, smk.log[0])
    # after the job's last output (a report's HTML included): what it wrote, for the stale
    # check and the audit (softmax_ood.provenance.write_outputs_record)
    write_outputs_record(list(getattr(smk, "output", [])), rule=smk.rule, script=script)
    write_job_cpu(smk, startup)


BENCHMARKS_ENV = "SOFTMAX_OOD_BENCHMARKS"  # {rule: benchmark file pattern} (set by the Snakefile)


def cpu_seconds() -> dict[str, float]:
    """CPU seconds (user + system) of this process and of its children that have ended and
    been waited for (a notebook's kernel, a subprocess)."""
    import resource

    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return {"self": own.ru_utime + own.ru_stime, "children": kids.ru_utime + kids.ru_stime}


def job_cpu_path(smk):
    """``<benchmark file>.cpu.json`` of the job (its rule's ``benchmark:`` pattern, from
    ``$SOFTMAX_OOD_BENCHMARKS``, with the job's wildcards); None if the rule has none."""
    import json
    import os
    from pathlib import Path

    try:
        pattern = json.loads(os.environ.get(BENCHMARKS_ENV) or "{}").get(smk.rule)
    except ValueError:
        return None
    if not pattern:
        return None
    from snakemake.io import apply_wildcards

    wildcards = getattr(smk, "wildcards", None)
    bench = Path(apply_wildcards(pattern, dict(wildcards.items()) if wildcards else {}))
    return bench.with_name(bench.name.removesuffix(".tsv") + ".cpu.json")


def write_job_cpu(smk, startup: dict[str, float]) -> None:
    """Write the job's exact CPU seconds beside its benchmark file (:func:`job_cpu_path`):
    ``cpu_s`` (this process and its children, from start to the end of the job), ``self_s``,
    ``children_s`` and ``startup_s`` (spent before the job's ``main``: python start, Snakemake's
    preamble, imports). Snakemake's own benchmark samples CPU, so misses most of long jobs."""
    import json

    from .provenance import write_bytes_atomic

    path = job_cpu_path(smk)
    if path is None:
        return
    end = cpu_seconds()
    rec = {
        "rule": smk.rule,
        "cpu_s": round(end["self"] + end["children"], 4),
        "self_s": round(end["self"], 4),
        "children_s": round(end["children"], 4),
        "startup_s": round(startup["self"] + startup["children"], 4),
        "threads": getattr(smk, "threads", 1),
        "torch_imported": "torch" in sys.modules,  # a job that neither trains nor evaluates: no
        # the job's outputs: workflow/bench/schedule.py joins the records to the run's DAG
        "outputs": [str(o) for o in smk.output],
    }
    write_bytes_atomic(path, (json.dumps(rec, sort_keys=True, indent=1) + "\n").encode())


def set_job_pythonpath(checkout) -> str:
    """Put ``<checkout>/src`` (this checkout's library, ahead of any installed copy) and
    ``<checkout>/workflow/jobstart`` (its ``sitecustomize``: a Ctrl-C while a job's Python is
    still starting prints one line, not a traceback) first on ``PYTHONPATH``, which every job
    inherits; the user's own entries follow. Returns the new value."""
    import os

    ours = [os.path.join(str(checkout), d) for d in ("src", os.path.join("workflow", "jobstart"))]
    theirs = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    os.environ["PYTHONPATH"] = os.pathsep.join(ours + [p for p in theirs if p not in ours])
    return os.environ["PYTHONPATH"]
