"""A package of Triton helpers for the held-out kernels of heldout_a_nested.py: a
nested subpackage (``heldout_a_pkg.sub.act``) whose modules import each other
relatively."""
