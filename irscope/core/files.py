"""Plain IR files written without irscope: a ``.ttgir``, ``.llir``, ``.ptx``, a SASS
listing, or a whole per-pass dump stream (``MLIR_ENABLE_DUMP=1`` /
``LLVM_IR_ENABLE_DUMP=1`` output). The diff accepts these beside captures."""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from irscope.errors import IrscopeError
from irscope.ir import Module, ParseCache, parse_as, parse_pass
from irscope.compiler.stages import LLIR, MLIR, SASS, STAGES, for_extension

if TYPE_CHECKING:
    from irscope.compiler.passdump import PassSnapshot

DUMP = "dump"
"""The format name of a per-pass dump stream."""

# Names users give files, beyond the extensions Triton writes.
_EXTRA_EXTENSIONS = {".ll": LLIR, ".s": SASS, ".mlir": MLIR, ".txt": None, ".log": None}
FORMATS: tuple[str, ...] = (*[n for n, s in STAGES.items() if s.parsed and s.base is None], DUMP)
"""What ``--format`` accepts."""

_DUMP_MARKERS = ("// -----// IR Dump ", "*** IR Dump ")


def looks_like_dump(text: str) -> bool:
    """Whether ``text`` is a per-pass dump stream rather than one module."""
    return any(m in text for m in _DUMP_MARKERS)


def format_for(path: str, text: str | None = None, format: str | None = None) -> str:
    """The format of a file: ``format`` when given, else the one its extension names,
    else (text given) a dump stream when it holds dump headers. IrscopeError otherwise."""
    if format is not None:
        if format not in FORMATS:
            raise IrscopeError(f"unknown format {format!r}; known: {', '.join(FORMATS)}")
        return format
    if text is not None and looks_like_dump(text):
        return DUMP
    ext = os.path.splitext(path)[1].lower()
    info = for_extension(ext) if ext else None
    if info is not None:
        return info.name
    extra = _EXTRA_EXTENSIONS.get(ext)
    if extra:
        return extra
    raise IrscopeError(f"cannot tell the IR format of {path}: name it with --format ({', '.join(FORMATS)})")


@dataclass(eq=False)
class IRFile:
    """One IR text and its parse (on first use). For a dump stream, ``snapshots``
    lists its passes and ``module`` is the last snapshot's."""

    path: str
    format: str
    text: str
    _module: Module | None = field(default=None, repr=False)
    _snapshots: "list[PassSnapshot] | None" = field(default=None, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def snapshots(self) -> "list[PassSnapshot]":
        """The snapshots of a dump stream ([] for a single module)."""
        from irscope.compiler.passdump import split_pass_dump

        if self.format != DUMP:
            return []
        if self._snapshots is None:
            self._snapshots = list(split_pass_dump(self.text))
        return self._snapshots

    def snapshot_module(self, index: int, cache: ParseCache | None = None) -> Module:
        """Snapshot ``index`` of a dump stream, parsed."""
        snap = self.snapshots[index]
        return parse_pass(snap.family, snap.text, cache)

    @property
    def module(self) -> Module:
        """The parsed module (a dump's last snapshot)."""
        with self._lock:
            if self._module is None:
                if self.format == DUMP:
                    if not self.snapshots:
                        raise IrscopeError(f"{self.path}: no pass snapshot found in the dump")
                    self._module = self.snapshot_module(len(self.snapshots) - 1)
                else:
                    self._module = parse_as(self.format, self.text)
            return self._module


def parse_text(text: str, format: str, path: str = "<text>") -> IRFile:
    """An :class:`IRFile` for ``text`` in ``format`` (see :data:`FORMATS`)."""
    return IRFile(path, format_for(path, text, format), text)


def read_ir_file(path: str, format: str | None = None) -> IRFile:
    """Read and (lazily) parse an IR file; the format from ``format`` or the name.
    IrscopeError (one line) for a missing, unreadable or binary file."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except IsADirectoryError:
        raise IrscopeError(f"{path} is a directory, not an IR file") from None
    except OSError as exc:
        raise IrscopeError(f"cannot read {path}: {exc.strerror or exc}") from None
    if b"\x00" in data[:4096]:
        raise IrscopeError(f"{path} is a binary file, not IR text")
    text = data.decode("utf-8", "replace")
    return IRFile(path, format_for(path, text, format), text)
