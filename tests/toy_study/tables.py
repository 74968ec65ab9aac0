"""The toy study's table: each seed's fitted slope."""

from __future__ import annotations

import pandas as pd

from .lines import slopes


def _slopes(frames: dict, section: dict) -> pd.DataFrame:
    return slopes(frames["lines"])


TABLES = {"slopes": _slopes}
