#!/bin/bash
# The instance labs on a Hopper card, carry ["build-d/plc.txz"] (README: how it is built):
# first the GPU tests of the timer and the lab (ReplicaTimer replays every instance in turn,
# memcheck clean), then aa-one.toml and aa-eight.toml twice, alternating, so that each
# setting's offsets can be seen to repeat or not. Writes $OUT/instances.tar.gz;
# MLALAB_CALL_SECONDS (default 570) bounds the call.
source scripts/session_steps.sh
begin_call instances plc || exit 1
tests=build-plc/tests/mlalab_gpu_tests
step gpu_tests timeout 120 "$tests" --gtest_filter='ReplicaTimer.*:RunnerGpu.*:WorkerGpu.*'
step memcheck timeout 60 compute-sanitizer --tool memcheck --error-exitcode 1 "$tests" \
  --gtest_filter='ReplicaTimer.*'
for run in 1 2; do
  for setting in one eight; do
    step "aa_${setting}_$run" timeout 150 build-plc/bin/mlalab ab \
      "docs/results/2026-12-08-instances/aa-$setting.toml" --out "$out/aa_${setting}_$run"
  done
done
python3 docs/results/2026-12-08-instances/offsets.py "$out"/aa_*/*/results.json \
  > "$out/offsets.md" 2>&1
cat "$out/offsets.md"
pack
exit $status
