"""Compare: a structural IR diff robust to SSA renaming, and the capture-level deltas
(metadata, resources, instruction mix, pass pipeline, per-Python-line counts).

Pure functions over the core's model (:mod:`irscope.core`, :mod:`irscope.ir`);
the views (``irscope diff``, the TUI's diff screen) render what they return.
"""
