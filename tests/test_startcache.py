"""The caches a Snakemake start keeps (softmax_ood.startcache): a hit is exact, a changed file
always misses, a damaged cache is empty."""

import hashlib
import json
import os
import time
from pathlib import Path

import pytest

from softmax_ood import codedeps
from softmax_ood.provenance import path_sha256
from softmax_ood.stale import find_stale
from softmax_ood.startcache import JsonCache, open_cache


def _sha(b: bytes) -> str:
    return hashlib.sha256(b).hexdigest()


@pytest.fixture
def later(monkeypatch):
    """The cache's clock 60 s ahead, so files written by the test are not racy."""
    real = time.time_ns
    monkeypatch.setattr("softmax_ood.startcache.time.time_ns", lambda: real() + 60 * 10**9)


def test_hit_is_served_from_the_cache(tmp_path, later):
    f = tmp_path / "a.bin"
    f.write_bytes(b"one")
    cache = JsonCache(tmp_path / "c.json")
    assert path_sha256(f, cache) == _sha(b"one")
    key = str(f.resolve())
    cache.data[key][1] = "served-from-cache"  # proves the second call reads the cache
    assert path_sha256(f, cache) == "served-from-cache"


def test_changed_bytes_with_mtime_restored_miss_the_cache(tmp_path, later):
    f = tmp_path / "a.bin"
    f.write_bytes(b"one")
    st = f.stat()
    cache = JsonCache(tmp_path / "c.json")
    assert path_sha256(f, cache) == _sha(b"one")
    time.sleep(0.01)
    f.write_bytes(b"two")  # same size
    os.utime(f, ns=(st.st_atime_ns, st.st_mtime_ns))  # mtime put back: only ctime tells
    assert f.stat().st_mtime_ns == st.st_mtime_ns and f.stat().st_size == st.st_size
    assert path_sha256(f, cache) == _sha(b"two")


def test_racy_files_are_not_recorded(tmp_path):
    f = tmp_path / "a.bin"
    f.write_bytes(b"fresh")
    cache = JsonCache(tmp_path / "c.json")
    assert path_sha256(f, cache) == _sha(b"fresh")
    assert cache.data == {} and not cache.dirty


def test_saved_and_reloaded_and_damaged(tmp_path, later):
    f = tmp_path / "a.bin"
    f.write_bytes(b"x")
    cache = open_cache(tmp_path, "sha256")
    path_sha256(f, cache)
    cache.save()
    path = tmp_path / ".snakemake/softmax_ood/sha256.json"
    again = JsonCache(path)
    assert again.data == cache.data and again.data
    g = tmp_path / "b.bin"
    g.write_bytes(b"y")
    path_sha256(g, again)  # a start that no longer asks for a.bin: its entry is dropped
    again.save()
    assert list(JsonCache(path).data) == [str(g.resolve())]
    for bad in ("{not json", json.dumps({"format": 999, "entries": {"k": 1}}), "[]"):
        path.write_text(bad)
        assert JsonCache(path).data == {}
    assert not list(path.parent.glob(".*.tmp"))


def test_directory_hash_equals_the_uncached_one(tmp_path, later):
    d = tmp_path / "d"
    (d / "sub").mkdir(parents=True)
    (d / "x.npy").write_bytes(b"1" * 1000)
    (d / "sub" / "y.json").write_text("{}")
    cache = JsonCache(tmp_path / "c.json")
    assert path_sha256(d, cache) == path_sha256(d) == path_sha256(d, cache)
    assert len(cache.data) == 2


def test_stale_check_with_the_cache_still_finds_a_changed_file(tmp_path, later):
    """The stale check's own trap: bytes changed, mtime kept. With a warm cache it is found."""
    model = tmp_path / "results/train/ds/r/a/l/seed0/model.pt"
    model.parent.mkdir(parents=True)
    model.write_bytes(b"weights-1")
    summary = tmp_path / "results/eval/ds/r/a/l/seed0/summary.json"
    summary.parent.mkdir(parents=True)
    summary.write_text(json.dumps({"inputs": {"model_sha256": _sha(b"weights-1")}}))
    st = model.stat()
    os.utime(summary, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    cache = JsonCache(tmp_path / "c.json")
    assert find_stale(tmp_path, data_dirs=[], cache=cache) == []
    assert any(k.endswith("model.pt") for k in cache.data)  # warm
    model.write_bytes(b"weights-2")
    os.utime(model, ns=(st.st_atime_ns, st.st_mtime_ns))
    found = find_stale(tmp_path, data_dirs=[], cache=cache)
    assert [s.path for s in found] == ["results/train/ds/r/a/l/seed0/model.pt"]


def test_code_inputs_with_the_cache_equal_the_parsed_ones(tmp_path):
    root = Path(__file__).resolve().parents[1]
    script = root / "workflow/scripts/train.py"
    codedeps.use_cache(None)
    plain = codedeps.code_inputs(script, root / "src")
    codedeps._closure.cache_clear()
    cache = JsonCache(tmp_path / "imports.json")
    try:
        codedeps.use_cache(cache)
        warm = codedeps.code_inputs(script, root / "src")
        assert warm == plain and cache.data
        codedeps._closure.cache_clear()
        codedeps.use_cache(cache)  # a new start: every module from the cache
        digest = hashlib.sha256(script.read_text().encode()).hexdigest()
        key = f"None\x000\x00{digest}"
        assert key in cache.data
        cache.data[key] = []  # the script's entry says it imports nothing: what is served
        assert codedeps.code_inputs(script, root / "src") == []
    finally:
        codedeps.use_cache(None)
        codedeps._closure.cache_clear()
