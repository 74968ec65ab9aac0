"""The user-facing error types: each message is one sentence, and a workflow script that raises
one ends with that sentence and no traceback (:func:`softmax_ood.cli.run_script`).

Kept in a module of their own so that a script's derived code inputs do not pull in the modules
that raise them.
"""

from __future__ import annotations

__all__ = ["ArtifactError", "ConfigError", "DownloadError", "MissingDataError"]


class ConfigError(ValueError):
    """The config is invalid; the message is one sentence."""


class MissingDataError(FileNotFoundError):
    """A prepared data file is missing; the message names the rule that makes it."""


class DownloadError(RuntimeError):
    """A download, checksum verification or extraction failed; the message is one sentence."""


class ArtifactError(ValueError):
    """An artifact a rule consumes does not match what its producer recorded (content hash, or
    a checkpoint's run identity), or cannot be read; the message names the file, the rule that
    makes it and the one command that rebuilds it."""


def rebuild_hint(path, rule: str) -> str:
    """The recovery clause of an :class:`ArtifactError` (one command)."""
    return (
        f"it is made by the rule '{rule}'; rebuild it with: snakemake --cores all --forcerun {path}"
    )
