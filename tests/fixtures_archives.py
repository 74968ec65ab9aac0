"""Build small archives in the REAL on-disk formats of the paper-scale sources, for tests.

* :func:`make_cifar10_tar_gz` - ``cifar-10-python.tar.gz`` layout: ``cifar-10-batches-py/``
  with pickled dicts ``{b"data": uint8 (N, 3072), b"labels": [...], ...}`` for
  ``data_batch_1..5`` plus ``batches.meta`` (pickle protocol 2), and ``test_batch`` written
  byte-for-byte the way Python 2 pickled the originals (:func:`py2_batch_pickle`).
* :func:`make_cifar100_tar_gz` - ``cifar-100-python/{train,test,meta}`` with ``fine_labels``
  and ``coarse_labels``.
* :func:`make_svhn_mat` - ``test_32x32.mat`` layout: ``X`` (32, 32, 3, N) uint8, ``y`` (N, 1)
  with label 10 for the digit 0.
* :func:`make_image_folder_tar_gz` - a tarball of PNG/JPEG files of assorted sizes and modes,
  plus a text file and a macOS ``._`` resource fork that readers must ignore.
* :func:`make_evil_tar` - tarballs with path traversal / absolute paths / escaping links /
  device files.

Archives are byte-deterministic (fixed mtimes, owners and gzip header) so checksums are stable.
Also a loopback HTTP server (:class:`FileServer`) that serves bytes, counts hits and can send a
truncated body.
"""

from __future__ import annotations

import gzip
import io
import pickle
import struct
import tarfile
import threading
import zipfile
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import numpy as np

# --------------------------------------------------------------------------- tar helpers


def _tarinfo(name: str, size: int = 0, type_=tarfile.REGTYPE, mode: int = 0o644) -> tarfile.TarInfo:
    ti = tarfile.TarInfo(name)
    ti.size = size
    ti.type = type_
    ti.mode = mode
    ti.mtime = 0
    ti.uid = ti.gid = 0
    ti.uname = ti.gname = ""
    return ti


def write_tar(path: Path, members: list[tuple], *, compress: bool = True) -> Path:
    """Write a tar(.gz) deterministically. ``members``: ``(name, bytes)`` for files,
    ``(name, None)`` for directories, or ready ``tarfile.TarInfo`` objects (links etc.)."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.GNU_FORMAT) as tar:
        for m in members:
            if isinstance(m, tarfile.TarInfo):
                tar.addfile(m)
                continue
            name, data = m
            if data is None:
                tar.addfile(_tarinfo(name, type_=tarfile.DIRTYPE, mode=0o755))
            else:
                tar.addfile(_tarinfo(name, len(data)), io.BytesIO(data))
    raw = buf.getvalue()
    path = Path(path)
    if compress:
        out = io.BytesIO()
        with gzip.GzipFile(filename="", mode="wb", fileobj=out, mtime=0) as gz:
            gz.write(raw)
        raw = out.getvalue()
    path.write_bytes(raw)
    return path


# --------------------------------------------------------------------------- CIFAR
# The real CIFAR batches were pickled by Python 2 + numpy: str keys and the array's raw bytes
# are Python 2 ``str`` objects (SHORT_BINSTRING/BINSTRING opcodes), which Python 3 only reads
# with ``encoding="latin1"``. ``py2_batch_pickle`` writes exactly that opcode stream.
def _py2_str(b: bytes) -> bytes:
    if len(b) < 256:
        return b"U" + bytes([len(b)]) + b  # SHORT_BINSTRING
    return b"T" + struct.pack("<i", len(b)) + b  # BINSTRING


def _binint(i: int) -> bytes:
    return b"J" + struct.pack("<i", int(i))


def _py2_uint8_array(a: np.ndarray) -> bytes:
    a = np.ascontiguousarray(a, dtype=np.uint8)
    out = b"cnumpy.core.multiarray\n_reconstruct\n" + b"cnumpy\nndarray\n"
    out += b"K\x00\x85" + _py2_str(b"b") + b"\x87R"  # _reconstruct(ndarray, (0,), 'b')
    out += b"(" + _binint(1) + b"(" + b"".join(_binint(d) for d in a.shape) + b"t"
    out += b"cnumpy\ndtype\n" + _py2_str(b"u1") + b"K\x00K\x01\x87R"  # dtype('u1', 0, 1)
    out += b"(K\x03" + _py2_str(b"|") + b"NNN" + _binint(-1) + _binint(-1) + b"K\x00tb"
    out += b"\x89" + _py2_str(a.tobytes()) + b"tb"  # (1, shape, dtype, False, raw bytes)
    return out


def py2_batch_pickle(data: np.ndarray, label_key: bytes, labels) -> bytes:
    """A protocol-2 pickle of ``{'data': array, label_key: [ints]}`` as Python 2 wrote it."""
    body = _py2_str(b"data") + _py2_uint8_array(data)
    body += _py2_str(label_key) + b"](" + b"".join(_binint(v) for v in labels) + b"e"
    return b"\x80\x02}(" + body + b"u."


def _balanced_labels(n: int, num_classes: int, rng: np.random.Generator) -> np.ndarray:
    y = np.arange(n) % num_classes
    rng.shuffle(y)
    return y


def make_cifar10_tar_gz(
    path: Path, *, per_batch: int = 20, n_test: int = 20, seed: int = 0
) -> dict:
    """A ``cifar-10-python.tar.gz`` look-alike. Returns the expected arrays
    ``train_x`` (N, 32, 32, 3), ``train_y``, ``test_x``, ``test_y`` and the archive ``path``."""
    rng = np.random.default_rng(seed)
    folder = "cifar-10-batches-py"
    members = [(folder, None)]
    xs, ys = [], []
    names = [f"data_batch_{i}" for i in range(1, 6)] + ["test_batch"]
    for name in names:
        n = n_test if name == "test_batch" else per_batch
        data = rng.integers(0, 256, size=(n, 3072), dtype=np.uint8)
        labels = _balanced_labels(n, 10, rng)
        batch = {
            b"batch_label": f"{name} of 5".encode(),
            b"labels": [int(v) for v in labels],
            b"data": data,
            b"filenames": [f"img_{name}_{i}.png".encode() for i in range(n)],
        }
        if name == "test_batch":  # one batch exactly as Python 2 pickled the originals
            blob = py2_batch_pickle(data, b"labels", labels)
        else:  # the others as Python 3 would re-pickle them (bytes keys)
            blob = pickle.dumps(batch, protocol=2)
        members.append((f"{folder}/{name}", blob))
        xs.append(data.reshape(-1, 3, 32, 32).transpose(0, 2, 3, 1))
        ys.append(labels.astype(np.int64))
    meta = {
        b"label_names": [
            b"airplane",
            b"automobile",
            b"bird",
            b"cat",
            b"deer",
            b"dog",
            b"frog",
            b"horse",
            b"ship",
            b"truck",
        ],
        b"num_cases_per_batch": per_batch,
        b"num_vis": 3072,
    }
    members.append((f"{folder}/batches.meta", pickle.dumps(meta, protocol=2)))
    members.append((f"{folder}/readme.html", b"<html>fake</html>"))
    write_tar(path, members)
    return {
        "path": Path(path),
        "train_x": np.concatenate(xs[:5]),
        "train_y": np.concatenate(ys[:5]),
        "test_x": xs[5],
        "test_y": ys[5],
    }


def make_cifar100_tar_gz(
    path: Path, *, n_train: int = 200, n_test: int = 100, seed: int = 1
) -> dict:
    """A ``cifar-100-python.tar.gz`` look-alike (``train``, ``test``, ``meta``)."""
    rng = np.random.default_rng(seed)
    folder = "cifar-100-python"
    members = [(folder, None)]
    out = {"path": Path(path)}
    for split, n in (("train", n_train), ("test", n_test)):
        data = rng.integers(0, 256, size=(n, 3072), dtype=np.uint8)
        fine = _balanced_labels(n, 100, rng)
        batch = {
            b"filenames": [f"{split}_{i}.png".encode() for i in range(n)],
            b"batch_label": f"{split} batch".encode(),
            b"fine_labels": [int(v) for v in fine],
            b"coarse_labels": [int(v) // 5 for v in fine],
            b"data": data,
        }
        blob = (
            py2_batch_pickle(data, b"fine_labels", fine)
            if split == "test"
            else pickle.dumps(batch, protocol=2)
        )
        members.append((f"{folder}/{split}", blob))
        out[f"{split}_x"] = data.reshape(-1, 3, 32, 32).transpose(0, 2, 3, 1)
        out[f"{split}_y"] = fine.astype(np.int64)
    meta = {
        b"fine_label_names": [f"class{i}".encode() for i in range(100)],
        b"coarse_label_names": [f"super{i}".encode() for i in range(20)],
    }
    members.append((f"{folder}/meta", pickle.dumps(meta, protocol=2)))
    write_tar(path, members)
    return out


# --------------------------------------------------------------------------- SVHN
def make_svhn_mat(path: Path, *, n: int = 30, seed: int = 2) -> dict:
    """A ``test_32x32.mat`` look-alike: X (32, 32, 3, N) uint8, y (N, 1) with 10 for digit 0."""
    import scipy.io

    rng = np.random.default_rng(seed)
    x = rng.integers(0, 256, size=(n, 32, 32, 3), dtype=np.uint8)
    digits = np.arange(n) % 10
    y_file = np.where(digits == 0, 10, digits).astype(np.uint8).reshape(n, 1)
    scipy.io.savemat(path, {"X": np.ascontiguousarray(x.transpose(1, 2, 3, 0)), "y": y_file})
    return {"path": Path(path), "x": x, "y": digits.astype(np.int64)}


# --------------------------------------------------------------------------- image folders
def _encode(img, fmt: str) -> bytes:
    buf = io.BytesIO()
    img.save(buf, format=fmt)
    return buf.getvalue()


def make_image_folder_tar_gz(
    path: Path, *, root: str = "dtd/images", n: int = 12, seed: int = 3
) -> dict:
    """A tarball of images in class sub-folders (PNG and JPEG; RGB, greyscale, RGBA, palette;
    32x32 and larger non-square sizes) plus files that are not images and must be skipped."""
    from PIL import Image

    rng = np.random.default_rng(seed)
    sizes = [(32, 32), (48, 40), (40, 64), (100, 75)]
    modes = ["RGB", "L", "RGBA", "P"]
    members = []
    names = []
    for i in range(n):
        w, h = sizes[i % len(sizes)]
        mode = modes[i % len(modes)]
        arr = rng.integers(0, 256, size=(h, w, 3), dtype=np.uint8)
        img = Image.fromarray(arr, "RGB")
        if mode == "L":
            img = img.convert("L")
        elif mode == "RGBA":
            img = img.convert("RGBA")
        elif mode == "P":
            img = img.convert("P")
        fmt, ext = ("PNG", "png") if i % 3 else ("JPEG", "jpg")
        if fmt == "JPEG" and img.mode in ("RGBA", "P"):
            img = img.convert("RGB")
        name = f"{root}/class{i % 3}/img_{i:03d}.{ext}"
        members.append((name, _encode(img, fmt)))
        names.append(name)
    # files a reader must skip: metadata text, a macOS resource fork, a hidden folder
    members.append((f"{root}/class0/._img_000.jpg", b"\x00\x05\x16\x07 not an image"))
    members.append((f"{root}/.hidden/img_999.png", b"not an image either"))
    members.append((f"{root}/readme.txt", b"class0\nclass1\n"))
    write_tar(path, members)
    return {"path": Path(path), "n": n, "names": sorted(names), "root": root}


# --------------------------------------------------------------------------- malicious
def make_evil_tar(path: Path, kind: str) -> Path:
    """A tarball that must be rejected: ``kind`` in traversal | absolute | symlink |
    symlink_abs | hardlink | device | fifo."""
    good = ("ok/file.txt", b"fine")
    if kind == "traversal":
        members = [good, ("ok/../../evil.txt", b"escaped")]
    elif kind == "absolute":
        members = [good, ("/tmp/softmax_ood_evil_absolute.txt", b"escaped")]
    elif kind == "symlink":
        link = _tarinfo("ok/link", type_=tarfile.SYMTYPE)
        link.linkname = "../../outside"
        members = [good, link]
    elif kind == "symlink_abs":
        link = _tarinfo("ok/link", type_=tarfile.SYMTYPE)
        link.linkname = "/etc/passwd"
        members = [good, link]
    elif kind == "hardlink":
        link = _tarinfo("ok/hard", type_=tarfile.LNKTYPE)
        link.linkname = "../outside.txt"
        members = [good, link]
    elif kind == "device":
        dev = _tarinfo("ok/null", type_=tarfile.CHRTYPE)
        dev.devmajor, dev.devminor = 1, 3
        members = [good, dev]
    elif kind == "fifo":
        members = [good, _tarinfo("ok/pipe", type_=tarfile.FIFOTYPE)]
    else:
        raise ValueError(kind)
    return write_tar(path, members)


def make_zip(path: Path, members: list[tuple[str, bytes]]) -> Path:
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in members:
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            info.external_attr = 0o100644 << 16
            zf.writestr(info, data)
    return Path(path)


# --------------------------------------------------------------------------- HTTP server
class FileServer:
    """Serve ``files`` (url path -> bytes) on 127.0.0.1; count hits per path.

    ``truncate`` holds paths whose response claims the full Content-Length but sends only the
    first half of the body before closing the connection; ``stall`` holds paths that send the
    headers and 10 bytes and then nothing until :meth:`close`; ``unsized`` holds paths sent
    without a Content-Length (the body ends when the connection closes).
    """

    def __init__(self) -> None:
        self.files: dict[str, bytes] = {}
        self.truncate: set[str] = set()
        self.stall: set[str] = set()
        self.unsized: set[str] = set()
        self.release = threading.Event()
        self.hits: Counter[str] = Counter()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.0"

            def do_GET(self) -> None:  # noqa: N802 (http.server API)
                path = self.path.split("?", 1)[0]
                server.hits[path] += 1
                body = server.files.get(path)
                if body is None:
                    self.send_error(404, "Not Found")
                    return
                self.send_response(200)
                self.send_header("Content-Type", "application/octet-stream")
                if path not in server.unsized:
                    self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if path in server.stall:  # headers + a little data, then silence
                    self.wfile.write(body[:10])
                    self.wfile.flush()
                    server.release.wait(timeout=5)
                    self.close_connection = True
                    return
                if path in server.truncate:
                    self.wfile.write(body[: len(body) // 2])
                    self.wfile.flush()
                    self.close_connection = True
                    return
                self.wfile.write(body)

            def log_message(self, *args) -> None:  # keep pytest output clean
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self.thread.start()

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def add(self, path: str, data: bytes) -> str:
        self.files[path] = data
        return self.url(path)

    def close(self) -> None:
        self.release.set()
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=5)


# --------------------------------------------------------------------------- CIFAR-10-C, MNIST
def make_cifar10c_tar(
    path: Path,
    corruptions: tuple[str, ...] = ("gaussian_noise", "contrast"),
    *,
    per_severity: int = 4,
    seed: int = 3,
) -> dict:
    """An uncompressed tar in CIFAR-10-C's layout: ``CIFAR-10-C/<corruption>.npy`` (5 severities
    stacked, ``per_severity`` rows each, uint8 NHWC) and ``CIFAR-10-C/labels.npy``. Severity ``s``
    images are filled with value ``10 * s + corruption index`` in pixel (0, 0, 0) so a reader's
    row range can be checked."""
    rng = np.random.default_rng(seed)
    n = 5 * per_severity
    labels = np.tile(rng.integers(0, 10, per_severity).astype(np.uint8), 5)
    members = [("CIFAR-10-C", None)]
    arrays = {}
    for i, name in enumerate(corruptions):
        x = rng.integers(0, 256, (n, 32, 32, 3), dtype=np.uint8)
        for s in range(1, 6):
            x[per_severity * (s - 1) : per_severity * s, 0, 0, 0] = 10 * s + i
        arrays[name] = x
        buf = io.BytesIO()
        np.save(buf, x, allow_pickle=False)
        members.append((f"CIFAR-10-C/{name}.npy", buf.getvalue()))
    buf = io.BytesIO()
    np.save(buf, labels, allow_pickle=False)
    members.append(("CIFAR-10-C/labels.npy", buf.getvalue()))
    write_tar(path, members, compress=False)
    return {"path": path, "arrays": arrays, "labels": labels, "per_severity": per_severity}


def make_mnist_idx_gz(path: Path, array: np.ndarray) -> Path:
    """An IDX file (uint8, gzip with mtime 0) of ``array`` (3-D images or 1-D labels)."""
    a = np.ascontiguousarray(array, dtype=np.uint8)
    header = bytes([0, 0, 0x08, a.ndim]) + b"".join(int(d).to_bytes(4, "big") for d in a.shape)
    out = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=out, mtime=0) as gz:
        gz.write(header + a.tobytes())
    Path(path).write_bytes(out.getvalue())
    return Path(path)


#: the four MNIST files: part -> file name (torchvision's names, config/paper_sources.yaml)
MNIST_FILES = {
    "train_images": "train-images-idx3-ubyte.gz",
    "train_labels": "train-labels-idx1-ubyte.gz",
    "test_images": "t10k-images-idx3-ubyte.gz",
    "test_labels": "t10k-labels-idx1-ubyte.gz",
}


def make_mnist_set(directory: Path, *, n_train: int = 100, n_test: int = 40, seed: int = 6) -> dict:
    """The four MNIST IDX gz files of a tiny MNIST (balanced labels, digit-like blobs: a bright
    stroke whose position depends on the class, plus noise). Returns ``{part: {"path", "array"}}``."""
    rng = np.random.default_rng(seed)
    Path(directory).mkdir(parents=True, exist_ok=True)
    out = {}
    for split, n in (("train", n_train), ("test", n_test)):
        y = _balanced_labels(n, 10, rng).astype(np.uint8)
        x = rng.integers(0, 40, (n, 28, 28), dtype=np.uint8)
        for i, c in enumerate(y):
            r = 4 + 2 * int(c)
            x[i, r : r + 3, 6:22] = 255
        for part, arr in (("images", x), ("labels", y)):
            name = f"{split}_{part}"
            path = make_mnist_idx_gz(Path(directory) / MNIST_FILES[name], arr)
            out[name] = {"path": path, "array": arr}
    return out


def make_flat_image_tar(
    path: Path,
    root: str,
    *,
    n: int = 100,
    size: int = 32,
    ext: str = "jpg",
    compress: bool = True,
    seed: int = 5,
) -> dict:
    """A tar (gzip or plain) of ``n`` RGB images ``<root>/<i>.<ext>`` of ``size`` x ``size`` pixels,
    the layout of the ODIN sets (``LSUN/test``, ``LSUN_resize``, ``iSUN/iSUN_patches``) and of
    Places365's ``val_256`` (256 x 256 there)."""
    from PIL import Image

    rng = np.random.default_rng(seed)
    fmt = "PNG" if ext == "png" else "JPEG"
    members = [(root, None)]
    for i in range(n):
        arr = rng.integers(0, 256, size=(size, size, 3), dtype=np.uint8)
        members.append((f"{root}/{i:08d}.{ext}", _encode(Image.fromarray(arr, "RGB"), fmt)))
    write_tar(path, members, compress=compress)
    return {"path": Path(path), "n": n}


def make_cifar10c_like(path: Path, test_x: np.ndarray, test_y: np.ndarray, corruptions) -> dict:
    """A CIFAR-10-C tar for a given CIFAR-10 test set (NHWC uint8, its labels): per corruption, the
    five severities stacked (``len(test_x)`` rows each, the test images with seeded noise growing
    with severity) and ``labels.npy`` = the test labels tiled five times, as in the real files."""
    rng = np.random.default_rng(7)
    members = [("CIFAR-10-C", None)]
    for name in corruptions:
        blocks = []
        for s in range(1, 6):
            noise = rng.normal(0, 8 * s, size=test_x.shape)
            blocks.append(np.clip(test_x + noise, 0, 255).astype(np.uint8))
        buf = io.BytesIO()
        np.save(buf, np.concatenate(blocks), allow_pickle=False)
        members.append((f"CIFAR-10-C/{name}.npy", buf.getvalue()))
    buf = io.BytesIO()
    np.save(buf, np.tile(np.asarray(test_y, dtype=np.uint8), 5), allow_pickle=False)
    members.append(("CIFAR-10-C/labels.npy", buf.getvalue()))
    write_tar(path, members, compress=False)
    return {"path": Path(path)}
