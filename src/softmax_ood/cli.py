"""What every workflow script shares: logging to the rule's log file and one-sentence errors."""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable

__all__ = [
    "INTERRUPTED",
    "job_script",
    "run_job",
    "run_script",
    "set_job_pythonpath",
    "user_errors",
]

INTERRUPTED = "interrupted: rerun the same snakemake command to resume"


def _quiet_interrupt(exc_type, exc, tb, _previous=sys.excepthook):
    """Ctrl-C while a script is still importing (torch takes seconds): one line, no traceback."""
    if issubclass(exc_type, KeyboardInterrupt):
        print(INTERRUPTED, file=sys.stderr)
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
    except KeyboardInterrupt:
        logging.getLogger("softmax_ood").info("%s", INTERRUPTED)  # the log file only
        print(INTERRUPTED, file=sys.stderr)
        sys.exit(130)


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
    (:func:`softmax_ood.provenance.set_job`). The library is importable because the workflow
    puts this checkout's ``src`` on every job's PYTHONPATH (the Snakefile)."""
    from .provenance import set_job

    set_job(smk.rule, job_script(smk))
    run_script(main, smk.log[0])


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
