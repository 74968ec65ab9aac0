"""Config-file problems and running from another folder: one sentence each (dry runs in a
temporary copy of the working tree, never in the checkout)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from e2e import fresh_copy, snakemake  # noqa: E402

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    return fresh_copy(tmp_path_factory.mktemp("cfg") / "repo")


@pytest.fixture
def default_yaml(work):
    path = work / "config/default.yaml"
    text = path.read_text()
    yield path
    path.write_text(text)


def _err(proc) -> str:
    return proc.stdout + proc.stderr


def test_empty_default_config_is_one_sentence(work, default_yaml):
    default_yaml.write_text("")
    proc = snakemake(work, "-n")
    assert proc.returncode != 0
    assert f"config error: {default_yaml} is empty or not a YAML mapping of keys" in _err(proc)
    assert "Traceback" not in _err(proc)


def test_yaml_syntax_error_names_file_and_line(work, default_yaml):
    lines = default_yaml.read_text().splitlines()
    lines.insert(2, "data: [unclosed")
    default_yaml.write_text("\n".join(lines) + "\n")
    proc = snakemake(work, "-n")
    assert proc.returncode != 0
    err = _err(proc)
    assert f"config error: {default_yaml} line " in err, err[-2000:]
    assert "Traceback" not in err


def test_missing_default_config_is_one_sentence(work, default_yaml):
    default_yaml.unlink()
    proc = snakemake(work, "-n")
    assert proc.returncode != 0
    assert f"config error: cannot read {default_yaml}" in _err(proc)


def test_from_a_subfolder_with_snakefile_runs_in_the_checkout(work):
    sub = work / "subfolder"
    sub.mkdir(exist_ok=True)
    proc = snakemake(
        sub, "-n", "--snakefile", "../Snakefile", "--configfile", "../config/smoke.yaml"
    )
    assert proc.returncode == 0, _err(proc)[-3000:]
    assert "architectures" not in proc.stderr
    assert not (sub / "results").exists() and not (sub / ".snakemake").exists()


def test_another_working_directory_is_one_sentence(work, tmp_path):
    proc = snakemake(work, "-n", "-d", str(tmp_path))
    assert proc.returncode != 0
    assert "config error: this workflow runs in its checkout" in _err(proc)
    assert "Traceback" not in _err(proc)


# --configfile files are loaded by Snakemake 9 itself (snakemake.settings.types.ConfigSettings,
# while it converts the command line, before the Snakefile or any profile code runs); the
# workflow's logger-plugin package (src/snakemake_logger_plugin_softmax_ood, imported while
# Snakemake builds its parser) checks them first: one sentence naming the file and the line.
@pytest.mark.parametrize(
    "content, says",
    [
        (None, ": no such file"),
        ("", " is empty or not a YAML mapping"),
        ("a: [1,\nb: 2\n", " line 3: "),
    ],
    ids=["missing", "empty", "bad"],
)
def test_configfile_option_problems_name_the_file(work, tmp_path, content, says):
    path = tmp_path / "extra.yaml"
    if content is not None:
        path.write_text(content)
    proc = snakemake(work, "-n", "--configfile", str(path))
    assert proc.returncode != 0
    err = _err(proc)
    assert f"Error: config file {path} (--configfile){says}" in err, err[-2000:]
    assert "Traceback" not in err and 'File "' not in err


def test_relative_configfile_from_a_subfolder_names_the_workflows_file(work):
    sub = work / "subfolder"
    sub.mkdir(exist_ok=True)
    proc = snakemake(sub, "-n", "--snakefile", "../Snakefile", "--configfile", "config/smoke.yaml")
    assert proc.returncode != 0
    err = _err(proc)
    assert "Error: config file config/smoke.yaml (--configfile): no such file" in err, err[-2000:]
    assert "the workflow's file is ../config/smoke.yaml" in err
    assert "Traceback" not in err and 'File "' not in err


def test_no_yaml_file_repeats_a_key():
    """YAML keeps the last of two equal keys silently: a repeated key in a config or a schema
    hides the first (found: a schema's recipes.train_size, paper.yaml's kang.eval_size)."""
    import yaml

    class Strict(yaml.SafeLoader):
        pass

    def mapping(loader, node, deep=False):
        keys = [loader.construct_object(k, deep=deep) for k, _ in node.value]
        repeated = sorted({str(k) for k in keys if keys.count(k) > 1})
        assert not repeated, f"line {node.start_mark.line + 1}: {repeated} repeated"
        return yaml.SafeLoader.construct_mapping(loader, node, deep)

    Strict.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, mapping)
    root = Path(__file__).resolve().parents[1]
    files = [
        *root.glob("config/*.yaml"),
        *root.glob("workflow/schemas/*.yaml"),
        *root.glob("src/softmax_ood/studies/*/schema.yaml"),
        *root.glob("profiles/*/config.yaml"),
        *root.glob("envs/*.yaml"),
    ]
    assert len(files) > 10
    for f in files:
        try:
            yaml.load(f.read_text(), Strict)
        except AssertionError as err:
            raise AssertionError(f"{f.relative_to(root)}: {err}") from None
