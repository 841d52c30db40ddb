"""Compressed input (recognised by content), standard input, and LightGBM-style group files."""

import bz2
import gzip
import io
import lzma
import shutil
import subprocess
import sys
import types

import numpy as np
import pytest

from svmmap.data.io import load_svmlight
from svmmap.errors import InputFormatError

TEXT = "1 qid:3 1:0.5 3:2\n0 qid:3 2:1\n# comment\n2 qid:1 1:-1 # docid = x\n"
NO_QID = "1 1:0.5 3:2\n0 2:1\n# comment\n2 1:-1 # docid = x\n"
COMPRESS = {"gzip": gzip.compress, "bzip2": bz2.compress, "xz": lzma.compress}


def same(a, b):
    (Xa, ya, qa), (Xb, yb, qb) = a, b
    assert (Xa != Xb).nnz == 0 and Xa.shape == Xb.shape
    np.testing.assert_array_equal(ya, yb)
    np.testing.assert_array_equal(qa, qb)


@pytest.mark.parametrize("kind", sorted(COMPRESS))
def test_compressed_input_is_recognised_by_content_not_name(tmp_path, kind):
    plain = tmp_path / "plain.txt"
    plain.write_text(TEXT)
    packed = tmp_path / "train.txt"  # the name says nothing
    packed.write_bytes(COMPRESS[kind](TEXT.encode()))
    same(load_svmlight(packed), load_svmlight(plain))


@pytest.mark.parametrize("kind", sorted(COMPRESS))
def test_errors_in_compressed_files_name_the_users_file_and_line(tmp_path, kind):
    packed = tmp_path / "train.dat"
    packed.write_bytes(COMPRESS[kind]((TEXT + "1 qid:1 2:x\n").encode()))
    with pytest.raises(InputFormatError, match=rf"^{packed}:5: feature 2: value 'x'"):
        load_svmlight(packed)
    truncated = tmp_path / "cut.gz"
    truncated.write_bytes(COMPRESS[kind](TEXT.encode() * 50)[:40])
    with pytest.raises(InputFormatError, match=rf"^{truncated}: corrupt or truncated {kind}"):
        load_svmlight(truncated)


def test_index_file_may_list_compressed_files(tmp_path):
    (tmp_path / "a.gz").write_bytes(gzip.compress(TEXT.encode()))
    (tmp_path / "list.txt").write_text("a.gz\n")
    (tmp_path / "plain.txt").write_text(TEXT)
    same(load_svmlight(tmp_path / "list.txt"), load_svmlight(tmp_path / "plain.txt"))


@pytest.mark.parametrize("compressed", [False, True])
def test_dash_reads_standard_input(tmp_path, monkeypatch, compressed):
    data = TEXT.encode()
    monkeypatch.setattr(sys, "stdin", types.SimpleNamespace(
        buffer=io.BytesIO(gzip.compress(data) if compressed else data)))
    (tmp_path / "plain.txt").write_text(TEXT)
    same(load_svmlight("-"), load_svmlight(tmp_path / "plain.txt"))


def test_standard_input_errors_name_stdin(monkeypatch):
    monkeypatch.setattr(sys, "stdin", types.SimpleNamespace(buffer=io.BytesIO(b"1 qid:1 1:a\n")))
    with pytest.raises(InputFormatError, match=r"^<stdin>:1: feature 1: value 'a'"):
        load_svmlight("-")


def test_group_file_beside_the_data(tmp_path):
    (tmp_path / "train.txt").write_text(NO_QID)
    (tmp_path / "train.txt.query").write_text("2\n1\n")
    X, y, qid = load_svmlight(tmp_path / "train.txt")
    (tmp_path / "with_qid.txt").write_text(TEXT.replace("qid:3", "qid:1").replace(
        "2 qid:1 1:-1", "2 qid:2 1:-1"))
    same((X, y, qid), load_svmlight(tmp_path / "with_qid.txt"))


def test_group_file_given_explicitly_and_compressed_data(tmp_path):
    (tmp_path / "train.bin").write_bytes(gzip.compress(NO_QID.encode()))
    (tmp_path / "sizes").write_text("1\n2\n")
    _, _, qid = load_svmlight(tmp_path / "train.bin", group=tmp_path / "sizes")
    assert qid.tolist() == [1, 2, 2]


@pytest.mark.parametrize("sizes, message", [
    ("2\n2\n", r"sizes: the query sizes add up to 4 documents but .*train.txt has 3"),
    ("2\nx\n", r"sizes:2: expected one query size \(a positive integer\), got 'x'"),
    ("0\n3\n", r"sizes:1: expected one query size"),
])
def test_group_file_errors_name_the_group_file(tmp_path, sizes, message):
    (tmp_path / "train.txt").write_text(NO_QID)
    (tmp_path / "sizes").write_text(sizes)
    with pytest.raises(InputFormatError, match=message):
        load_svmlight(tmp_path / "train.txt", group=tmp_path / "sizes")


def test_data_with_qid_and_a_group_file_is_refused(tmp_path):
    (tmp_path / "train.txt").write_text(TEXT)
    (tmp_path / "sizes").write_text("3\n")
    with pytest.raises(InputFormatError, match=r"train.txt:1: the lines carry qid: and a group"):
        load_svmlight(tmp_path / "train.txt", group=tmp_path / "sizes")


def test_qid_on_one_line_of_group_data_is_refused(tmp_path):
    (tmp_path / "train.txt").write_text(NO_QID + "1 qid:4 1:1\n")
    (tmp_path / "train.txt.query").write_text("4\n")
    with pytest.raises(InputFormatError, match=r"train.txt:5: qid: on a line of data whose"):
        load_svmlight(tmp_path / "train.txt")


def test_data_without_qid_and_without_group_file_says_how_to_give_one(tmp_path):
    (tmp_path / "train.txt").write_text(NO_QID)
    with pytest.raises(InputFormatError, match=r"train.txt:1: missing qid:<id> after the label "
                                               r"\(data without qid: .*train.txt.query"):
        load_svmlight(tmp_path / "train.txt")


def test_commands_read_compressed_stdin_and_group_files(tmp_path):
    """The installed commands: gzip data on standard input with --group, and the model it gives
    scores a plain copy the same way."""
    rng = np.random.default_rng(3)
    lines = [f"{int(rng.random() < 0.3)} " + " ".join(f"{j}:{rng.normal():.3f}" for j in (1, 2, 3))
             for _ in range(40)]
    lines[0] = "1" + lines[0][1:]
    lines[1] = "0" + lines[1][1:]
    (tmp_path / "sizes").write_text("10\n10\n20\n")
    packed = gzip.compress(("\n".join(lines) + "\n").encode())
    learn = subprocess.run([shutil.which("svmmap_learn"), "-v", "0", "--group",
                            str(tmp_path / "sizes"), "-", str(tmp_path / "m.json")],
                           input=packed, capture_output=True)
    assert learn.returncode == 0, learn.stderr
    (tmp_path / "test.txt").write_text("\n".join(lines) + "\n")
    (tmp_path / "test.txt.query").write_text("40\n")
    classify = subprocess.run([shutil.which("svmmap_classify"), str(tmp_path / "test.txt"),
                               str(tmp_path / "m.json"), str(tmp_path / "p.txt")],
                              capture_output=True, text=True)
    assert classify.returncode == 0, classify.stderr
    assert "of 1 queries" in classify.stdout and len(np.loadtxt(tmp_path / "p.txt")) == 40
