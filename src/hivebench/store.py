"""Result files on disk: atomic writes that honour the umask, stale temporary files reaped, and
reading back a cell file only when it is whole.

A file is written as `.<name>.<random>.tmp` beside its target and renamed into place, so a reader
sees the old file or the new one, never half of one. A job killed mid-write (kill -9, OOM) leaves its
temporary file behind: the next write of the same target, and the next run of the cell's job block,
removes every `.<name>.*.tmp` of that target. Parquet files carry page checksums (CRC32), so a file
damaged in place is caught when read in full (`read_verified`); their footers are not, so a cell file
also holds a seal (`hivebench.seal`): a hash over the rest of its `hivebench.*` metadata (cell, hash,
summary, side-table hashes, inline tables) and over its columns' names and types (the footer's schema), checked
when the file is read back (`read_cell`).
"""

from __future__ import annotations

import base64
import contextlib
import glob
import hashlib
import json
import os
import secrets
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from hivebench.paths import side_path

CELL_KEY = b"hivebench.cell"
HASH_KEY = b"hivebench.cell_hash"
SUMMARY_KEY = b"hivebench.summary"
VERSION_KEY = b"hivebench.version"
TABLES_KEY = b"hivebench.tables"  # a cell's side tables: {name: sha256 of its file}
INLINE_KEY = b"hivebench.inline"  # a cell's side tables kept here (paths.inline_tables): `inline_text`
SEAL_KEY = b"hivebench.seal"


def file_digest(path: str | Path) -> str:
    with open(path, "rb") as stream:
        return hashlib.file_digest(stream, "sha256").hexdigest()


def temp_files(path: str | Path) -> list[Path]:
    """The temporary files that writes of `path` left behind."""
    path = Path(path)
    return [Path(p) for p in glob.glob(glob.escape(str(path.parent / f".{path.name}.")) + "*.tmp")]


def reap_temps(path: str | Path) -> None:
    """Remove what killed writes of `path` left; only one job ever writes a given target."""
    for temp in temp_files(path):
        with contextlib.suppress(FileNotFoundError, PermissionError):  # a read-only folder fails at the write
            temp.unlink()


def _write_atomic(path: str | Path, write: Callable[[Path], None]) -> None:
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        reap_temps(path)
        temp = path.with_name(f".{path.name}.{secrets.token_hex(6)}.tmp")
        # Created as any new file is (0666 less the umask): mkstemp's 0600 would survive the rename and
        # keep colleagues on a shared filesystem from reading results.
        os.close(os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
    except OSError as exc:
        raise OSError(exc.errno, f"cannot write {path}: {exc.strerror}") from None
    try:
        write(temp)
        os.replace(temp, path)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise


def write_atomic(table: pa.Table, path: str | Path, metadata: dict[bytes, bytes] | None = None) -> None:
    """Write a Parquet file (with page checksums) under a temporary name, then rename it into place."""
    if metadata:
        table = table.replace_schema_metadata({**(table.schema.metadata or {}), **metadata})
    _write_atomic(path, lambda temp: pq.write_table(table, temp, write_page_checksum=True))


def write_table(frame: Any, path: str | Path) -> None:
    """A pandas DataFrame to Parquet, atomically."""
    write_atomic(pa.Table.from_pandas(frame, preserve_index=False), path)


def write_json(value: Any, path: str | Path) -> None:
    """A small JSON document, atomically."""
    _write_atomic(path, lambda temp: temp.write_text(json.dumps(value, indent=1) + "\n", encoding="utf-8"))


def stored(table: pa.Table) -> pa.Table:
    """A record's table as the store holds it: dictionary-encoded columns (texts a block shares, such
    as names or classical messages) written out as their values."""
    fields = [pa.field(f.name, f.type.value_type) if pa.types.is_dictionary(f.type) else f for f in table.schema]
    return table.cast(pa.schema(fields))


def inline_text(tables: dict[str, pa.Table]) -> bytes:
    """Small side tables as a file's metadata value: JSON {name: the table as an Arrow IPC stream, in
    base64}, typed and exact, and several times faster to make than JSON columns."""
    encoded = {}
    for name, table in tables.items():
        sink = pa.BufferOutputStream()
        with pa.ipc.new_stream(sink, table.schema) as stream:
            stream.write_table(table)
        encoded[name] = base64.b64encode(sink.getvalue().to_pybytes()).decode()
    return json.dumps(encoded).encode()


def read_inline(metadata: dict[bytes, bytes]) -> dict[str, pa.Table]:
    """The side tables a cell file's metadata holds (`inline_text`), by name, their dictionary-encoded
    columns as their values (as a side file reads back)."""
    encoded = json.loads(metadata.get(INLINE_KEY, b"{}"))
    return {name: stored(pa.ipc.open_stream(base64.b64decode(text)).read_all()) for name, text in encoded.items()}


def _ours(metadata: dict[bytes, bytes]) -> dict[bytes, bytes]:
    return {k: v for k, v in metadata.items() if k.startswith(b"hivebench.")}


def schema_text(schema: pa.Schema) -> bytes:
    """A table's columns as the seal covers them: each one's name, type and nullability (the schema
    without its metadata, which the seal covers key by key)."""
    return json.dumps([[f.name, type_text(f.type), f.nullable] for f in schema], ensure_ascii=False).encode()


def type_text(kind: pa.DataType) -> str:
    """A column's type without the name of a list's items: Arrow calls them `item` and Parquet
    `element`, so a list column written by one reads back named by the other."""
    if pa.types.is_list(kind) or pa.types.is_large_list(kind):
        return f"{'large_list' if pa.types.is_large_list(kind) else 'list'}<{type_text(kind.value_type)}>"
    return str(kind)


def seal(metadata: dict[bytes, bytes], schema: pa.Schema | None = None) -> bytes:
    """A hash over every `hivebench.*` key and value but the seal itself, and over the columns of
    `schema` (`schema_text`): a changed byte, a key renamed or dropped, or a column renamed or retyped
    in the footer breaks it."""
    covered = sorted((k, v) for k, v in _ours(metadata).items() if k != SEAL_KEY)
    if schema is not None:
        covered.append((b"schema", schema_text(schema)))
    return hashlib.sha256(b"".join(b"%d:%s%d:%s" % (len(k), k, len(v), v) for k, v in covered)).hexdigest().encode()


def sealed(metadata: dict[bytes, bytes], schema: pa.Schema | None = None) -> dict[bytes, bytes]:
    """Metadata with its seal, over the columns of the table it will be written with (`schema`)."""
    return {**metadata, SEAL_KEY: seal(metadata, schema)}


def stored_summary(path: str | Path, cell_hash: str) -> dict[str, Any] | None:
    """The summary in an episode file's metadata if the file is for this exact cell, else None
    (missing, stale or unreadable). Reads the footer only."""
    try:
        return _summary_of(pq.read_schema(path).metadata, cell_hash)
    except (OSError, pa.ArrowException):
        return None


def _summary_of(metadata: dict[bytes, bytes] | None, cell_hash: str) -> dict[str, Any] | None:
    """The summary in a cell file's metadata if it is for this exact cell, else None."""
    metadata = metadata or {}
    try:
        return json.loads(metadata[SUMMARY_KEY]) if metadata.get(HASH_KEY, b"").decode() == cell_hash else None
    except (KeyError, ValueError):
        return None


def read_verified(path: str | Path) -> pa.Table:
    """The whole file, every page checked against its checksum; an OSError or ArrowException if any
    part of it is damaged."""
    return pq.read_table(path, page_checksum_verification=True)


def read_cell(path: str | Path, cell_hash: str) -> tuple[dict[str, Any] | None, dict[str, str]]:
    """A cell file read back in full, its footer checked against its seal, and its side tables against
    the hashes it holds: (its summary, {}) when all of it is whole and this cell's, else (None, {file:
    what is wrong}). A file written before seals were (none in its metadata) is kept on the other
    checks, so that finished results stay cached; its footer is then covered only by its two copies
    agreeing, and its column names by nothing."""
    try:
        with pq.ParquetFile(path, page_checksum_verification=True) as stored:
            schema = stored.read().schema  # every page against its checksum; the columns as read back
            parquet_copy = stored.metadata.metadata or {}
        # The footer keeps the metadata twice: Parquet's key-value copy, and the one in the serialised
        # Arrow schema beside it. pyarrow's readers differ in which they give: they must say the same.
        arrow = parquet_copy.get(b"ARROW:schema")
        metadata = (pa.ipc.read_schema(pa.py_buffer(base64.b64decode(arrow))).metadata or {}) if arrow else parquet_copy
    except (OSError, pa.ArrowException, ValueError) as exc:
        return None, {str(path): "missing" if isinstance(exc, FileNotFoundError) else "does not read back whole"}
    if _ours(metadata) != _ours(parquet_copy):
        return None, {str(path): "its footer's two copies of its metadata differ"}
    if SEAL_KEY in metadata and metadata[SEAL_KEY] != seal(metadata, schema):
        return None, {str(path): "its metadata (cell, summary, side-table hashes, columns) does not match its seal"}
    summary = _summary_of(metadata, cell_hash)
    if summary is None:
        return None, {str(path): "holds another cell (not its hash), or no summary"}
    try:
        tables = json.loads(metadata.get(TABLES_KEY, b"{}"))
    except ValueError:
        return None, {str(path): "its side-table hashes are not JSON"}
    for name, sha256 in tables.items():
        side = side_path(path, name)
        try:
            if file_digest(side) != sha256:
                return None, {side: "is not the side table its cell file was written with"}
        except OSError:
            return None, {side: "missing"}
    return summary, {}


def verified_summary(path: str | Path, cell_hash: str) -> dict[str, Any] | None:
    """`read_cell`'s summary: what a job block may keep. The file's pages are read once."""
    return read_cell(path, cell_hash)[0]
