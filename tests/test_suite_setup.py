"""What ``tests/conftest.py`` sets up for the whole session: difflab's modules compiled
once (the processes the tests start read them instead of compiling 260 modules each),
and bytecode writing back as Python was started (``-B``, ``PYTHONDONTWRITEBYTECODE``)
once the tests run."""

import importlib.util
import sys
from pathlib import Path

import difflab


def test_every_difflab_module_has_its_compiled_file_up_to_date():
    stale = []
    for source in sorted(Path(difflab.__file__).parent.rglob("*.py")):
        compiled = Path(importlib.util.cache_from_source(str(source)))
        if not compiled.is_file():
            stale.append(f"{source}: none")
            continue
        header = compiled.read_bytes()[:16]  # magic, flags, then the source's mtime and size
        stat = source.stat()
        by_hash = int.from_bytes(header[4:8], "little") != 0  # (SOURCE_DATE_EPOCH set)
        if header[:4] != importlib.util.MAGIC_NUMBER or not by_hash and (
                int.from_bytes(header[8:12], "little") != int(stat.st_mtime) & 0xFFFFFFFF
                or int.from_bytes(header[12:16], "little") != stat.st_size & 0xFFFFFFFF):
            stale.append(f"{source}: out of date")
    assert not stale, "\n".join(stale)


def test_bytecode_writing_is_as_python_was_started_while_tests_run():
    # (switched on for the collection only: a module a test writes and imports is not cached)
    assert sys.dont_write_bytecode == bool(sys.flags.dont_write_bytecode)
