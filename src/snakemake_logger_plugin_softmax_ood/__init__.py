"""The workflow's hook into the user's own ``snakemake`` command, before Snakemake reads the
``--configfile`` files: one sentence naming the file (and the line) for a missing, unreadable,
empty or unparsable one, and for a relative path given from a subfolder.

Snakemake 9 loads ``--configfile`` files while it converts the command line, before the
Snakefile or any profile runs, and prints a 27-line traceback for a missing file. The only code
of ours it runs that early is a plugin: it imports every ``snakemake_logger_plugin_*`` package
on ``sys.path`` while it builds its argument parser. This package is one (found because the
checkout's ``src`` is on ``sys.path``: ``workflow/setup.sh`` installs it editable; the tests put
it on ``PYTHONPATH``). Importing it wraps ``snakemake.settings.types.load_configfile`` (used for
``--configfile`` only) with the checks of :func:`softmax_ood.config.checked_configfile` (it
imports nothing of the library: the Snakefile imports its own checkout's), and Snakemake prints
the sentence as ``Error: <sentence>``. It also notes which folders a ``-d`` folder needs that
do not exist yet (:data:`MADE_FOR_DIRECTORY`: the only ones a refused ``-d`` removes), and
makes a Ctrl-C before the first job one line (:data:`INTERRUPTED`). Its log handler is a
valid, unused one (``--logger softmax-ood`` just prints plain records).
"""

from __future__ import annotations

import sys
from pathlib import Path

from snakemake_interface_logger_plugins.base import LogHandlerBase


def _snakefile_dir(argv) -> Path | None:
    args = list(argv)
    for i, a in enumerate(args):
        if a in ("-s", "--snakefile") and i + 1 < len(args):
            return Path(args[i + 1]).resolve().parent
        if a.startswith("--snakefile="):
            return Path(a.split("=", 1)[1]).resolve().parent
    return None


def configfile_problem(path, argv=()) -> str | None:
    """One sentence for a ``--configfile`` ``path`` Snakemake cannot use, else None."""
    path = Path(path)
    if not path.is_file():
        where = Path.cwd()
        sentence = f"config file {path} (--configfile): no such file"
        if not path.is_absolute():
            sentence += f" (a relative path is read from the folder snakemake runs in, {where}"
            home = _snakefile_dir(argv)
            if home is not None and (home / path).is_file():
                import os

                sentence += f"; the workflow's file is {os.path.relpath(home / path, where)}"
            sentence += ")"
        return sentence
    # the same sentences as softmax_ood.config.checked_configfile, without importing the
    # library here: the Snakefile must import its own checkout's copy, not the installed one
    import yaml

    name = f"config file {path} (--configfile)"
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as err:
        return f"{name}: cannot be read ({err.strerror})"
    except UnicodeDecodeError:  # usually a target (a figure, a table) written after --configfile
        return (
            f"{name} is not a text (YAML) file; if it is a target, put targets before "
            "--configfile (every name after --configfile is read as a config file)"
        )
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f" line {mark.line + 1}" if mark is not None else ""
        return f"{name}{where}: {getattr(err, 'problem', None) or 'not valid YAML'}"
    if not isinstance(data, dict):
        return f"{name} is empty or not a YAML mapping of keys"
    return None


def _install() -> None:
    try:
        import snakemake.settings.types as types
        from snakemake.exceptions import CliException
    except ImportError:  # another Snakemake: leave it as it is
        return
    load = types.load_configfile
    if getattr(load, "_softmax_ood", False):
        return

    def load_configfile(configpath):
        problem = configfile_problem(configpath, sys.argv)
        if problem:  # Snakemake prints a CliException as "Error: <sentence>", no traceback
            raise CliException(problem)
        return load(configpath)

    load_configfile._softmax_ood = True
    types.load_configfile = load_configfile


def directory_option(argv) -> str | None:
    """The ``-d``/``--directory`` value of the snakemake command line ``argv`` (the last one
    given), else None."""
    value, args = None, list(argv)[1:]
    for i, a in enumerate(args):
        if a in ("-d", "--directory") and i + 1 < len(args):
            value = args[i + 1]
        elif a.startswith("--directory="):
            value = a.split("=", 1)[1]
        elif a.startswith("-d") and len(a) > 2:
            value = a[2:]
    return value


def missing_folders(directory) -> tuple[str, ...]:
    """The folders Snakemake makes for ``-d directory`` that do not exist now, deepest first:
    ``<directory>/.snakemake/log``, ``<directory>/.snakemake``, the folder and its missing
    parents (absolute paths)."""
    import os

    d = Path(os.path.abspath(directory))
    missing = []
    for folder in (d / ".snakemake" / "log", d / ".snakemake", d, *d.parents):
        if os.path.lexists(folder):
            break
        missing.append(str(folder))
    return tuple(missing)


# Snakemake imports this package while it parses its command line: before it makes the -d
# folder (with its parents and .snakemake/log) and changes into it. What did not exist yet is
# what a refused -d may remove (the Snakefile: softmax_ood.errors.remove_refused_folder).
_directory = directory_option(sys.argv)
MADE_FOR_DIRECTORY = missing_folders(_directory) if _directory else ()

_install()

# the line of softmax_ood.cli.INTERRUPTED (this hook imports nothing of the library)
INTERRUPTED = "interrupted: rerun the same snakemake command to resume"


def _one_line_on_interrupt(exc_type, exc, tb, _previous=sys.excepthook):
    """Ctrl-C while Snakemake still reads the workflow or builds its DAG (nothing of it
    catches the interrupt there): the one line, not a traceback through Snakemake's parser."""
    if issubclass(exc_type, KeyboardInterrupt):
        print(INTERRUPTED, file=sys.stderr)
        return
    _previous(exc_type, exc, tb)


sys.excepthook = _one_line_on_interrupt


class LogHandler(LogHandlerBase):
    """Required of a logger plugin; prints records as they are."""

    def emit(self, record) -> None:
        print(self.format(record), file=sys.stderr)

    @property
    def writes_to_stream(self) -> bool:
        return True

    @property
    def writes_to_file(self) -> bool:
        return False

    @property
    def has_filter(self) -> bool:
        return False

    @property
    def has_formatter(self) -> bool:
        return False

    @property
    def needs_rulegraph(self) -> bool:
        return False
