#!/bin/bash
# Session 41's H200 call: version 55's races (run.sh races), then the combine's cost at 16 heads
# (../2026-12-06-combine/run.sh), one build for both. (The heat with longer samples,
# ../2026-12-06-heat-long/, would need build-d/heat.txz too: with the tree, over the carry
# limit.) Carry ["build-d/land55.txz", "build-d/pre55.txz"]. Writes $OUT/c80.tar.gz and
# $OUT/combine.tar.gz; each part stops before the call's limit.
start=$(date +%s)
MLALAB_STOP_AT=$((start + 200)) bash docs/results/2026-12-06-c80/run.sh races
MLALAB_STOP_AT=$((start + 400)) bash docs/results/2026-12-06-combine/run.sh
