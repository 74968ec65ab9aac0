"""What every workflow script shares: logging to the rule's log file and one-sentence errors."""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable

__all__ = ["run_script", "user_errors"]


def user_errors() -> tuple[type[BaseException], ...]:
    from .errors import ConfigError, DownloadError, MissingDataError

    return (ConfigError, MissingDataError, DownloadError, ValueError, FloatingPointError)


def run_script(main: Callable[[], None], log_path: str) -> None:
    """Run ``main`` with INFO logging to ``log_path`` (and stderr).

    A user-facing error (bad config value, missing data, checksum mismatch, non-finite loss)
    ends the job with its one-sentence message on stderr and in the log, exit status 1, and no
    traceback; any other exception propagates with its traceback (a bug).
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
        main()
    except user_errors() as err:
        logging.getLogger("softmax_ood").error("%s", err)  # to the log file and stderr
        sys.exit(1)
