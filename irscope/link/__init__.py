"""Op-to-op links between the stages of one capture (what each op became), and
pass provenance (:mod:`.provenance`).

Pure functions over parsed modules (:mod:`irscope.ir`); reading a bundle is the
core's job. Links join *adjacent* stages; a query composes them along the pipeline.

How two ops are tied, strongest first (``kind``):

``same-op``
    TTIR -> TTGIR: the same full location chain (every frame compared by file base
    name, line and column) and the same op, or a known rename (:data:`RENAMES`).
``exact``
    TTGIR -> LLIR/PTX from an ``--exact-links`` capture: the ``llir_ttgirloc`` /
    ``ptx_ttgirloc`` stages were compiled with ``USE_IR_LOC=ttgir``, so their debug
    lines are line numbers of the TTGIR stage text: each instruction names the one
    TTGIR op it was lowered from. The normal ``llir``/``ptx`` get the same links where
    their instructions equal the ``_ttgirloc`` ones (see :func:`align_ttgirloc`).
``derived``
    TTIR -> TTGIR: an op TTGIR passes added (``ttg.convert_layout``,
    ``ttg.local_alloc``...) at a location TTIR ops have: it links to all of them.
``same-location``
    Same full location chain, different op (or, from TTGIR down, any instruction at
    that chain). LLIR -> PTX and LLIR -> AMDGCN are tied this way: PTX's debug lines
    and AMDGCN's ``.loc`` lines (with the printer's inlined-at comment) carry the
    whole chain. Precision is one Python *location*: every op of one Python
    expression (``x_ptr + offsets`` gives a splat and an addptr) shares it.
``same-line``
    Anything <-> SASS: ``nvdisasm`` gives only the innermost file and line (no
    column, no inlined-at chain), so SASS ties at one Python *line*, and an op inlined
    from a helper ties to every use of that helper line.

A composed link has the weakest kind along its path.
"""

# Submodules load on first use (``irscope.ir.python_lines`` alone serves "the ops of a
# line"; building links needs the rest).
_EXPORTS = {
    "LocationGroup": "by_location", "link_by_location": "by_location", "location_group": "by_location",
    "align_ttgirloc": "exact", "link_exact": "exact", "normalise_instruction": "exact", "ttgir_lines": "exact",
    "CaptureLinks": "graph", "LinkList": "graph", "build_links": "graph",
    "chain_key": "keys", "line_key": "keys", "units": "keys",
    "EXACT_STAGES": "model", "KIND_RANK": "model", "PIPELINE": "model", "ExactReport": "model",
    "LinkedOp": "model", "StageLink": "model",
    "RENAMES": "ttir_ttgir", "link_ttir_ttgir": "ttir_ttgir",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    if name in _EXPORTS:
        import importlib

        return getattr(importlib.import_module(f"irscope.link.{_EXPORTS[name]}"), name)
    raise AttributeError(f"module 'irscope.link' has no attribute {name!r}")
