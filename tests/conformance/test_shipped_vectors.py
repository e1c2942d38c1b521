"""Where the committed vectors are read from by default (sessionspec/conformance/vectors/shipped.py): the copy a
wheel ships as ``sessionspec/_vectors`` (a link to ``vectors/`` in a checkout).  An installed sessionspec has no
``vectors/`` beside the package, so ``mutants`` and ``vectors pack`` stopped with "no vector directory" there
(issue 46's fresh-install audit); tests/packaging/test_builds.py runs ``mutants`` from the wheel."""

from __future__ import annotations

import io
import shutil
import tarfile
from pathlib import Path

import pytest

from sessionspec.cli import main
from sessionspec.conformance.vectors import shipped

ROOT = Path(__file__).resolve().parents[2]


def test_a_checkout_reads_its_committed_vectors_through_the_shipped_link() -> None:
    assert shipped.PACKAGED.is_symlink()
    assert shipped.shipped_vectors() == (ROOT / "vectors").resolve()


def test_without_a_shipped_copy_a_source_tree_reads_its_vectors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(shipped, "PACKAGED", tmp_path / "absent")
    assert shipped.shipped_vectors() == shipped.SOURCE


def test_pack_and_mutants_default_to_the_shipped_vectors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    """A shipped copy holding two vector files: the pack made with no ``--vectors`` holds exactly those, and
    ``mutants`` reads that directory: one holding no vector file is a usage error naming it (every mutant would
    "survive" no vector)."""
    copy = tmp_path / "_vectors"
    copy.mkdir()
    for name in ("schema.json", "codec.json", "replay.json"):
        shutil.copy(ROOT / "vectors" / name, copy / name)
    monkeypatch.setattr(shipped, "PACKAGED", copy)
    out = tmp_path / "pack.tar.gz"
    assert main(["vectors", "pack", "-q", "--out", str(out)]) == 0
    with tarfile.open(fileobj=io.BytesIO(out.read_bytes())) as tar:
        vector_files = sorted(m.name.rsplit("/", 1)[1] for m in tar.getmembers() if "/vectors/" in m.name)
    assert vector_files == ["codec.json", "replay.json", "schema.json"]
    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.setattr(shipped, "PACKAGED", empty)
    assert main(["mutants", "--only", "prefix-after-history", "--examples", "1", "--no-progress"]) == 2
    assert capsys.readouterr().err.strip() == f"sessionspec mutants: no vector files in {empty}"
