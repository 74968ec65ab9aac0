"""softmax_ood.download: checked atomic downloads (loopback HTTP only) and safe extraction."""

from __future__ import annotations

import hashlib
import os
import socket
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from fixtures_archives import make_evil_tar, make_zip, write_tar  # noqa: E402

from softmax_ood.download import DownloadError, download, safe_extract, verify  # noqa: E402

PAYLOAD = bytes(range(256)) * 4096  # 1 MiB, > one read chunk boundary is not required
MD5 = hashlib.md5(PAYLOAD).hexdigest()
SHA256 = hashlib.sha256(PAYLOAD).hexdigest()


def _one_sentence(msg: str) -> None:
    assert "\n" not in msg
    assert msg.count(". ") == 0, msg  # a single sentence (clauses joined by ';' / ',')


def _listing(d: Path) -> list[str]:
    return sorted(p.name for p in d.iterdir()) if d.exists() else []


# --------------------------------------------------------------------------- download
@pytest.mark.parametrize(
    "kw", [{"md5": MD5}, {"sha256": SHA256}, {"md5": MD5, "sha256": SHA256}, {"md5": MD5.upper()}]
)
def test_download_verifies_and_writes_atomically(server, tmp_path, kw):
    url = server.add("/data/blob.bin", PAYLOAD)
    dest = tmp_path / "raw" / "blob.bin"
    assert download(url, dest, timeout=5, **kw) == dest
    assert dest.read_bytes() == PAYLOAD
    assert _listing(dest.parent) == ["blob.bin"]  # no temp file left
    verify(dest, md5=MD5, sha256=SHA256)
    assert oct(dest.stat().st_mode & 0o777) != oct(0o600)  # not mkstemp's private mode


def test_wrong_md5_raises_and_leaves_nothing(server, tmp_path):
    url = server.add("/cifar-10-python.tar.gz", PAYLOAD)
    dest = tmp_path / "raw" / "cifar-10-python.tar.gz"
    wrong = "0" * 32
    with pytest.raises(DownloadError) as info:
        download(url, dest, md5=wrong, timeout=5)
    msg = str(info.value)
    _one_sentence(msg)
    assert "checksum mismatch for cifar-10-python.tar.gz" in msg
    assert f"expected md5 {wrong}, got {MD5}" in msg
    assert "the file was deleted" in msg and str(dest) in msg
    assert _listing(dest.parent) == []  # neither dest nor any .part file


def test_wrong_sha256_with_right_md5_is_still_rejected(server, tmp_path):
    url = server.add("/x.bin", PAYLOAD)
    with pytest.raises(DownloadError, match="expected sha256"):
        download(url, tmp_path / "x.bin", md5=MD5, sha256="f" * 64, timeout=5)
    assert _listing(tmp_path) == []


def test_truncated_body_raises_and_leaves_nothing(server, tmp_path):
    url = server.add("/big.tar.gz", PAYLOAD)
    server.truncate.add("/big.tar.gz")
    dest = tmp_path / "big.tar.gz"
    with pytest.raises(DownloadError) as info:
        download(url, dest, md5=MD5, timeout=5)
    msg = str(info.value)
    _one_sentence(msg)
    assert "truncated" in msg and f"of {len(PAYLOAD)} bytes" in msg
    assert _listing(tmp_path) == []


def test_stalled_transfer_times_out_and_leaves_nothing(server, tmp_path):
    url = server.add("/slow.bin", PAYLOAD)
    server.stall.add("/slow.bin")
    with pytest.raises(DownloadError) as info:
        download(url, tmp_path / "slow.bin", md5=MD5, timeout=0.5)
    _one_sentence(str(info.value))
    assert "timed out" in str(info.value)
    assert _listing(tmp_path) == []


def test_http_404_is_readable(server, tmp_path):
    dest = tmp_path / "missing.bin"
    with pytest.raises(DownloadError) as info:
        download(server.url("/nope.bin"), dest, md5=MD5, timeout=5)
    msg = str(info.value)
    _one_sentence(msg)
    assert "HTTP 404" in msg and "/nope.bin" in msg and "nothing was written" in msg
    assert _listing(tmp_path) == []


def test_connection_refused_is_readable(tmp_path):
    with socket.socket() as s:  # find a free port, then close it: nobody listens there
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(DownloadError, match="cannot connect"):
        download(f"http://127.0.0.1:{port}/x", tmp_path / "x", md5=MD5, timeout=5)
    assert _listing(tmp_path) == []


def test_missing_checksum_is_refused_unless_allowed(server, tmp_path):
    url = server.add("/unverified.bin", PAYLOAD)
    dest = tmp_path / "unverified.bin"
    with pytest.raises(DownloadError) as info:
        download(url, dest, timeout=5)
    _one_sentence(str(info.value))
    assert "allow_unverified=True" in str(info.value)
    assert server.hits["/unverified.bin"] == 0  # refused before touching the network
    assert _listing(tmp_path) == []
    download(url, dest, timeout=5, allow_unverified=True)
    assert dest.read_bytes() == PAYLOAD


def test_existing_file_with_right_checksum_is_not_downloaded_again(server, tmp_path):
    url = server.add("/once.bin", PAYLOAD)
    dest = tmp_path / "once.bin"
    download(url, dest, md5=MD5, timeout=5)
    mtime = dest.stat().st_mtime_ns
    download(url, dest, md5=MD5, timeout=5)
    download(url, dest, sha256=SHA256, timeout=5)
    assert server.hits["/once.bin"] == 1
    assert dest.stat().st_mtime_ns == mtime


def test_existing_file_with_wrong_checksum_is_never_overwritten(server, tmp_path):
    url = server.add("/stale.bin", PAYLOAD)
    dest = tmp_path / "stale.bin"
    dest.write_bytes(b"an older, different file")
    with pytest.raises(DownloadError) as info:
        download(url, dest, md5=MD5, timeout=5)
    msg = str(info.value)
    _one_sentence(msg)
    assert "delete it" in msg and str(dest) in msg
    assert dest.read_bytes() == b"an older, different file"
    assert server.hits["/stale.bin"] == 0


def test_non_http_schemes_and_bad_checksums_are_refused(tmp_path):
    (tmp_path / "src").write_bytes(PAYLOAD)
    with pytest.raises(DownloadError, match="only http and https"):
        download((tmp_path / "src").as_uri(), tmp_path / "dst", md5=MD5)
    with pytest.raises(ValueError, match="hexadecimal"):
        download("http://127.0.0.1:9/x", tmp_path / "dst", md5="not-a-checksum")
    assert not (tmp_path / "dst").exists()


def test_verify(tmp_path):
    p = tmp_path / "f"
    p.write_bytes(PAYLOAD)
    verify(p, md5=MD5)
    verify(p, sha256=SHA256)
    with pytest.raises(DownloadError, match="checksum mismatch"):
        verify(p, md5="1" * 32)
    with pytest.raises(ValueError):
        verify(p)
    with pytest.raises(DownloadError, match="does not exist"):
        verify(tmp_path / "nope", md5=MD5)


# --------------------------------------------------------------------------- extraction
def _good_members():
    return [("pkg", None), ("pkg/a.txt", b"alpha"), ("pkg/sub/b.bin", bytes(range(256)) * 100)]


@pytest.mark.parametrize("suffix,compress", [(".tar.gz", True), (".tgz", True), (".tar", False)])
def test_safe_extract_tar(tmp_path, suffix, compress):
    archive = write_tar(tmp_path / f"good{suffix}", _good_members(), compress=compress)
    out = safe_extract(archive, tmp_path / "out")
    assert (out / "pkg" / "a.txt").read_bytes() == b"alpha"
    assert (out / "pkg" / "sub" / "b.bin").read_bytes() == bytes(range(256)) * 100
    assert _listing(tmp_path) == sorted([archive.name, "out"])


def test_safe_extract_zip(tmp_path):
    archive = make_zip(tmp_path / "good.zip", [("pkg/a.txt", b"alpha"), ("pkg/sub/b.txt", b"b")])
    out = safe_extract(archive, tmp_path / "out")
    assert (out / "pkg" / "a.txt").read_bytes() == b"alpha"
    assert (out / "pkg" / "sub" / "b.txt").read_bytes() == b"b"


@pytest.mark.parametrize("suffix,compress", [(".tar.gz", True), (".tar", False), (".zip", None)])
def test_truncated_archive_extracts_nothing(tmp_path, suffix, compress):
    big = [("pkg/a.bin", os.urandom(200_000)), ("pkg/b.bin", os.urandom(200_000))]
    if compress is None:
        full = make_zip(tmp_path / f"full{suffix}", big)
    else:
        full = write_tar(tmp_path / f"full{suffix}", big, compress=compress)
    data = full.read_bytes()
    full.unlink()
    archive = tmp_path / f"cut{suffix}"
    archive.write_bytes(data[: len(data) * 3 // 4])
    with pytest.raises(DownloadError) as info:
        safe_extract(archive, tmp_path / "out")
    msg = str(info.value)
    _one_sentence(msg)
    assert "truncated or corrupt" in msg and "nothing was extracted" in msg
    assert _listing(tmp_path) == [archive.name]  # no out/, no temporary directory


def test_garbage_archive_is_corrupt(tmp_path):
    archive = tmp_path / "junk.tar.gz"
    archive.write_bytes(b"<html>this is a Dropbox preview page, not a tarball</html>")
    with pytest.raises(DownloadError, match="truncated or corrupt"):
        safe_extract(archive, tmp_path / "out")
    assert _listing(tmp_path) == ["junk.tar.gz"]


@pytest.mark.parametrize(
    "kind,expected",
    [
        ("traversal", "'..'"),
        ("absolute", "absolute path"),
        ("symlink", "outside"),
        ("symlink_abs", "absolute path"),
        ("hardlink", "outside"),
        ("device", "device"),
        ("fifo", "FIFO"),
    ],
)
def test_unsafe_tar_members_are_rejected(tmp_path, kind, expected):
    work = tmp_path / "work"
    work.mkdir()
    archive = make_evil_tar(work / "evil.tar.gz", kind)
    with pytest.raises(DownloadError) as info:
        safe_extract(archive, work / "out")
    msg = str(info.value)
    _one_sentence(msg)
    assert "unsafe" in msg and expected in msg and "nothing was extracted" in msg
    assert _listing(work) == ["evil.tar.gz"]
    assert _listing(tmp_path) == ["work"]  # nothing escaped next to the work folder
    assert not Path("/tmp/softmax_ood_evil_absolute.txt").exists()


@pytest.mark.parametrize("name", ["../evil.txt", "/abs/evil.txt", "ok/../../evil.txt"])
def test_unsafe_zip_members_are_rejected(tmp_path, name):
    work = tmp_path / "work"
    work.mkdir()
    archive = make_zip(work / "evil.zip", [("ok/file.txt", b"fine"), (name, b"escaped")])
    with pytest.raises(DownloadError, match="unsafe"):
        safe_extract(archive, work / "out")
    assert _listing(work) == ["evil.zip"]
    assert _listing(tmp_path) == ["work"]


def test_zip_symlink_is_rejected(tmp_path):
    import zipfile

    archive = tmp_path / "link.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        info = zipfile.ZipInfo("ok/link")
        info.external_attr = 0o120777 << 16  # S_IFLNK
        zf.writestr(info, "../../outside")
    with pytest.raises(DownloadError, match="symlink"):
        safe_extract(archive, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_safe_extract_never_overwrites(tmp_path):
    archive = write_tar(tmp_path / "good.tar.gz", _good_members())
    out = tmp_path / "out"
    out.mkdir()
    (out / "keep.txt").write_text("mine")
    with pytest.raises(DownloadError, match="already exists"):
        safe_extract(archive, out)
    assert _listing(out) == ["keep.txt"]
    empty = tmp_path / "empty"
    empty.mkdir()
    safe_extract(archive, empty)  # an empty directory is fine
    assert (empty / "pkg" / "a.txt").exists()


def test_unsupported_archive_type(tmp_path):
    p = tmp_path / "data.rar"
    p.write_bytes(b"x")
    with pytest.raises(DownloadError, match="unsupported archive type"):
        safe_extract(p, tmp_path / "out")


def test_a_server_that_dribbles_bytes_hits_the_overall_limit(tmp_path):
    """A byte every 0.1 s never trips the per-read timeout; the overall limit stops it."""
    import time

    server, url = _dribbling_server(0.1)
    dest = tmp_path / "slow.bin"
    start = time.monotonic()
    try:
        with pytest.raises(DownloadError, match=r"took longer than its overall limit of 1 s"):
            download(url, dest, sha256=SHA256, timeout=5, max_seconds=1)
    finally:
        server.shutdown()
    assert time.monotonic() - start < 5
    assert not dest.exists() and not list(tmp_path.glob("*.part"))


@pytest.mark.parametrize(
    "location", ["ftp://127.0.0.1/data.bin", "file:///etc/passwd", "/ok.bin", "/ok-https"]
)
def test_redirects_are_followed_to_http_only(tmp_path, location):
    """A redirect to ftp:// or file:// is refused with one sentence; one to http is followed."""
    import http.server
    import threading

    class Redirect(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 - http.server's name
            if self.path == "/ok.bin":
                self.send_response(200)
                self.send_header("Content-Length", str(len(PAYLOAD)))
                self.end_headers()
                self.wfile.write(PAYLOAD)
                return
            self.send_response(302)
            target = location if location != "/ok-https" else "/ok.bin"
            self.send_header("Location", target)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Redirect)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    dest = tmp_path / "data.bin"
    url = f"http://127.0.0.1:{server.server_address[1]}/data.bin"
    try:
        if location.startswith("/"):
            assert download(url, dest, sha256=SHA256, timeout=5) == dest
            assert dest.read_bytes() == PAYLOAD
            return
        with pytest.raises(DownloadError) as err:
            download(url, dest, sha256=SHA256, timeout=5)
    finally:
        server.shutdown()
    msg = str(err.value)
    _one_sentence(msg)
    assert f"refusing the redirect of {url} to '{location}'" in msg
    assert "only http and https are followed" in msg
    assert not dest.exists() and not list(tmp_path.glob("*.part"))


def _dribbling_server(pause: float = 0.05):
    """A local server that sends 1000 bytes, one per ``pause`` seconds; (server, url)."""
    import http.server
    import threading
    import time

    class Dribble(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 - http.server's name
            self.send_response(200)
            self.send_header("Content-Length", "1000")
            self.end_headers()
            try:
                for _ in range(1000):
                    self.wfile.write(b"x")
                    self.wfile.flush()
                    time.sleep(pause)
            except (BrokenPipeError, ConnectionResetError):
                pass

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Dribble)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/slow.bin"


def test_a_partial_file_left_by_a_killed_transfer_is_removed_by_the_next(server, tmp_path):
    """SIGKILL leaves ``.<name>.<random>.part``; the next attempt at the same file removes it
    (and only its own file's)."""
    url = server.add("/data/blob.bin", PAYLOAD)
    dest = tmp_path / "raw" / "blob.bin"
    dest.parent.mkdir()
    (dest.parent / ".blob.bin.k1ll3d.part").write_bytes(b"half")
    (dest.parent / ".other.bin.k1ll3d.part").write_bytes(b"not ours")
    download(url, dest, sha256=SHA256, timeout=5)
    assert _listing(dest.parent) == [".other.bin.k1ll3d.part", "blob.bin"]


@pytest.mark.parametrize("signame", ["SIGTERM", "SIGINT"])
def test_a_transfer_stopped_by_a_signal_leaves_no_partial_file(tmp_path, signame):
    import signal
    import subprocess
    import time

    server, url = _dribbling_server()
    dest = tmp_path / "slow.bin"
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]); from softmax_ood.download import download; "
        "download(sys.argv[2], sys.argv[3], sha256='0' * 64, timeout=5)"
    )
    src = str(Path(__file__).resolve().parents[1] / "src")
    child = subprocess.Popen(
        [sys.executable, "-c", code, src, url, str(dest)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        deadline = time.monotonic() + 60
        while not list(tmp_path.glob(".slow.bin.*.part")) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert list(tmp_path.glob(".slow.bin.*.part")), "the transfer never started"
        time.sleep(0.2)
        child.send_signal(getattr(signal, signame))
        assert child.wait(timeout=30) != 0
    finally:
        child.kill()
        server.shutdown()
    assert _listing(tmp_path) == []


# --------------------------------------------------------------------------- size cap
def test_an_announced_length_above_the_cap_is_refused_before_reading(server, tmp_path):
    url = server.add("/big.bin", PAYLOAD)
    dest = tmp_path / "big.bin"
    with pytest.raises(DownloadError) as err:
        download(url, dest, sha256=SHA256, timeout=5, max_bytes=1000, source="source 'big'")
    msg = str(err.value)
    _one_sentence(msg)
    assert msg.startswith(f"refusing the download of source 'big' from {url}: the server ")
    assert f"announces {len(PAYLOAD)} bytes, more than its cap of 1000 bytes" in msg
    assert _listing(tmp_path) == []


def test_a_body_streaming_past_the_cap_is_cut_off_and_leaves_nothing(server, tmp_path):
    """No Content-Length: the body is read until more than the cap arrived, then dropped."""
    url = server.add("/endless.bin", PAYLOAD)
    server.unsized.add("/endless.bin")
    dest = tmp_path / "endless.bin"
    with pytest.raises(DownloadError) as err:
        download(url, dest, sha256=SHA256, timeout=5, max_bytes=len(PAYLOAD) - 1)
    msg = str(err.value)
    _one_sentence(msg)
    assert msg.startswith(f"the download of endless.bin from {url} was cut off: the server sent")
    assert f"more than its cap of {len(PAYLOAD) - 1} bytes" in msg
    assert _listing(tmp_path) == []  # neither the file nor its .part


def test_a_body_within_the_cap_is_kept(server, tmp_path):
    url = server.add("/fits.bin", PAYLOAD)
    server.unsized.add("/fits.bin")
    dest = download(url, tmp_path / "fits.bin", sha256=SHA256, timeout=5, max_bytes=len(PAYLOAD))
    assert dest.read_bytes() == PAYLOAD


def test_the_workflow_start_removes_every_partial_file_of_the_folder(tmp_path):
    """What the Snakefile's onstart calls: every killed transfer's .part, whichever file."""
    from softmax_ood.download import remove_all_partial_files

    for name in (".a.bin.k1ll3d.part", ".b.tar.gz.x9.part", "kept.bin", ".hidden"):
        (tmp_path / name).write_bytes(b"x")
    gone = remove_all_partial_files(tmp_path)
    assert sorted(p.name for p in gone) == [".a.bin.k1ll3d.part", ".b.tar.gz.x9.part"]
    assert _listing(tmp_path) == [".hidden", "kept.bin"]
    assert remove_all_partial_files(tmp_path / "absent") == []
