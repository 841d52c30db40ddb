"""What a person expects from the commands' outputs and errors: files with the user's umask,
swapped arguments recognised, SVMstruct options svmmap lacks named with what it does instead."""

import os

import pytest

from svmmap import dump_svmlight
from svmmap.commands.learn_options import SVMSTRUCT_ONLY
from svmmap.data.atomic import write_text_atomically

from conftest import random_collection, run_command


@pytest.mark.parametrize("umask, mode", [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_written_files_get_the_users_umask(tmp_path, umask, mode):
    old = os.umask(umask)
    try:
        write_text_atomically(tmp_path / "out.txt", "x\n")
    finally:
        os.umask(old)
    assert (tmp_path / "out.txt").stat().st_mode & 0o777 == mode


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("manners")
    dump_svmlight(tmp / "train.txt", *random_collection(seed=1, n_queries=8))
    run_command("svmmap_learn", "-v", "0", tmp / "train.txt", tmp / "m.json", umask=0o022)
    return tmp


def test_model_and_predictions_files_follow_the_umask(files):
    assert (files / "m.json").stat().st_mode & 0o777 == 0o644
    proc = run_command("svmmap_classify", "-v", "0", files / "train.txt", files / "m.json",
                       files / "p.txt", umask=0o027, check=False)
    assert proc.returncode == 0 and (files / "p.txt").stat().st_mode & 0o777 == 0o640


def test_swapped_learn_arguments_say_the_first_file_is_a_model(files):
    before = (files / "train.txt").read_bytes()
    proc = run_command("svmmap_learn", "-c", "100", files / "m.json", files / "train.txt",
                       check=False)
    assert proc.returncode == 2 and proc.stderr.startswith("svmmap_learn: error: ")
    assert len(proc.stderr.splitlines()) == 1  # one line, with a pointer to --help
    assert proc.stderr.rstrip().endswith("(see svmmap_learn --help)")
    assert f"{files / 'm.json'} looks like a model file, not data: the arguments are " \
           "train_file model_file" in proc.stderr
    assert (files / "train.txt").read_bytes() == before


def test_swapped_classify_arguments_say_the_first_file_is_a_model(files):
    proc = run_command("svmmap_classify", files / "m.json", files / "train.txt", files / "p2.txt",
                       check=False)
    assert proc.returncode == 2 and proc.stderr.startswith("svmmap_classify: error: ")
    assert len(proc.stderr.splitlines()) == 1
    assert "looks like a model file, not data: the arguments are test_file model_file " \
           "predictions_file" in proc.stderr
    assert not (files / "p2.txt").exists()


@pytest.mark.parametrize("option, value, instead", [
    ("-t", "1", "--bin N"), ("-p", "2", "L1 slacks"), ("-o", "1", "margin rescaling"),
    ("-#", "100", "--max-iter N or --max-time"), ("-f", "10", "--cache-size N"),
    ("-y", "1", "-v 0|1|2"), ("-t2", None, "linear ranking functions only")])
def test_svmstruct_options_are_named_with_what_svmmap_does_instead(files, option, value,
                                                                   instead):
    args = [option] + ([value] if value else [])
    proc = run_command("svmmap_learn", *args, files / "train.txt", files / "m2.json", check=False)
    assert proc.returncode == 2 and proc.stderr.startswith("svmmap_learn: error: ")
    assert len(proc.stderr.splitlines()) == 1
    assert f"{option[:2]} is an SVMstruct option svmmap does not have: " in proc.stderr
    assert instead in proc.stderr and not (files / "m2.json").exists()
    assert instead in SVMSTRUCT_ONLY[option[:2]]
