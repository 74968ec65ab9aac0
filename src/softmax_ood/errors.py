"""The user-facing error types: each message is one sentence, and a workflow script that raises
one ends with that sentence and no traceback (:func:`softmax_ood.cli.run_script`).

Kept in a module of their own so that a script's derived code inputs do not pull in the modules
that raise them.
"""

from __future__ import annotations

__all__ = ["ArtifactError", "ConfigError", "DownloadError", "MissingDataError", "UserError"]


class UserError(Exception):
    """A problem with the user's input, data or machine, not with this code: its message is one
    sentence saying what is wrong and what to do. A workflow script that raises one ends with
    that sentence and no traceback (:func:`softmax_ood.cli.run_script`); every other exception,
    a ``ValueError`` from a library bug included, keeps its traceback."""


class ConfigError(UserError, ValueError):
    """The config is invalid; the message is one sentence."""


class MissingDataError(UserError, FileNotFoundError):
    """A prepared data file is missing; the message names the rule that makes it."""


class DownloadError(UserError, RuntimeError):
    """A download, checksum verification or extraction failed; the message is one sentence."""


class ArtifactError(UserError, ValueError):
    """An artifact a rule consumes does not match what its producer recorded (content hash, or
    a checkpoint's run identity), or cannot be read; the message names the file, the rule that
    makes it and the one command that rebuilds it."""


COMMAND_ENV = "SOFTMAX_OOD_COMMAND"  # the snakemake command the user ran (set by the Snakefile)
HINTS_ENV = "SOFTMAX_OOD_HINTS"  # file a job appends its printed rebuild command to
_VALUE_OPTIONS = ("--forcerun", "-R")  # options dropped from the user's command (and their values)


def user_command(argv) -> str:
    """The snakemake command line ``argv`` (``sys.argv`` of the Snakemake process) as the user
    can paste it: program name ``snakemake``, every option and target kept (``--configfile``
    included), any ``--forcerun``/``-R`` and its values dropped (a rebuild hint adds its own)."""
    import shlex

    args, skip = [], False
    for a in list(argv)[1:]:
        if skip:
            if a.startswith("-"):
                skip = False
            else:
                continue
        if a in _VALUE_OPTIONS:
            skip = True
            continue
        if a.startswith(tuple(o + "=" for o in _VALUE_OPTIONS)):
            continue
        args.append(a)
    return shlex.join(["snakemake", *args])


def rebuild_hint(path, rule: str) -> str:
    """The recovery clause of an :class:`ArtifactError` (one command): the snakemake command
    the user ran (with their ``--configfile``s), plus ``--forcerun <path>``."""
    import os
    import shlex

    command = os.environ.get(COMMAND_ENV) or "snakemake --cores all"
    return f"it is made by the rule '{rule}'; rebuild it with: {command} --forcerun {shlex.quote(str(path))}"


def remove_refused_folder(made, logfiles=()) -> list[str]:
    """What a refused ``-d <folder>`` made goes, and nothing else: this run's own Snakemake log
    files (``logfiles``: made before the workflow could refuse; Snakemake keeps writing to the
    unlinked file), then each folder of ``made`` (the folders that did not exist before
    Snakemake started, deepest first: ``.snakemake/log``, ``.snakemake``, the folder and its
    missing parents, as the logger plugin recorded them) while it is empty. A folder that
    existed before the run is never removed. Returns the folders removed."""
    import os
    from pathlib import Path

    for f in logfiles:
        try:
            os.unlink(f)
        except OSError:
            pass
    removed = []
    for folder in made:
        folder = Path(folder)
        if not folder.is_dir() or folder.is_symlink():
            continue  # not made after all (a dry run makes no .snakemake/log)
        try:
            here, gone = Path.cwd().resolve(), folder.resolve()
            if here == gone or gone in here.parents:  # not removable while it is the cwd
                os.chdir(folder.parent)
            folder.rmdir()  # only if empty
        except OSError:
            break  # not empty (or not ours to remove): neither are its parents
        removed.append(str(folder))
    return removed


def unlock_hint(locks, argv) -> str | None:
    """The one line a run prints when the folder holds Snakemake's locks (``locks``: the
    ``.snakemake/locks`` folder) and it will take them (not a dry run, not ``--unlock``): they
    are left by a run that was killed (a run still going here stops the new one earlier:
    :func:`live_lock`; one on another machine sharing the folder cannot be seen); the unlock
    command is the user's own (``argv``: the Snakemake process's) with ``--unlock``."""
    from pathlib import Path

    args = list(argv)[1:]
    if any(
        a in ("-n", "--dry-run", "--dryrun", "--unlock", "--lint", "--list-rules") for a in args
    ):
        return None
    try:
        if not any(Path(locks).iterdir()):
            return None
    except OSError:
        return None
    return (
        "locked: this folder holds the locks of another snakemake run; if none is running "
        f"(the last one was killed), unlock it with: {user_command(argv)} --unlock, then rerun"
    )


def _is_snakemake(cmdline) -> bool:
    """Is ``cmdline`` a Snakemake run (``snakemake ...``, ``python -m snakemake ...``) or one
    of its jobs (``python .snakemake/scripts/tmp<random>.<script>``)?"""
    import os

    args = list(cmdline or ())
    return any(os.path.basename(a) == "snakemake" for a in args[:3]) or any(
        ".snakemake/scripts/" in a for a in args[:3]
    )


def live_runs(folder) -> list[int]:
    """The process ids of the Snakemake runs and jobs (:func:`_is_snakemake`) working in
    ``folder`` (their working directory), besides this process and its parents."""
    from pathlib import Path

    import psutil  # a dependency of Snakemake

    folder = Path(folder).resolve()
    me = psutil.Process()
    skip = {me.pid, *(p.pid for p in me.parents())}
    found = []
    for proc in psutil.process_iter(["pid", "cwd", "cmdline"]):
        info = proc.info
        if info["pid"] in skip or not info["cwd"] or Path(info["cwd"]) != folder:
            continue
        if _is_snakemake(info["cmdline"]):
            found.append(info["pid"])
    return sorted(found)


def live_lock(locks, folder, argv) -> str | None:
    """The one sentence a run stops with, before it reads or touches anything of the tree,
    when another Snakemake run is working in ``folder`` and holds its locks (``locks``: the
    ``.snakemake/locks`` folder): a second run (a dry run too) would check the live run's
    half-written files and re-date them. None without locks, when no live run holds them (a
    killed run left them: :func:`unlock_hint`), or for ``--unlock``."""
    from pathlib import Path

    if "--unlock" in list(argv)[1:]:
        return None
    try:
        if not any(Path(locks).glob("*.lock")):
            return None
    except OSError:
        return None
    pids = live_runs(folder)
    if not pids:
        return None
    return (
        f"locked: another snakemake run (process {pids[0]}) is working in {folder}; wait for "
        "it to end (or stop it), then rerun"
    )


def unwritable(jobs) -> str | None:
    """One sentence for the first file that Snakemake's ``jobs`` (the run's jobs, before the
    first starts) will write (outputs, logs, benchmarks) in a folder this user cannot write
    (read-only, or another user's): Snakemake would stop on it with a 64-line traceback.
    None if every folder is writable."""
    import os
    from pathlib import Path

    seen = set()
    for job in jobs:
        bench = [job.benchmark] if getattr(job, "benchmark", None) else []
        for path in (*job.output, *job.log, *bench):
            folder = Path(str(path)).parent
            while not folder.exists() and folder != folder.parent:
                folder = folder.parent  # Snakemake makes the missing ones in the nearest existing
            if folder in seen:
                continue
            seen.add(folder)
            if not os.access(folder, os.W_OK | os.X_OK):
                return (
                    f"cannot write {path}: the folder {folder} is read-only for this user; make "
                    f"it writable (chmod -R u+w {folder}), then rerun the same command"
                )
    return None


def disk_error(err: BaseException) -> str | None:
    """One sentence for a job's write that the machine refused (``OSError``: a full disk or
    quota, a read-only file system, a folder it may not write), naming the file; None for any
    other error (a bug keeps its traceback)."""
    import errno

    if not isinstance(err, OSError):
        return None
    where = err.filename or "a file of this job (the rule log names its outputs)"
    if err.errno in (errno.ENOSPC, errno.EDQUOT):
        return (
            f"cannot write {where}: {err.strerror} (the disk or your quota is full); free space "
            "on that disk, then rerun the same snakemake command"
        )
    if err.errno == errno.EROFS:
        return (
            f"cannot write {where}: {err.strerror}; run from a checkout on a writable disk, "
            "then rerun the same snakemake command"
        )
    if err.errno in (errno.EACCES, errno.EPERM):  # a read of an input, or a write
        return (
            f"cannot access {where}: {err.strerror}; give this user read and write access to "
            "it and its folder, then rerun the same snakemake command"
        )
    return None


def rebuild_hints_printed() -> bool:
    """In the Snakemake process at its end: did a job print a rebuild command (noted in the
    file ``$SOFTMAX_OOD_HINTS``)? Removes the note."""
    import os
    from pathlib import Path

    name = os.environ.get(HINTS_ENV)
    if not name:
        return False
    path = Path(name)
    printed = path.is_file() and path.stat().st_size > 0
    path.unlink(missing_ok=True)
    return printed
