"""``sessionspec vectors pack``: the conformance vectors as one release artifact.

The archive ``sessionspec-vectors-<version>.tar.gz`` holds, under the folder
``sessionspec-vectors-<version>/``: every vector file and the vector schema
(``vectors/``), the protocol document (``docs/conformance.md``) and
``MANIFEST.json``: the package version, the vector format, the rule-registry
digest, the size and sha256 of every other file, and the vector index (issue 27):
every vector's id, group, rules, the operations and features it needs
(capabilities.py) and the file that holds it.

It is byte-reproducible: members in sorted order, fixed mtime (0), owner and
group 0 with empty names, mode 0644, ustar headers (no pax time records), gzip
with mtime 0, no file name and a fixed compression level.  Packing twice gives
the same bytes; tests/conformance/test_pack.py checks it.  Stale vectors (a vector file
whose registry digest is not the registry's) are refused: an artifact must not
claim rules its vectors were not generated from.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import io
import json
import sys
import tarfile
from collections.abc import Mapping
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Final

from sessionspec.conformance.vectors.format import FORMAT

PACK_FORMAT: Final = "sessionspec-vectors-pack/2"  # /2: the vector index
ROOT: Final = Path(__file__).resolve().parents[3]
PROTOCOL_DOC: Final = ROOT / "docs" / "conformance.md"


class PackError(Exception):
    """The inputs cannot make an honest pack (missing, unreadable, stale)."""


def package_version() -> str:
    try:
        return version("sessionspec")
    except PackageNotFoundError:  # run from a source tree that was never installed
        return "0+unknown"


def default_name(pack_version: str | None = None) -> str:
    return f"sessionspec-vectors-{pack_version or package_version()}.tar.gz"


def pack_files(vectors_dir: Path, protocol_doc: Path = PROTOCOL_DOC) -> dict[str, bytes]:
    """Archive path (inside the top folder) -> bytes, without the manifest."""
    if not vectors_dir.is_dir():
        raise PackError(f"no vector directory {vectors_dir}")
    if not protocol_doc.is_file():
        raise PackError(f"no protocol document {protocol_doc} (packing needs a source checkout)")
    files: dict[str, bytes] = {}
    for path in sorted(vectors_dir.glob("*.json")):
        files[f"vectors/{path.name}"] = path.read_bytes()
    if "vectors/schema.json" not in files or len(files) < 2:
        raise PackError(f"{vectors_dir} holds no schema.json or no vector files")
    files["docs/conformance.md"] = protocol_doc.read_bytes()
    return files


def manifest(files: Mapping[str, bytes], registry: str, pack_version: str) -> dict[str, object]:
    return {
        "format": PACK_FORMAT,
        "version": pack_version,
        "vectorFormat": FORMAT,
        "registry": registry,
        "files": [{"path": name, "size": len(body), "sha256": hashlib.sha256(body).hexdigest()}
                  for name, body in sorted(files.items())],
        "vectors": vector_index(files),
    }


def vector_index(files: Mapping[str, bytes]) -> list[dict[str, object]]:
    """Every vector of the pack: id, group, rules, the operations and features it needs, its file (in file
    order, then vector order), so an implementer can see what a capability unlocks without running."""
    from sessionspec.conformance.adapter.capabilities import vector_needs

    index: list[dict[str, object]] = []
    for name, body in sorted(files.items()):
        if not name.startswith("vectors/") or name == "vectors/schema.json":
            continue
        document = json.loads(body)
        for vector in document.get("vectors", []):
            needs = vector_needs(vector)
            index.append({"id": vector["id"], "group": document.get("group"), "rules": list(vector["rules"]),
                          "operations": [n.removeprefix("op ") for n in needs if n.startswith("op ")],
                          "features": [n.removeprefix("feature ") for n in needs if n.startswith("feature ")],
                          "file": name})
    return index


def vector_registry(files: Mapping[str, bytes]) -> str:
    """The one registry digest every vector file carries (else PackError)."""
    digests: set[str] = set()
    for name, body in files.items():
        if name.startswith("vectors/") and name != "vectors/schema.json":
            try:
                document = json.loads(body)
            except json.JSONDecodeError as bad:
                raise PackError(f"{name}: not JSON: {bad}") from None
            if not isinstance(document, dict) or document.get("format") != FORMAT:
                raise PackError(f"{name}: not a {FORMAT} file")
            digests.add(str(document.get("registry")))
    if len(digests) != 1:
        raise PackError(f"the vector files carry {len(digests)} different registry digests: {sorted(digests)}")
    return digests.pop()


def tar_gz(members: Mapping[str, bytes], top: str) -> bytes:
    """A reproducible .tar.gz of ``members`` under the folder ``top``."""
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.USTAR_FORMAT) as tar:
        for name in sorted(members):
            body = members[name]
            info = tarfile.TarInfo(f"{top}/{name}")
            info.size, info.mtime, info.mode = len(body), 0, 0o644
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            tar.addfile(info, io.BytesIO(body))
    out = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=out, compresslevel=9, mtime=0) as compressed:
        compressed.write(raw.getvalue())
    return out.getvalue()


def build_pack(vectors_dir: Path, *, pack_version: str | None = None, protocol_doc: Path = PROTOCOL_DOC,
               registry: str | None = None) -> bytes:
    """The archive bytes.  ``registry``: the digest the vectors must carry
    (default: this registry's; stale vectors are refused)."""
    from sessionspec.spec.registry import registry_digest

    files = pack_files(vectors_dir, protocol_doc)
    carried = vector_registry(files)
    expected = registry if registry is not None else registry_digest()
    if carried != expected:
        raise PackError(f"the vectors carry registry {carried} but the registry is {expected}: "
                        "regenerate them (sessionspec vectors generate)")
    the_version = pack_version or package_version()
    body = json.dumps(manifest(files, carried, the_version), indent=1, sort_keys=True) + "\n"
    return tar_gz({**files, "MANIFEST.json": body.encode()}, f"sessionspec-vectors-{the_version}")


PACK_DESCRIPTION: Final = (
    "Write the release artifact: every vector file, the vector schema, docs/conformance.md and MANIFEST.json (the "
    "sha256 of every file, the rule-registry digest and the vector index), as a byte-reproducible .tar.gz.")


def default_out(pack_version: str | None = None, cwd: Path | None = None) -> Path:
    """Where ``--out`` defaults to: ``dist/`` (git-ignored) when run inside this source checkout, so a pack
    leaves no untracked file in it (issue 46, part 5); else the current directory."""
    here = (cwd or Path.cwd()).resolve()
    inside = here == ROOT or ROOT in here.parents
    return (ROOT / "dist" if inside and (ROOT / ".git").exists() else here) / default_name(pack_version)


def add_pack_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from sessionspec.conformance.vectors.cli_words import add_verbosity_arguments, exit_codes
    from sessionspec.conformance.vectors.exit_codes import EXIT_CODES

    packer = sub.add_parser("pack", help="write the vectors, schema, protocol doc and a sha256 manifest as a reproducible .tar.gz",
                            description=PACK_DESCRIPTION, epilog=exit_codes(EXIT_CODES),
                            formatter_class=argparse.RawDescriptionHelpFormatter)
    packer.add_argument("--out", default=None, metavar="FILE",
                        help="the archive (default: sessionspec-vectors-<version>.tar.gz in the current directory, or in "
                             "dist/ inside a source checkout, which git ignores; missing directories are created)")
    packer.add_argument("--vectors", default=None, metavar="DIR", help="vector directory (default: the committed vectors, as shipped with sessionspec)")
    packer.add_argument("--format", choices=("text", "json"), default="text",
                        help="text (default): one line; json: the archive, its sha256 and the manifest "
                             "(docs/schemas/vectors-pack.v2.schema.json)")
    add_verbosity_arguments(packer, quiet="no line on success", verbose="every file packed, with its size and sha256")


def run_pack(args: argparse.Namespace) -> int:
    from sessionspec.conformance.vectors.shipped import shipped_vectors

    directory = Path(args.vectors) if args.vectors else shipped_vectors()
    out = Path(args.out) if args.out else default_out()
    try:
        data = build_pack(directory)
    except (PackError, OSError) as failed:
        print(f"sessionspec vectors pack: {failed}", file=sys.stderr)
        return 2
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(data)
    except OSError as failed:
        print(f"sessionspec vectors pack: cannot write: {failed}", file=sys.stderr)
        return 2
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        member = next(m for m in tar.getmembers() if m.name.endswith("/MANIFEST.json"))
        extracted = tar.extractfile(member)
        assert extracted is not None
        the_manifest = json.loads(extracted.read())
    if getattr(args, "format", "text") == "json":
        print(json.dumps({"archive": str(out), "sha256": hashlib.sha256(data).hexdigest(), "manifest": the_manifest},
                         indent=1, sort_keys=True))
        return 0
    if getattr(args, "verbose", False):
        for entry in the_manifest["files"]:
            print(f"  {entry['path']}: {entry['size']} bytes, sha256 {entry['sha256']}")
    if not getattr(args, "quiet", False):
        print(f"wrote {out}: {len(the_manifest['files'])} files + MANIFEST.json, {len(the_manifest['vectors'])} vectors, "
              f"registry {the_manifest['registry']}, sha256 {hashlib.sha256(data).hexdigest()}")
    return 0
