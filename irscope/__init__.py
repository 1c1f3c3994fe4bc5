"""irscope: see what the Triton compiler does to your kernel.

The public API (``import irscope``) is the core's (:mod:`irscope.core`):
``irscope.open(path)`` opens a bundle, ``irscope.read_ir_file(path)`` reads an IR
file written without irscope. Names load on first use, so ``import irscope`` stays
cheap for the command line.

Layers (data flows one way; lower layers never import upper ones):
vocab -> store -> ir -> link -> core -> diff -> views (cli, tui, export);
capture sits beside the views: it writes bundles and nothing reads through it.
"""

__version__ = "0.1.0"

_CORE = ("Bundle", "Capture", "CaptureSummary", "Target", "Variant", "ErasedOps", "FORMATS", "IRFile", "Occupancy", "OpLinks", "OpOrigin", "Pass",
         "PassRef", "Resources", "Run", "Source", "Stage", "StageOrigins", "parse_text", "read_ir_file")
__all__ = ["open", "__version__", *_CORE]


def open(path: str):  # noqa: A001  (irscope.open, like io.open, is the natural name)
    """Open the bundle at ``path`` for reading: an :class:`irscope.core.Bundle`."""
    from irscope.core import open_bundle

    return open_bundle(path)


def __getattr__(name: str):
    if name in _CORE:
        import irscope.core as core

        return getattr(core, name)
    raise AttributeError(f"module 'irscope' has no attribute {name!r}")
