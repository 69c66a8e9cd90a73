#!/bin/bash
# Landing version 55's first half alone (b96a: Sᵀ on the first piece, P·V as one group and the
# tile freed whole), if halves-v4.toml and halves-v3.toml say so on the H200 (README.md):
#   bash docs/results/2026-12-06-b96/land.sh tune     (the H200: both tables, the targets)
#   bash docs/results/2026-12-06-b96/land.sh checks   (any Hopper card: GPU tests, sanitizers)
# with carry ["build-d/fa.txz"]: the full build of a worktree of main 096a8eb with b96a's edit
# (scripts/land_kernel_change.sh says how it is made). Writes $OUT/fa-STAGE.tar.gz.
exec bash scripts/land_kernel_change.sh fa "${1:?tune or checks}"
