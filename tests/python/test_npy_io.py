"""The C driver's .npy reader and writer (scripts/cref_c/cref_npy.h): every
manifest type round-trips through C byte for byte, and malformed files are
refused with one clear message."""

import io
import subprocess

import numpy as np
import pytest

from conftest import REPO_ROOT, cref_module as cref

C_DIR = REPO_ROOT / "scripts" / "cref_c"
SHAPES = [(), (7,), (3, 5), (2, 3, 4), (1, 1, 1, 2)]


@pytest.fixture(scope="module")
def roundtrip(tmp_path_factory):
    executable = tmp_path_factory.mktemp("npy") / "npy_roundtrip"
    subprocess.run(["gcc", "-O2", "-Wall", "-Werror", f"-I{C_DIR}",
                    str(C_DIR / "npy_roundtrip.c"), "-o", str(executable)], check=True)
    return executable


def _run(roundtrip, source, target, type_name, shape):
    descr = cref.TYPES[type_name][2]
    size = np.dtype(cref.TYPES[type_name][0]).itemsize
    return subprocess.run([str(roundtrip), str(source), str(target), descr, str(size),
                           *map(str, shape)], capture_output=True, text=True)


def _sample(type_name, shape, seed=0):
    dtype = np.dtype(cref.TYPES[type_name][0])
    rng = np.random.default_rng(seed)
    if dtype.kind == "f":
        return rng.standard_normal(shape).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True)


@pytest.mark.parametrize("type_name", list(cref.TYPES))
@pytest.mark.parametrize("version", [(1, 0), (2, 0), (3, 0)])
def test_every_type_and_rank_round_trips_byte_for_byte(roundtrip, tmp_path, type_name, version):
    for shape in SHAPES:
        array = _sample(type_name, shape)
        source, target = tmp_path / "in.npy", tmp_path / "out.npy"
        with open(source, "wb") as f:
            np.lib.format.write_array(f, array, version=version)
        result = _run(roundtrip, source, target, type_name, shape)
        assert result.returncode == 0, result.stderr
        loaded = np.load(target)
        assert loaded.dtype == array.dtype and loaded.shape == array.shape
        assert loaded.tobytes() == array.tobytes()
        # The C writer produces exactly what numpy's own version 1.0 writer does.
        expected = io.BytesIO()
        np.lib.format.write_array(expected, array, version=(1, 0))
        assert target.read_bytes() == expected.getvalue()


def _expect_refusal(roundtrip, tmp_path, payload: bytes, type_name, shape, message):
    source = tmp_path / "bad.npy"
    source.write_bytes(payload)
    result = _run(roundtrip, source, tmp_path / "out.npy", type_name, shape)
    assert result.returncode == 2
    assert result.stderr.startswith("cref: error: ") and message in result.stderr, result.stderr
    assert result.stderr.count("\n") == 1
    assert not (tmp_path / "out.npy").exists()


def _npy_bytes(array):
    buffer = io.BytesIO()
    np.save(buffer, array)
    return buffer.getvalue()


def test_wrong_dtype_is_refused(roundtrip, tmp_path):
    payload = _npy_bytes(np.zeros((3, 4), dtype=np.float32))
    _expect_refusal(roundtrip, tmp_path, payload, "f64", (3, 4),
                    "dtype is '<f4' but the kernel expects '<f8'")


def test_wrong_shape_is_refused(roundtrip, tmp_path):
    payload = _npy_bytes(np.zeros((4, 3)))
    _expect_refusal(roundtrip, tmp_path, payload, "f64", (3, 4),
                    "shape is (4, 3) but the kernel expects (3, 4)")


def test_wrong_rank_is_refused(roundtrip, tmp_path):
    payload = _npy_bytes(np.zeros(12))
    _expect_refusal(roundtrip, tmp_path, payload, "f64", (3, 4),
                    "shape is (12) but the kernel expects (3, 4)")


def test_truncated_data_is_refused(roundtrip, tmp_path):
    payload = _npy_bytes(np.zeros((3, 4)))[:-8]
    _expect_refusal(roundtrip, tmp_path, payload, "f64", (3, 4), "truncated data")


def test_bad_magic_is_refused(roundtrip, tmp_path):
    _expect_refusal(roundtrip, tmp_path, b"not an npy file at all", "f64", (3,), "bad magic")


def test_fortran_order_is_refused(roundtrip, tmp_path):
    payload = _npy_bytes(np.asfortranarray(np.zeros((3, 4))))
    _expect_refusal(roundtrip, tmp_path, payload, "f64", (3, 4), "Fortran-ordered")


def test_missing_file_is_refused(roundtrip, tmp_path):
    result = _run(roundtrip, tmp_path / "absent.npy", tmp_path / "out.npy", "f64", (3,))
    assert result.returncode == 2 and "cannot open input file" in result.stderr
