"""Job start-up hook: every Python process a workflow job starts imports this first (the
Snakefile puts this folder on the jobs' PYTHONPATH), so a Ctrl-C that lands while Snakemake's
script preamble is still importing, before the script's own handler
(``softmax_ood.cli.run_script``) exists, ends the job with one line instead of a traceback.
Self-contained on purpose: it runs before this checkout's library is on ``sys.path``."""

import importlib.machinery
import importlib.util
import os
import sys

INTERRUPTED = "interrupted: rerun the same snakemake command to resume"


def _quiet_interrupt(exc_type, exc, tb, _previous=sys.excepthook):
    if issubclass(exc_type, KeyboardInterrupt):
        # under the Snakemake process that prints the line itself (softmax_ood.cli): nothing
        if not os.environ.get("SOFTMAX_OOD_QUIET_INTERRUPT"):
            print(INTERRUPTED, file=sys.stderr)
        return
    _previous(exc_type, exc, tb)


sys.excepthook = _quiet_interrupt


def _chain():
    """Run the sitecustomize this one shadows, if the environment has one."""
    here = os.path.dirname(os.path.abspath(__file__))
    rest = [p for p in sys.path if os.path.abspath(p or ".") != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", rest)
    if spec is not None and spec.loader is not None:
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)


_chain()
