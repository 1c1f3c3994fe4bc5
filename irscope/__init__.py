"""irscope: see what the Triton compiler does to your kernel.

Layers (data flows one way; lower layers never import upper ones):
capture -> store -> ir -> link -> cli/tui/export.
"""

__version__ = "0.1.0"
