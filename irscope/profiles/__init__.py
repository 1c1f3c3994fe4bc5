"""GPU profiles as the profilers write them: Nsight Compute source exports and
Proton PC-sampling trees, parsed into plain records (pure functions, standard
library only). Charging them to a capture's ops and lines is the core's job
(:mod:`irscope.core.profile`)."""
