"""Drop the run-time stamps papermill and nbclient write into an executed notebook and number the
cells (papermill gives its injected-parameters cell a random id), so that the same inputs give a
byte-identical report (usage: ``python clean_notebook.py NOTEBOOK``)."""

import json
import sys
from pathlib import Path

_TIMES = ("start_time", "end_time", "duration")


def clean(nb: dict) -> dict:
    for key in _TIMES:
        nb.get("metadata", {}).get("papermill", {}).pop(key, None)
    for i, cell in enumerate(nb.get("cells", [])):
        if "id" in cell:
            cell["id"] = f"cell-{i}"
        meta = cell.get("metadata", {})
        meta.pop("execution", None)
        for key in _TIMES:
            meta.get("papermill", {}).pop(key, None)
    return nb


if __name__ == "__main__":
    path = Path(sys.argv[1])
    nb = clean(json.loads(path.read_text()))
    path.write_text(json.dumps(nb, indent=1, sort_keys=True, ensure_ascii=False) + "\n")
