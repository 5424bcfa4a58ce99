"""A track of one's own as docs/own-track.md describes it: the page documents every field of
``Track``, ``Data`` and ``Split``, shows the example files as they are, the example runs as
written, and a track whose class labels have the wrong dtype or shape fails with a message
that names the fix."""
from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest
import torch
from idea_modules import arm, idea_module
from sessions import run_session

from benchkit.tracks import Data, Split, Track
from benchkit.tracks.base import check_data

ROOT = Path(__file__).resolve().parents[1]
PAGE = (ROOT / "docs" / "own-track.md").read_text(encoding="utf-8")
EXAMPLE = ROOT / "docs" / "examples" / "own_track"


def documented(kind: str | None = None) -> set[str]:
    """The field names in the first column of the page's tables (``kind``: the rows of the
    Data/Split table whose first column is that type)."""
    if kind is None:
        return set(re.findall(r"^\| `(\w+)` \|", PAGE, re.MULTILINE))
    return set(re.findall(rf"^\| `{kind}` \| `(\w+)` \|", PAGE, re.MULTILINE))


def test_the_page_documents_every_field_and_the_readme_links_it():
    assert {f.name for f in dataclasses.fields(Track)} <= documented()
    assert set(Data._fields) == documented("Data")
    assert set(Split._fields) == documented("Split")
    assert "docs/own-track.md" in (ROOT / "README.md").read_text(encoding="utf-8")


def test_the_page_shows_the_example_files_as_they_are():
    blocks = re.findall(r"```python\n(.*?)```", PAGE, re.DOTALL)
    for name in ("conftest.py", "test_silu.py"):
        assert (EXAMPLE / name).read_text(encoding="utf-8") in blocks, name


def data(y_train, n=6, x_shape=(3,)):
    """Data whose train targets are ``y_train`` (val and test: valid long labels)."""
    ok = Split(torch.zeros(n, *x_shape), torch.zeros(n, dtype=torch.long))
    return Data(Split(torch.zeros(len(y_train), *x_shape), y_train), ok, ok)


@pytest.mark.parametrize("y", [torch.zeros(6, dtype=torch.long),
                               torch.zeros(6, 4, dtype=torch.long),
                               torch.zeros(6, 1), torch.zeros(6), torch.zeros(6, 3)],
                         ids=["labels", "labels_per_position", "regression_n1", "regression_n",
                              "regression_multi"])
def test_valid_targets_pass(y):
    check_data("mine", data(y))


@pytest.mark.parametrize("y, found, fix", [
    (torch.zeros(6, dtype=torch.int32), "dtype torch.int32 and shape [6]", "y.long()"),
    (torch.zeros(6, 1, dtype=torch.long), "dtype torch.int64 and shape [6, 1]",
     "y.squeeze(-1).long()"),
    (torch.zeros(6, dtype=torch.uint8), "dtype torch.uint8", "y.long()"),
    (torch.zeros(6, dtype=torch.bool), "dtype torch.bool", "y.long()"),
])
def test_class_labels_of_a_wrong_dtype_or_shape_name_the_fix(y, found, fix):
    with pytest.raises(ValueError) as info:
        check_data("mine", data(y))
    message = str(info.value)
    assert "track 'mine'" in message and "train.y" in message and found in message
    assert "torch.long (int64) of shape [N]" in message and fix in message


@pytest.mark.parametrize("bad, error, words", [
    ((torch.zeros(6, 3), torch.zeros(6)), TypeError, "returned a tuple"),
    (Data(Split(torch.zeros(5, 3), torch.zeros(6)), *data(torch.zeros(6))[1:]), ValueError,
     "train: x [5, 3] and y [6] must hold the same number"),
    (Data(data(torch.zeros(6))[0], Split([1.0], [1.0]), data(torch.zeros(6))[2]), TypeError,
     "val must be a Split(x, y) of torch tensors"),
])
def test_data_of_a_wrong_structure_is_named(bad, error, words):
    with pytest.raises(error, match=re.escape(words)):
        check_data("mine", bad)


def test_a_run_on_int32_labels_fails_with_the_message_not_a_loss_traceback(pytester):
    pytester.makeini("[pytest]\n")
    pytester.makeconftest('''
import torch
import torch.nn.functional as F
from benchkit.tracks import Data, Split, Track, register

def make_data(seed):
    g = torch.Generator().manual_seed(seed)
    split = lambda n: Split(torch.randn(n, 4, generator=g),
                            torch.randint(0, 3, (n,), generator=g, dtype=torch.int32))
    return Data(split(40), split(20), split(20))

register(Track(name="int32labels", make_data=make_data, make_model=lambda: torch.nn.Linear(4, 3),
               model_name="linear", grid=({"lr": 1e-2},), epochs=1, loss=F.cross_entropy,
               metric=lambda p, y: (p.argmax(1) == y).float().mean(), direction="higher",
               metric_name="accuracy"))
''')
    pytester.makepyfile(test_idea=idea_module("labels", arm("baseline"), arm("idea"),
                                              track="int32labels", grid=None))
    result = run_session(pytester, "-p", "no:cacheprovider", "-p", "no:randomly")
    result.assert_outcomes(failed=4)
    out = result.stdout.str()
    assert "class labels must be torch.long (int64) of shape [N]" in out
    assert "expected target dtype" not in out and "INTERNALERROR" not in out


@pytest.mark.e2e
@pytest.mark.slow
def test_the_example_runs_as_written(pytester, read_report):
    pytester.makeini("[pytest]\n")
    for path in EXAMPLE.glob("*.py"):
        (pytester.path / path.name).write_text(path.read_text(encoding="utf-8"), encoding="utf-8")
    result = run_session(pytester, "--bench-seeds", "2", "--bench-epochs", "1",
                         "-p", "no:cacheprovider", "-p", "no:randomly")
    result.assert_outcomes(passed=24)  # 2 tracks x 2 arms x 3 lrs x 2 seeds
    for track, metric, floor in (("skdiabetes", "mse", "ridge"),
                                 ("skdigits", "accuracy", "logistic")):
        report = read_report(pytester.path, "silu", track)
        assert report["complete"], report.get("incomplete")
        assert report["protocol"]["metric"] == metric and floor in report["floors"]
        assert (pytester.path / "reports" / "silu" / track / "summary.md").is_file()
    # floors in the metric's units: ridge explains part of the standardised target's variance
    # (a [N] prediction broadcast against [N, 1] targets gave 1.5), logistic is near 0.96
    assert 0.3 < read_report(pytester.path, "silu", "skdiabetes")["floors"]["ridge"] < 0.8
    assert read_report(pytester.path, "silu", "skdigits")["floors"]["logistic"] > 0.9
