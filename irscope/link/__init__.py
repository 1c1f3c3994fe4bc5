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
    that chain). Precision is one Python *location*: every op of one Python
    expression (``x_ptr + offsets`` gives a splat and an addptr) shares it.
``same-line``
    Anything <-> SASS: ``nvdisasm`` gives only the innermost file and line (no
    column, no inlined-at chain), so SASS ties at one Python *line*, and an op inlined
    from a helper ties to every use of that helper line.

A composed link has the weakest kind along its path.
"""

from .by_location import LocationGroup, link_by_location, location_group
from .exact import align_ttgirloc, link_exact, normalise_instruction, ttgir_lines
from .graph import CaptureLinks, LinkList, build_links
from .keys import chain_key, line_key, units
from .model import EXACT_STAGES, KIND_RANK, PIPELINE, ExactReport, LinkedOp, StageLink
from .ttir_ttgir import RENAMES, link_ttir_ttgir

__all__ = ["CaptureLinks", "EXACT_STAGES", "ExactReport", "KIND_RANK", "LinkList", "LinkedOp", "LocationGroup",
           "PIPELINE", "RENAMES", "StageLink", "align_ttgirloc", "build_links", "chain_key", "line_key",
           "link_by_location", "link_exact", "link_ttir_ttgir", "location_group", "normalise_instruction",
           "ttgir_lines", "units"]
