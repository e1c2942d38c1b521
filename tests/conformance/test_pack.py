"""``sessionspec vectors pack``: the release artifact is complete, honest and byte-reproducible."""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import shutil
import subprocess
import tarfile
from pathlib import Path

import pytest

from sessionspec.cli import main
from sessionspec.conformance.vectors.command import VECTORS_DIR, load_dir
from sessionspec.conformance.vectors.format import FORMAT
from sessionspec.conformance.vectors.pack import PACK_FORMAT, PackError, build_pack, package_version
from sessionspec.spec.registry import registry_digest

ROOT = Path(__file__).resolve().parents[2]


def _members(data: bytes) -> dict[str, tuple[tarfile.TarInfo, bytes]]:
    out: dict[str, tuple[tarfile.TarInfo, bytes]] = {}
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        for member in tar.getmembers():
            extracted = tar.extractfile(member)
            assert extracted is not None
            out[member.name] = (member, extracted.read())
    return out


def test_packing_twice_gives_the_same_bytes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    first, second = tmp_path / "one.tar.gz", tmp_path / "two.tar.gz"
    assert main(["vectors", "pack", "--out", str(first)]) == 0
    # Different file times on a copy of the inputs must not change a byte.
    copy = tmp_path / "vectors"
    shutil.copytree(VECTORS_DIR, copy)
    for path in copy.iterdir():
        os.utime(path, (1_000_000_000, 1_000_000_000))
    assert main(["vectors", "pack", "--out", str(second), "--vectors", str(copy)]) == 0
    assert first.read_bytes() == second.read_bytes()
    assert hashlib.sha256(first.read_bytes()).hexdigest() in capsys.readouterr().out


def test_the_manifest_lists_every_file_with_its_sha256_and_the_registry_digest() -> None:
    data = build_pack(VECTORS_DIR)
    members = _members(data)
    top = f"sessionspec-vectors-{package_version()}"
    manifest = json.loads(members[f"{top}/MANIFEST.json"][1])
    assert manifest["format"] == PACK_FORMAT and manifest["vectorFormat"] == FORMAT
    assert manifest["registry"] == registry_digest() and manifest["version"] == package_version()
    listed = {f["path"]: f for f in manifest["files"]}
    assert set(listed) | {"MANIFEST.json"} == {name.removeprefix(top + "/") for name in members}
    committed = {f"vectors/{p.name}" for p in VECTORS_DIR.glob("*.json")}
    assert committed | {"docs/conformance.md"} == set(listed)
    for path, entry in listed.items():
        body = members[f"{top}/{path}"][1]
        assert entry["sha256"] == hashlib.sha256(body).hexdigest() and entry["size"] == len(body)
        source = ROOT / path
        assert body == source.read_bytes()


def test_archive_metadata_is_fixed() -> None:
    data = build_pack(VECTORS_DIR)
    assert data[:2] == b"\x1f\x8b" and data[4:8] == b"\0\0\0\0"  # gzip mtime 0
    assert not data[3] & 0x08  # FNAME flag clear: no file name in the gzip header
    members = _members(data)
    assert list(members) == sorted(members)
    for info, _ in members.values():
        assert (info.mtime, info.uid, info.gid, info.uname, info.gname, info.mode) == (0, 0, 0, "", "", 0o644)
        assert info.isreg()
    raw = gzip.decompress(data)
    assert b"PaxHeader" not in raw and b"mtime=" not in raw


def test_the_packed_vectors_load_as_a_vector_directory(tmp_path: Path) -> None:
    with tarfile.open(fileobj=io.BytesIO(build_pack(VECTORS_DIR))) as tar:
        tar.extractall(tmp_path, filter="data")
    (folder,) = tmp_path.iterdir()
    loaded = load_dir(folder / "vectors")
    assert sum(len(d["vectors"]) for d in loaded) == sum(len(d["vectors"]) for d in load_dir(VECTORS_DIR))


def test_stale_vectors_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    copy = tmp_path / "vectors"
    shutil.copytree(VECTORS_DIR, copy)
    loop = copy / "loop.json"
    loop.write_text(loop.read_text(encoding="utf-8").replace(registry_digest(), "0" * 16, 1), encoding="utf-8")
    with pytest.raises(PackError, match="registry"):
        build_pack(copy)
    assert main(["vectors", "pack", "--out", str(tmp_path / "x.tar.gz"), "--vectors", str(copy)]) == 2
    assert "registry" in capsys.readouterr().err and not (tmp_path / "x.tar.gz").exists()


def test_a_missing_directory_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["vectors", "pack", "--out", str(tmp_path / "x.tar.gz"), "--vectors", str(tmp_path / "none")]) == 2
    assert "no vector directory" in capsys.readouterr().err


def test_the_default_archive_stays_out_of_the_checkout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 46: run inside the source checkout the archive goes to dist/ (git-ignored), so a pack leaves no
    untracked file; run elsewhere, to the current directory."""
    from sessionspec.conformance.vectors.pack import ROOT, default_name, default_out

    assert default_out("9", cwd=ROOT) == ROOT / "dist" / default_name("9")
    assert default_out("9", cwd=ROOT / "docs") == ROOT / "dist" / default_name("9")
    assert default_out("9", cwd=tmp_path) == tmp_path.resolve() / default_name("9")
    ignored = subprocess.run(["git", "check-ignore", "-q", str(ROOT / "dist" / default_name("9"))], cwd=ROOT)
    assert ignored.returncode == 0  # git ignores it
    monkeypatch.chdir(tmp_path)
    assert main(["vectors", "pack", "-q"]) == 0
    assert [p.name for p in tmp_path.iterdir()] == [default_name()]


@pytest.mark.slow  # minutes under load: out of the quick loop (issue 42 item 4), in .ci/run
def test_generate_check_says_so_when_the_vectors_are_fresh(capsys: pytest.CaptureFixture[str]) -> None:
    from sessionspec.conformance.vectors.command import VECTORS_DIR

    assert main(["vectors", "generate", "--check"]) == 0
    (line,) = capsys.readouterr().out.splitlines()
    assert line.startswith(f"{VECTORS_DIR}: ") and line.endswith("vectors, equal to a fresh generation")
    assert main(["vectors", "generate", "--check", "-q"]) == 0 and capsys.readouterr().out == ""
