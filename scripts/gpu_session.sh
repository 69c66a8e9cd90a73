#!/usr/bin/env bash
# Everything issue 2 measures on a GPU, in one run (a device machine start costs minutes):
# the GPU correctness sweep, compute-sanitizer on a representative subset, the variant table,
# and the benchmarks behind the targets. Writes logs and JSON under OUT_DIR.
#
#   scripts/gpu_session.sh BUILD_DIR OUT_DIR [stage ...]
# stages: info configs bench tests sanitize (default: all, in that order: the figures first,
# then the slow sanitizer runs)
set -uo pipefail
build=${1:?build dir}
out=${2:?output dir}
shift 2
stages=("$@")
[ ${#stages[@]} -eq 0 ] && stages=(info configs bench tests sanitize)
mkdir -p "$out"
mlalab="$build/bin/mlalab"
gpu_tests="$build/tests/mlalab_gpu_tests"
status=0

run() {  # run NAME CMD...: tee the output to OUT_DIR/NAME.log, remember failures
  local name=$1
  shift
  echo "=== $name: $*"
  "$@" 2>&1 | tee "$out/$name.log"
  local rc=${PIPESTATUS[0]}
  [ "$rc" -ne 0 ] && { echo "=== $name failed with exit status $rc"; status=1; }
  return 0
}

for stage in "${stages[@]}"; do
  case "$stage" in
    info)
      run info bash -c "date -u; git rev-parse --short=12 HEAD 2>/dev/null; nvidia-smi; \
        nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,driver_version --format=csv"
      ;;
    tests)
      run gpu_tests "$gpu_tests" --gtest_brief=0
      ;;
    sanitize)
      # A representative subset: the study's variant and a large-tile one, split and unsplit.
      export MLALAB_TEST_VARIANTS='^(h16_t16_w4_s2|h64_t32_w8_s2)$'
      filter='Layouts/PortableSweep.*:PortableValidation.*'
      run memcheck compute-sanitizer --tool memcheck --error-exitcode 1 "$gpu_tests" --gtest_filter="$filter"
      run racecheck compute-sanitizer --tool racecheck --error-exitcode 1 "$gpu_tests" --gtest_filter="$filter"
      unset MLALAB_TEST_VARIANTS
      ;;
    configs)
      run configs "$mlalab" configs --json "$out/configs.json"
      run configs_sm120 "$mlalab" configs --smem-limit 101376
      ;;
    bench)
      run bench_h16 "$mlalab" bench --heads 16 --batch 1,64 --context 4096 --variant all --json "$out/bench_h16.json"
      run bench_h16_long "$mlalab" bench --heads 16 --batch 1 --context 16384 --variant all --json "$out/bench_h16_long.json"
      run bench_page1 "$mlalab" bench --heads 16 --batch 1,64 --context 4096 --page-size 1 --variant all --json "$out/bench_page1.json"
      run bench_h128 "$mlalab" bench --heads 128 --batch 64 --context 4096 --variant all --json "$out/bench_h128.json"
      run bench_study "$mlalab" bench --heads 16 --batch 1,8,16,32,64,128 --context 4096 \
        --variant h16_t16_w4_s2 --split target_ctas:512 --json "$out/bench_study.json"
      ;;
    *) echo "unknown stage $stage"; status=1 ;;
  esac
done
exit $status
