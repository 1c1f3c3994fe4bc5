"""Every ```python block of README.md and docs/*.md runs, as written, against tests/data.

The documents name files as a user would ("mm.irscope", "dump/add_kernel.ttgir").
Each block runs in its own namespace, in a fresh temporary folder where those
names are symbolic links to checked-in captures and IR files (``DOC_FILES`` below):

- ``mm.irscope``, ``my.irscope``: tests/data/samples_sm90.irscope (add_kernel,
  four matmul_kernel variants, bias_gelu_rowsum_kernel; Triton 3.6, sm_90);
- ``a.irscope``, ``b.irscope``: tests/data/vector_add_exact.irscope and
  tests/data/h200_torch_compile.irscope;
- ``profiled.irscope``: tests/data/h200_run_profile.irscope (softmax_kernel with three
  H200 profiles attached, #2 to #4);
- ``dump/add_kernel.<stage>``, ``mlir_passes.txt``, ``kernel.txt``: the Triton 3.6
  add_kernel files of tests/data/ir/3.6.0/add_sm90 (``kernel.txt`` is its LLVM IR).

A block that needs another file fails here: add the name to ``DOC_FILES``, or name
one of the files above in the document. Bash blocks are not run.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from conftest import DATA, ROOT

ADD = DATA / "ir" / "3.6.0" / "add_sm90"

# The name a document uses -> the checked-in file it stands for.
DOC_FILES: dict[str, Path] = {
    "mm.irscope": DATA / "samples_sm90.irscope",
    "my.irscope": DATA / "samples_sm90.irscope",
    "a.irscope": DATA / "vector_add_exact.irscope",
    "b.irscope": DATA / "h200_torch_compile.irscope",
    "profiled.irscope": DATA / "h200_run_profile.irscope",
    "mlir_passes.txt": ADD / "mlir_passes.txt",
    "kernel.txt": ADD / "add_kernel.llir",
    **{f"dump/add_kernel.{ext}": ADD / f"add_kernel.{ext}" for ext in ("ttir", "ttgir", "llir", "ptx", "sass")},
}

DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

_FENCE = re.compile(r"^```(\w*)\s*$")


@dataclass(frozen=True)
class Block:
    """One fenced python block: where it is, and its text."""

    document: Path
    line: int
    """1-based line of the block's first code line."""
    code: str

    @property
    def name(self) -> str:
        return f"{self.document.relative_to(ROOT)}:{self.line}"


def python_blocks(document: Path) -> list[Block]:
    """The ```python blocks of one Markdown file, in order."""
    blocks: list[Block] = []
    lines = document.read_text().splitlines()
    i = 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if m is None:
            i += 1
            continue
        end = i + 1
        while end < len(lines) and lines[end].rstrip() != "```":
            end += 1
        if m.group(1) == "python":
            blocks.append(Block(document, i + 2, "\n".join(lines[i + 1:end]) + "\n"))
        i = end + 1
    return blocks


BLOCKS = [b for d in DOCUMENTS for b in python_blocks(d)]


def test_the_documents_hold_the_examples_this_test_runs():
    # Were the fence parsing to break, every example would silently stop running.
    by_doc = {b.document.name for b in BLOCKS}
    assert {"README.md", "python-api.md"} <= by_doc
    assert sum(b.document.name == "python-api.md" for b in BLOCKS) >= 3
    for name, target in DOC_FILES.items():
        assert target.is_file(), f"{name} stands for {target}, which is missing"


@pytest.mark.parametrize("block", BLOCKS, ids=[b.name for b in BLOCKS])
def test_python_block_runs(block: Block, tmp_path, monkeypatch, capsys):
    for name, target in DOC_FILES.items():
        link = tmp_path / name
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(target)
    monkeypatch.chdir(tmp_path)
    # Compiled with the document's name and line numbers shifted, so a failure's traceback
    # points at the document line.
    code = compile("\n" * (block.line - 1) + block.code, str(block.document), "exec")
    exec(code, {"__name__": "__doc_example__"})
