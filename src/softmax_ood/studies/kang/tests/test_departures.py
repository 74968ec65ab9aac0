"""The Kang departures are filled from the config (review findings 5, 7): a changed config value
changes the departure's text, so it cannot go stale; recipe rows apply only where the recipe is
used."""

from __future__ import annotations

from softmax_ood.studies.kang.departures import DEPARTURES
from softmax_ood.studies.kang.study import departures

from .conftest import raw_config, validated


def _by_setting(cfg: dict) -> dict:
    return {d.setting: d for d in departures(cfg)}


def test_departures_state_the_configs_values(cfg):
    d = _by_setting(cfg)
    s, rec = cfg["kang"], cfg["recipes"][cfg["kang"]["recipe"]]
    assert f"{rec['epochs']} epochs" in d["kang.recipe"].ours
    assert s["arch"] in d["kang.arch"].ours
    assert f"width {s['featurizer']['params']['width']}" in d["kang.featurizer"].ours
    assert f"{len(s['corruptions'])} corruptions" in d["kang.corruptions"].ours
    assert ("defocus_blur" in s["corruptions"]) is (
        "defocus_blur" not in d["kang.corruptions"].ours.split("not run:")[1]
    )
    assert f"{float(s['discriminator']['alpha']):g}" in d["kang.discriminator.alpha"].ours
    assert "not selected" in d["kang.discriminator.alpha"].ours
    ids = cfg["data"]["id_classes"]
    assert f"the {len(ids)} ID classes" in d["data.dataset (kang)"].ours
    assert f"weight decay {rec['weight_decay']:g}" in d["kang.recipe"].ours


def test_a_changed_config_value_changes_the_departure_text():
    raw = raw_config()
    raw["recipes"]["kang-fashion"]["epochs"] = 7
    raw["kang"]["featurizer"]["params"]["width"] = 48
    raw["kang"]["corruptions"] = ["gaussian_noise", "contrast"]
    raw["kang"]["discriminator"]["alpha"] = None
    d = _by_setting(validated(raw))
    assert "7 epochs" in d["kang.recipe"].ours and "20 epochs" not in d["kang.recipe"].ours
    assert "width 48" in d["kang.featurizer"].ours
    assert d["kang.corruptions"].ours.startswith("2 corruptions")
    cands = raw["kang"]["discriminator"]["select"]["candidates"]
    assert d["kang.discriminator.alpha"].ours.startswith("chosen from " + f"{cands[0]:g}")


def test_recipe_rows_apply_only_to_the_recipe_in_use():
    raw = raw_config()
    raw["kang"]["recipe"] = raw["kang"]["mechanism"]["recipe"] = "kang"
    d = _by_setting(validated(raw))
    assert "recipe kang:" in d["kang.recipe"].ours
    assert "cosine schedule" in d["kang.recipe"].ours  # recipes.kang's own schedule
    # every template field is filled (no "{" left) for the default
    assert not [x for x in departures(validated(raw_config())) if "{" in x.ours + x.why]
    assert len({x.setting for x in DEPARTURES}) == len(DEPARTURES)  # one row per setting
