"""What if: reproducer scripts, replays from a captured stage, pass ablation and the
autotune explorer. Each compiles through the capture layer (a child Triton process)
and writes ordinary captures, so every result can be opened, diffed and reported."""
