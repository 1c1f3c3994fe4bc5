"""Module-level values the held-out kernels of heldout_a_annot.py import by name
(``from heldout_a_consts import BLOCK, SCALE``): another module's globals."""
import triton.language as tl

BLOCK = tl.constexpr(256)
SCALE = tl.constexpr(0.5)
ACC_DTYPE = tl.float32
USE_EXP2 = True
