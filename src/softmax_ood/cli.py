"""What every workflow script shares: logging to the rule's log file and one-sentence errors."""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable

__all__ = ["INTERRUPTED", "run_script", "user_errors"]

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
