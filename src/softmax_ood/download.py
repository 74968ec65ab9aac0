"""Checked downloads and safe archive extraction (standard library only).

Two guarantees, both meant for unattended workflow runs:

* :func:`download` either leaves a complete file whose checksum matches at ``dest`` or leaves
  nothing at all: the body is streamed to a temporary file beside ``dest`` while md5 and
  sha256 are computed, the length is compared with ``Content-Length``, the checksum is verified,
  and only then is the file moved into place with :func:`os.replace`.
* :func:`safe_extract` either creates the complete ``dest_dir`` or nothing: members are checked
  (no absolute paths, no ``..``, no links leaving the tree, no device files), extracted into a
  temporary directory beside ``dest_dir`` and renamed into place.

Every failure raises :class:`DownloadError` with one readable sentence that says what happened
and what was (not) left on disk.
"""

from __future__ import annotations

import contextlib
import glob
import gzip
import hashlib
import http.client
import logging
import os
import shutil
import signal
import stat
import tarfile
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
import zipfile
import zlib
from pathlib import Path, PurePosixPath, PureWindowsPath

from .errors import DownloadError  # noqa: F401 - re-exported

__all__ = ["DownloadError", "download", "file_digests", "safe_extract", "verify"]

log = logging.getLogger(__name__)

CHUNK = 1 << 20
USER_AGENT = "softmax-ood/0.1 (+urllib; research data download)"
_ALGOS = ("md5", "sha256")
_HEX_LEN = {"md5": 32, "sha256": 64}


# --------------------------------------------------------------------------- checksums
def _expected(md5: str | None, sha256: str | None) -> dict[str, str]:
    """The given checksums as ``{algo: lower-case hex}``, validated for form."""
    out = {}
    for algo, value in (("md5", md5), ("sha256", sha256)):
        if value is None:
            continue
        value = str(value).strip().lower()
        if len(value) != _HEX_LEN[algo] or any(c not in "0123456789abcdef" for c in value):
            raise ValueError(
                f"{algo} checksum {value!r} is not {_HEX_LEN[algo]} hexadecimal characters"
            )
        out[algo] = value
    return out


def file_digests(path: Path | str, algos: tuple[str, ...] = _ALGOS) -> dict[str, str]:
    """Hex digests of the file at ``path`` for each algorithm in ``algos`` (one pass)."""
    hashers = {a: hashlib.new(a) for a in algos}
    with open(path, "rb") as fh:
        while chunk := fh.read(CHUNK):
            for h in hashers.values():
                h.update(chunk)
    return {a: h.hexdigest() for a, h in hashers.items()}


def _mismatch(actual: dict[str, str], expected: dict[str, str]) -> str | None:
    """``None`` if every expected digest matches, else 'expected md5 X, got Y' for the first."""
    for algo, want in expected.items():
        if actual[algo] != want:
            return f"expected {algo} {want}, got {actual[algo]}"
    return None


def verify(path: Path | str, md5: str | None = None, sha256: str | None = None) -> None:
    """Check the file at ``path`` against the given md5 and/or sha256.

    :raises ValueError: if neither checksum is given (nothing to verify against).
    :raises DownloadError: if the file is missing or a checksum differs.
    """
    path = Path(path)
    expected = _expected(md5, sha256)
    if not expected:
        raise ValueError(f"verify({path}) needs an md5 or a sha256 to compare against")
    if not path.is_file():
        raise DownloadError(f"cannot verify {path}: the file does not exist")
    problem = _mismatch(file_digests(path, tuple(expected)), expected)
    if problem:
        raise DownloadError(f"checksum mismatch for {path}: {problem}")


# --------------------------------------------------------------------------- download
def _nothing_written(dest: Path) -> str:
    return f"nothing was written to {dest}"


def download(
    url: str,
    dest: Path | str,
    *,
    md5: str | None = None,
    sha256: str | None = None,
    timeout: float = 60,
    max_seconds: float | None = 3600,
    max_bytes: int | None = None,
    source: str | None = None,
    allow_unverified: bool = False,
) -> Path:
    """Download ``url`` to ``dest`` atomically and verify its checksum.

    * If ``dest`` already exists and matches the checksum, nothing is downloaded.
    * If ``dest`` exists but does not match, :class:`DownloadError` asks the user to delete
      it; an existing file is never overwritten.
    * Without ``md5``/``sha256`` the download is refused unless ``allow_unverified=True``.

    :param timeout: seconds for connecting and for each read from the socket.
    :param max_seconds: overall limit for the whole transfer (a server that sends a byte a
        second never trips the per-read timeout); ``None`` = no limit.
    :param max_bytes: the most bytes accepted: a larger ``Content-Length`` is refused before the
        body is read, and a body that grows past it is cut off; ``None`` = no cap.
    :param source: the name the messages give the download (default: ``dest``'s file name).
    :returns: ``dest``.
    :raises DownloadError: on HTTP/network errors, truncated transfers, checksum mismatches,
        or a refused unverified download; no partial file is ever left behind.
    """
    dest = Path(dest)
    expected = _expected(md5, sha256)
    _refuse(url, dest, expected, allow_unverified)
    if _present(dest, expected):
        return dest
    dest.parent.mkdir(parents=True, exist_ok=True)
    remove_partial_files(dest)  # a transfer killed outright (SIGKILL) could not remove its own
    _transfer(url, dest, expected, timeout, max_seconds, max_bytes, source or dest.name)
    if not expected:
        log.warning("downloaded %s to %s WITHOUT checksum verification", url, dest)
    else:
        log.info("downloaded %s to %s (%s verified)", url, dest, ", ".join(expected))
    return dest


def _refuse(url: str, dest: Path, expected: dict[str, str], allow_unverified: bool) -> None:
    """Raise :class:`DownloadError` for a download :func:`download` does not start: one without
    a checksum (unless ``allow_unverified``) or of a URL that is not http(s)."""
    if not expected and not allow_unverified:
        raise DownloadError(
            f"refusing to download {url} to {dest} because no md5 or sha256 is recorded for "
            "it; add a checksum to the source list or pass allow_unverified=True to accept "
            "the file unchecked"
        )
    scheme = urllib.parse.urlsplit(url).scheme.lower()
    if scheme not in ("http", "https"):
        raise DownloadError(
            f"refusing to download {url!r}: only http and https URLs are supported, "
            f"not {scheme or 'a URL without a scheme'}"
        )


def _present(dest: Path, expected: dict[str, str]) -> bool:
    """Whether ``dest`` is already there as wanted (with the expected checksum, or any file
    when there is none to verify); False when it does not exist.

    :raises DownloadError: ``dest`` exists but is not a regular file or has another checksum
        (it is never overwritten)."""
    if not dest.exists():
        return False
    if not dest.is_file():
        raise DownloadError(f"{dest} exists and is not a regular file; move it away first")
    if not expected:
        log.warning("%s already exists; not re-downloaded (no checksum to verify it)", dest)
        return True
    problem = _mismatch(file_digests(dest, tuple(expected)), expected)
    if problem is None:
        log.info("%s already exists with the expected checksum; skipping download", dest)
        return True
    raise DownloadError(
        f"{dest} already exists but does not match its recorded checksum ({problem}); "
        f"it is never overwritten, so delete it (rm {dest}) and run again"
    )


def _transfer(
    url: str,
    dest: Path,
    expected: dict[str, str],
    timeout: float,
    max_seconds: float | None,
    max_bytes: int | None,
    source: str,
) -> None:
    """Stream ``url`` into a temporary file beside ``dest``, check its checksums and move it
    into place; any failure deletes the temporary file (a :class:`DownloadError` naming the
    cause; ``KeyboardInterrupt``/``SystemExit`` pass through)."""
    fd, tmp_name = tempfile.mkstemp(dir=dest.parent, prefix=f".{dest.name}.", suffix=".part")
    tmp = Path(tmp_name)
    try:
        with _terminate_raises():
            with os.fdopen(fd, "wb") as out:
                digests = _stream(url, out, dest, timeout, max_seconds, max_bytes, source)
                out.flush()
                os.fsync(out.fileno())
        problem = _mismatch(digests, expected)
        if problem:
            raise DownloadError(
                f"checksum mismatch for {dest.name} downloaded from {url}: {problem}; "
                f"the file was deleted, {_nothing_written(dest)}"
            )
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp creates 0600; give it normal permissions
        os.replace(tmp, dest)
    except BaseException as exc:
        tmp.unlink(missing_ok=True)
        if isinstance(exc, DownloadError) or not isinstance(exc, Exception):
            raise  # our own message, or KeyboardInterrupt/SystemExit
        raise DownloadError(
            f"download of {url} failed ({type(exc).__name__}: {exc}); {_nothing_written(dest)}"
        ) from exc


def remove_partial_files(dest: Path | str) -> list[Path]:
    """Remove the partial files (``.<name>.<random>.part`` beside ``dest``) that earlier
    transfers to ``dest`` left when they were killed; returns them."""
    dest = Path(dest)
    gone = _unlink_all(dest.parent.glob(f".{glob.escape(dest.name)}.*.part"))
    if gone:
        log.info("removed %d partial file(s) of an interrupted download of %s", len(gone), dest)
    return gone


def remove_all_partial_files(folder: Path | str) -> list[Path]:
    """Remove every partial file (``.<name>.<random>.part``) that killed transfers left in
    ``folder``, whichever file they were fetching; returns them. For a workflow's start, when no
    transfer of its own runs yet (a transfer in flight would lose its file)."""
    return _unlink_all(Path(folder).glob(".*.part"))


def _unlink_all(paths) -> list[Path]:
    gone = []
    for part in paths:
        try:
            part.unlink()
            gone.append(part)
        except OSError:
            pass
    return gone


@contextlib.contextmanager
def _terminate_raises():
    """SIGTERM (Snakemake stopping its jobs, a cluster's time limit) ends the transfer through
    the same clean-up as an error: SystemExit instead of an immediate exit."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum, frame):
        raise SystemExit(128 + signum)

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


class _HttpOnlyRedirects(urllib.request.HTTPRedirectHandler):
    """Follow redirects to http(s) only (urllib would also follow one to ``ftp://``)."""

    def __init__(self, dest: Path):
        self.dest = dest

    def http_error_302(self, req, fp, code, msg, headers):
        newurl = headers.get("location") or headers.get("uri")
        if newurl:
            target = urllib.parse.urljoin(req.full_url, newurl)
            scheme = urllib.parse.urlsplit(target).scheme.lower()
            if scheme not in ("http", "https"):
                raise DownloadError(
                    f"refusing the redirect of {req.full_url} to {target!r}: only http and "
                    f"https are followed; {_nothing_written(self.dest)}"
                )
        return super().http_error_302(req, fp, code, msg, headers)

    http_error_301 = http_error_303 = http_error_307 = http_error_308 = http_error_302


def _stream(
    url: str,
    out,
    dest: Path,
    timeout: float,
    max_seconds: float | None = None,
    max_bytes: int | None = None,
    what: str = "",
) -> dict[str, str]:
    """Copy the body of ``url`` into the open file ``out``; return md5 and sha256 digests.

    Reads whatever has arrived (``read1``), so the overall ``max_seconds`` is checked at least
    once per ``timeout`` however slowly the server sends; more than ``max_bytes`` (announced
    or sent) stops the transfer."""
    hashers = {a: hashlib.new(a) for a in _ALGOS}
    deadline = None if max_seconds is None else time.monotonic() + float(max_seconds)
    request = urllib.request.Request(url, headers={"User-Agent": USER_AGENT})
    nothing = _nothing_written(dest)
    try:
        opener = urllib.request.build_opener(_HttpOnlyRedirects(dest))
        with opener.open(request, timeout=timeout) as resp:  # scheme checked, redirects too
            length = resp.headers.get("Content-Length")
            expected_len = int(length) if length and length.strip().isdigit() else None
            if max_bytes is not None and expected_len is not None and expected_len > max_bytes:
                raise DownloadError(
                    f"refusing the download of {what} from {url}: the server announces "
                    f"{expected_len} bytes, more than its cap of {max_bytes} bytes "
                    f"(data.download.size_margin x its recorded size, or data.download.max_bytes)"
                    f"; {nothing}"
                )
            got = 0
            while True:
                if deadline is not None and time.monotonic() > deadline:
                    raise DownloadError(
                        f"download of {url} took longer than its overall limit of "
                        f"{max_seconds:g} s ({got} bytes so far); {nothing}"
                    )
                try:
                    chunk = resp.read1(CHUNK)
                except http.client.IncompleteRead as exc:
                    got += len(exc.partial)
                    chunk = b""
                if not chunk:
                    break
                got += len(chunk)
                if max_bytes is not None and got > max_bytes:
                    raise DownloadError(
                        f"the download of {what} from {url} was cut off: the server sent more "
                        f"than its cap of {max_bytes} bytes (data.download.size_margin x its "
                        f"recorded size, or data.download.max_bytes); {nothing}"
                    )
                out.write(chunk)
                for h in hashers.values():
                    h.update(chunk)
            if expected_len is not None and got != expected_len:
                raise DownloadError(
                    f"download of {url} was truncated: got {got} of {expected_len} bytes; {nothing}"
                )
    except urllib.error.HTTPError as exc:
        raise DownloadError(
            f"download of {url} failed with HTTP {exc.code} {exc.reason}; {nothing}"
        ) from exc
    except urllib.error.URLError as exc:
        reason = exc.reason
        if isinstance(reason, TimeoutError):
            raise DownloadError(
                f"download of {url} timed out after {timeout} s while connecting; {nothing}"
            ) from exc
        raise DownloadError(
            f"download of {url} failed: cannot connect ({reason}); {nothing}"
        ) from exc
    except TimeoutError as exc:
        raise DownloadError(
            f"download of {url} timed out (no data for {timeout} s); {nothing}"
        ) from exc
    except (http.client.HTTPException, ConnectionError) as exc:
        raise DownloadError(
            f"download of {url} was interrupted ({type(exc).__name__}: {exc}); {nothing}"
        ) from exc
    return {a: h.hexdigest() for a, h in hashers.items()}


# --------------------------------------------------------------------------- extraction
_TAR_SUFFIXES = (".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tbz2", ".tar.xz", ".txz")


def _archive_kind(archive: Path) -> str:
    name = archive.name.lower()
    if name.endswith(".zip"):
        return "zip"
    if name.endswith(_TAR_SUFFIXES):
        return "tar"
    raise DownloadError(
        f"cannot extract {archive}: unsupported archive type (expected one of "
        f"{', '.join(_TAR_SUFFIXES + ('.zip',))})"
    )


def _bad_name(name: str) -> str | None:
    """Why an archive member name is unsafe, or ``None``."""
    if not name:
        return "an empty name"
    if "\x00" in name:
        return "a NUL byte in its name"
    if name.startswith(("/", "\\")) or PureWindowsPath(name).drive or PureWindowsPath(name).root:
        return "an absolute path"
    parts = PurePosixPath(name.replace("\\", "/")).parts
    if ".." in parts:
        return "a '..' path component"
    return None


def _inside(root: Path, target: Path) -> bool:
    root = Path(os.path.abspath(root))
    target = Path(os.path.abspath(target))
    return target == root or root in target.parents


def _check_tar_member(member: tarfile.TarInfo, root: Path) -> None:
    why = _bad_name(member.name)
    if why:
        raise _Unsafe(f"member {member.name!r} has {why}")
    if member.ischr() or member.isblk() or member.isfifo() or member.isdev():
        raise _Unsafe(f"member {member.name!r} is a device or FIFO")
    if not (member.isfile() or member.isdir() or member.issym() or member.islnk()):
        raise _Unsafe(f"member {member.name!r} has an unsupported type {member.type!r}")
    if member.issym():
        link = member.linkname
        if link.startswith("/") or PureWindowsPath(link).drive:
            raise _Unsafe(f"symlink {member.name!r} points to the absolute path {link!r}")
        target = root / PurePosixPath(member.name).parent / link
        if not _inside(root, target):
            raise _Unsafe(f"symlink {member.name!r} -> {link!r} points outside the archive")
    if member.islnk():
        link = member.linkname
        why = _bad_name(link)
        if why or not _inside(root, root / link):
            raise _Unsafe(f"hard link {member.name!r} -> {link!r} points outside the archive")


class _Unsafe(Exception):
    """An archive member would write outside the destination or create a special file."""


def _extract_tar(archive: Path, tmp: Path) -> None:
    root = Path(os.path.abspath(tmp))

    def checked_filter(member: tarfile.TarInfo, path: str) -> tarfile.TarInfo | None:
        _check_tar_member(member, root)
        if hasattr(tarfile, "data_filter"):  # Python >= 3.11.4 / 3.12
            return tarfile.data_filter(member, path)
        # Fallback for old interpreters: our checks above, plus no special permission bits.
        return member.replace(mode=member.mode & 0o755, uid=None, gid=None, uname=None, gname=None)

    with tarfile.open(archive, "r:*") as tar:
        tar.extractall(tmp, filter=checked_filter)


def _extract_zip(archive: Path, tmp: Path) -> None:
    root = Path(os.path.abspath(tmp))
    with zipfile.ZipFile(archive) as zf:
        infos = zf.infolist()
        for info in infos:  # check everything before writing anything
            why = _bad_name(info.filename)
            if why:
                raise _Unsafe(f"member {info.filename!r} has {why}")
            mode = info.external_attr >> 16
            if stat.S_ISLNK(mode):
                raise _Unsafe(f"member {info.filename!r} is a symlink")
            if mode and not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
                raise _Unsafe(f"member {info.filename!r} is a device, FIFO or socket")
            if not _inside(root, root / info.filename):
                raise _Unsafe(f"member {info.filename!r} would be written outside the archive")
        for info in infos:
            zf.extract(info, tmp)  # CRC errors raise BadZipFile while reading


_CORRUPT = (
    tarfile.ReadError,
    tarfile.CompressionError,
    EOFError,
    zlib.error,
    gzip.BadGzipFile,
    zipfile.BadZipFile,
)
_FILTER_ERROR = getattr(tarfile, "FilterError", _Unsafe)  # tarfile's own "data" filter refusals


def safe_extract(archive: Path | str, dest_dir: Path | str) -> Path:
    """Extract a ``.tar``, ``.tar.gz``/``.tgz`` (also bz2/xz) or ``.zip`` archive safely.

    Members with absolute paths, ``..`` components, links that leave the tree, device files or
    FIFOs are rejected (tar extraction additionally uses the standard library's ``"data"``
    filter). Everything is extracted into a temporary directory beside ``dest_dir`` which is
    renamed to ``dest_dir`` only after the whole archive was read, so a truncated or corrupt
    archive leaves nothing behind.

    :returns: ``dest_dir``.
    :raises DownloadError: if the archive is missing, corrupt/truncated or unsafe, or if
        ``dest_dir`` already exists with content.
    """
    archive = Path(archive)
    dest_dir = Path(dest_dir)
    kind = _archive_kind(archive)
    if not archive.is_file():
        raise DownloadError(f"cannot extract {archive}: the file does not exist")
    if dest_dir.exists():
        if not dest_dir.is_dir() or any(dest_dir.iterdir()):
            raise DownloadError(
                f"cannot extract {archive.name}: {dest_dir} already exists; it is never "
                "overwritten, so delete it to extract again"
            )
        dest_dir.rmdir()  # an empty directory: replace it
    dest_dir.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(
        tempfile.mkdtemp(dir=dest_dir.parent, prefix=f".{dest_dir.name}.", suffix=".extracting")
    )
    try:
        try:
            (_extract_zip if kind == "zip" else _extract_tar)(archive, tmp)
        except (_Unsafe, _FILTER_ERROR) as exc:
            raise DownloadError(
                f"archive {archive} is unsafe: {exc}; nothing was extracted"
            ) from exc
        except _CORRUPT as exc:
            raise DownloadError(
                f"archive {archive} is truncated or corrupt ({type(exc).__name__}: {exc}); "
                "nothing was extracted"
            ) from exc
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o777 & ~umask)  # mkdtemp creates 0700
        os.replace(tmp, dest_dir)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    log.info("extracted %s to %s", archive, dest_dir)
    return dest_dir
