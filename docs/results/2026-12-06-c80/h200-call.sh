#!/bin/bash
# Session 41's H200 call, everything that wants an H200 in one: version 55's races
# (run.sh races), the lab's heat with longer samples (../2026-12-06-heat-long/run.sh) and the
# combine's cost at 16 heads (../2026-12-06-combine/run.sh). Carry ["build-d/land55.txz",
# "build-d/pre55.txz", "build-d/heat.txz"]. Writes $OUT/c80.tar.gz, $OUT/heat-long.tar.gz and
# $OUT/combine.tar.gz; each part stops before the call's limit.
start=$(date +%s)
MLALAB_STOP_AT=$((start + 150)) bash docs/results/2026-12-06-c80/run.sh races
MLALAB_STOP_AT=$((start + 420)) bash docs/results/2026-12-06-heat-long/run.sh
MLALAB_STOP_AT=$((start + 570)) bash docs/results/2026-12-06-combine/run.sh
