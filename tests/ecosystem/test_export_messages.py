"""Issue 32, item 8: python -m svmmap.export's messages name the file at fault -- the Vespa
rank-feature map (not UTF-8, a feature missing or unknown: the map, not names.txt), the model
file (a normaliser a format cannot hold) -- in one line, and nothing is written."""

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from svmmap import SVMMap
from svmmap.export import main as export_main

from conftest import FAST, one_error_line


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    folder = tmp_path_factory.mktemp("export")
    rng = np.random.default_rng(0)
    X, y, qid = rng.random((24, 3)), np.tile([1.0, 0.0, 0.0], 8), np.repeat(np.arange(4), 6)
    SVMMap().fit(X, y, qid).save(folder / "model.json")
    X[:, 0] -= 0.5  # a negative minimum: the LTR plugin's min_max normaliser refuses it
    SVMMap(normalize="minmax").fit(X, y, qid).save(folder / "minmax.json")
    return folder


def _export(folder, *argv):
    try:
        return export_main([*map(str, argv)])
    except SystemExit as exc:
        return exc.code


@FAST
@given(line=st.integers(1, 3), byte=st.integers(0x80, 0xff), names=st.booleans())
@example(line=3, byte=0xe9, names=False)  # 'café' in latin-1: a UnicodeDecodeError before
def test_a_rank_feature_map_not_in_utf8_is_named_with_its_line(tmp_path_factory, models,
                                                               capsys, line, byte, names):
    folder = tmp_path_factory.mktemp("map")
    labels = ["a", "b", "c"] if names else ["1", "2", "3"]
    lines = [f"{n} attribute(f{n})".encode() for n in labels]
    lines[line - 1] += b" caf" + bytes([byte])
    (folder / "map.txt").write_bytes(b"\n".join(lines) + b"\n")
    (folder / "names.txt").write_text("a\nb\nc\n")
    extra = ["--feature-names", folder / "names.txt"] if names else []
    status = _export(folder, "--format", "vespa", "--rank-features", folder / "map.txt", *extra,
                     models / "model.json", folder / "out.profile")
    assert status == 1 and not (folder / "out.profile").exists()
    assert one_error_line(capsys).startswith(
        f"python -m svmmap.export: error: {folder / 'map.txt'}:{line}: not valid UTF-8 "
        f"(byte 0x{byte:02x})")


@FAST
@given(drop=st.sets(st.integers(0, 2)), add=st.lists(st.sampled_from(["x", "zz", "4"]),
                                                     unique=True),
       names=st.booleans())
@example(drop={2}, add=[], names=False)  # missing feature 3: no file named before
@example(drop={2}, add=["zz"], names=True)  # names.txt was named, not the map
def test_a_rank_feature_map_that_does_not_fit_names_the_map(tmp_path_factory, models, capsys,
                                                            drop, add, names):
    folder = tmp_path_factory.mktemp("map")
    labels = ["a", "b", "c"] if names else ["1", "2", "3"]
    mapped = [n for k, n in enumerate(labels) if k not in drop] + add
    (folder / "map.txt").write_text("".join(f"{n} attribute({n})\n" for n in mapped))
    (folder / "names.txt").write_text("a\nb\nc\n")
    extra = ["--feature-names", folder / "names.txt"] if names else []
    status = _export(folder, "--format", "vespa", "--rank-features", folder / "map.txt", *extra,
                     models / "model.json", folder / "out.profile")
    if not drop and not add:
        assert status == 0
        return
    assert status == 1 and not (folder / "out.profile").exists()
    assert one_error_line(capsys).startswith(
        f"python -m svmmap.export: error: {folder / 'map.txt'}: the rank-feature map must "
        "name every model feature and no other: ")


def test_a_normaliser_the_format_cannot_hold_names_the_model_file(tmp_path, models, capsys):
    status = _export(tmp_path, "--format", "ltr", models / "minmax.json", tmp_path / "o.json")
    assert status == 1 and not (tmp_path / "o.json").exists()
    assert one_error_line(capsys).startswith(
        f"python -m svmmap.export: error: {models / 'minmax.json'}: feature '1': the LTR "
        "plugin's min_max normaliser needs 0 <= minimum < maximum")
