#!/usr/bin/env bash
# Everything the issues measure on a GPU, in one run (a device machine start costs minutes):
# the GPU correctness sweep, compute-sanitizer on a representative subset, the variant table,
# the benchmarks behind the kernel targets, and the A/B experiments. Logs and JSON go to
# OUT_DIR; the whole folder is also packed into OUT_DIR.tar.gz (the device tool returns at
# most 8 files).
#
#   scripts/gpu_session.sh BUILD_DIR OUT_DIR [stage ...]
# stages: info configs tests bench sanitize ab tune tune_mixed targets python triton peers stalls
# (default: the first six, in that order: the figures first, the slow sanitizer and the long A/B
# runs last).
# tune re-tunes, --fresh, the two equal-length tables of docs/results/2026-12-01-h200-tuning/
# (V4 H = 16 and V3 H = 128, context 4,096) into OUT_DIR: after any kernel change their code
# hashes differ from the build's and a Dispatcher refuses them, so a full build's session
# should run it; installing the new tables there is a copy, after reading the logs.
# tune_mixed re-tunes the two mixed-length tables of docs/results/2026-12-01-h200-mixed-tuning/
# (V3, H = 128 and 16, batch 8 / 64 / 128, context 8,192, lengths uniform in 1,024-8,192) the
# same way: a kernel change makes them stale too.
# targets runs bench/targets/hopper_targets.py (issue 12's targets, judged: OUT_DIR/targets/;
# after peers, or with an earlier peer table as MLALAB_PEERS_JSON, the peer table's target too;
# MLALAB_TARGETS_VARIANTS: its --variants);
# python installs the Python package into the machine's Python (pip --no-build-isolation,
# MLALAB_VARIANTS / MLALAB_CUDA_ARCHS as for pip) and runs python/tests; triton (after python)
# runs experiments/python-path.toml (the Python path against the kernel path, one kernel) and
# experiments/triton-occupancy.toml, whose Triton arms are Python arms of that Python; peers
# (after python) runs bench/peers/peer_table.py, whose peers must be importable (FlashInfer:
# carry its wheel); stalls samples where the decode kernel's warps wait, per source line
# (Nsight Compute, three shapes with the variants the tuning tables give them).
# Environment: MLALAB_BENCH_VARIANTS (comma list or 'all', default all), MLALAB_AB_MINUTES
# (per experiment, default: the file's max_minutes), MLALAB_PEERS_ARGS (peer_table.py's);
# for a change's own check (tests, sanitize and ab of the variants it touches, against a
# baseline build its experiments name): MLALAB_TEST_VARIANTS / MLALAB_TEST_CASES (read by the
# GPU tests themselves), MLALAB_SANITIZE_VARIANTS and MLALAB_SANITIZE_CASES (memcheck's, default
# the subset below and every case), MLALAB_RACECHECK_VARIANTS, MLALAB_SYNCCHECK_VARIANTS, and
# MLALAB_AB_EXPERIMENTS (space-separated toml files, default the two below). Binaries built
# elsewhere travel as scripts/pack_build.sh packs them.
# MLALAB_STOP_AT (seconds since the epoch, e.g. $(( $(date +%s) + 540 )) for a call limited to
# 600 s): no step starts after it, and a step still running then gets SIGTERM (a lab writes what
# it measured, marked partial). The device tool kills a call at its limit with everything in
# it, so OUT_DIR.tar.gz is packed again after every stage: a call stopped mid-stage still
# returns the stages before it. Steps skipped for the stop time are listed in OUT_DIR/skipped.txt.
# MLALAB_ARCHIVE_DIR: where OUT_DIR.tar.gz goes (default: beside OUT_DIR). The device tool
# returns at most 8 files of its $OUT, so a call keeps OUT_DIR elsewhere and the archive there.
set -uo pipefail
build=${1:?build dir}
out=${2:?output dir}
shift 2
stages=("$@")
[ ${#stages[@]} -eq 0 ] && stages=(info configs tests bench sanitize ab)
if [ -n "${MLALAB_STOP_AT:-}" ] && ! [[ $MLALAB_STOP_AT =~ ^[0-9]+$ ]]; then
  echo "MLALAB_STOP_AT=$MLALAB_STOP_AT: seconds since the epoch, a whole number" >&2
  exit 2
fi
mkdir -p "$out"
mlalab="$build/bin/mlalab"
gpu_tests="$build/tests/mlalab_gpu_tests"
variants="${MLALAB_BENCH_VARIANTS:-all}"
status=0

archive="${MLALAB_ARCHIVE_DIR:-$(dirname "$out")}/$(basename "$out").tar.gz"
mkdir -p "$(dirname "$archive")"
# pack and run (session_steps.sh): steps under MLALAB_STOP_AT, logs in $out, $archive.
source "$(dirname "${BASH_SOURCE[0]}")/session_steps.sh"

for stage in "${stages[@]}"; do
  case "$stage" in
    info)
      run info bash -c "date -u; git rev-parse --short=12 HEAD 2>/dev/null; nvidia-smi; \
        nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,driver_version --format=csv"
      ;;
    configs)
      run configs "$mlalab" configs --json "$out/configs.json"
      run configs_sm120 "$mlalab" configs --smem-limit 101376
      ;;
    tests)
      run gpu_tests "$gpu_tests"
      ;;
    bench)
      run bench_h16 "$mlalab" bench --heads 16 --batch 1,64 --context 4096 --variant "$variants" --json "$out/bench_h16.json"
      run bench_h16_long "$mlalab" bench --heads 16 --batch 1 --context 16384 --variant "$variants" --json "$out/bench_h16_long.json"
      run bench_page1 "$mlalab" bench --heads 16 --batch 1,64 --context 4096 --page-size 1 --variant "$variants" --json "$out/bench_page1.json"
      run bench_h128 "$mlalab" bench --heads 128 --batch 64 --context 4096 --variant "$variants" --json "$out/bench_h128.json"
      run bench_study "$mlalab" bench --heads 16 --batch 1,8,16,32,64,128 --context 4096 \
        --variant h16_t16_w4_s2 --split target_ctas:512 --json "$out/bench_study.json"
      ;;
    sanitize)
      # A representative subset: the study's variant, a large-tile one and the wgmma family's
      # two schedules and its swapped kernel, every case of both layouts under memcheck; racecheck and synccheck (far
      # slower) on three small cases that still cover splits, masking and page sizes.
      # racecheck leaves out the 64-head wgmma kernels (the seesaw, t32, and the pair order,
      # t64, since version 42): it does not model bar.arrive -> bar.sync and reports the
      # hand-off's buffers, which that pair orders (PTX memory model), and the split pairs'
      # remote stores, which cluster-scope mbarriers order; with the giver syncing too it
      # reports nothing (docs/results/2026-12-02-h200-handoff/; the pair order's 936 reports,
      # all of those two kinds: docs/results/2026-12-04-h200-v44/full-build/racecheck_t64.log).
      sanitized_variants=${MLALAB_SANITIZE_VARIANTS:-'^(h16_t16_w4_s2|h64_t32_w8_s2|wgmma_h64_t32_w8_s4|wgmma_h64_t64_w8_s2|wgmma_h16_t64_w4_s2)$'}
      racechecked_variants=${MLALAB_RACECHECK_VARIANTS:-'^(h16_t16_w4_s2|h64_t32_w8_s2|wgmma_h16_t64_w4_s2)$'}
      synccheck_variants=${MLALAB_SYNCCHECK_VARIANTS:-'^wgmma_h64_t(32|64)_w8_s[24]$'}
      small_cases='^(one_token_b1_h1_p1|b3_h64_p64|b3_h17_p16)$'
      memcheck_env=(MLALAB_TEST_VARIANTS="$sanitized_variants")
      [ -n "${MLALAB_SANITIZE_CASES:-}" ] && memcheck_env+=(MLALAB_TEST_CASES="$MLALAB_SANITIZE_CASES")
      run memcheck env "${memcheck_env[@]}" \
        compute-sanitizer --tool memcheck --error-exitcode 1 "$gpu_tests" \
        --gtest_filter='Layouts/DecodeSweep.*:DecodeValidation.*'
      run racecheck_subset env MLALAB_TEST_VARIANTS="$racechecked_variants" \
        MLALAB_TEST_CASES="$small_cases" timeout 300 \
        compute-sanitizer --tool racecheck --error-exitcode 1 "$gpu_tests" \
        --gtest_filter='Layouts/DecodeSweep.*'
      run synccheck_subset env MLALAB_TEST_VARIANTS="$synccheck_variants" \
        MLALAB_TEST_CASES="$small_cases" timeout 120 \
        compute-sanitizer --tool synccheck --error-exitcode 1 "$gpu_tests" \
        --gtest_filter='Layouts/DecodeSweep.*'
      ;;
    ab)
      # Each experiment, then `mlalab verify` of the fingerprint it just wrote (same machine,
      # same build: must say verified).
      read -r -a experiments <<< "${MLALAB_AB_EXPERIMENTS:-experiments/occupancy.toml experiments/target-ctas.toml}"
      for experiment in "${experiments[@]}"; do
        name=$(basename "$experiment" .toml)
        run "ab_$name" "$mlalab" ab "$experiment" --out "$out/ab" \
          ${MLALAB_AB_MINUTES:+--max-minutes "$MLALAB_AB_MINUTES"}
        fingerprint=$(ls -d "$out/ab/$name"-*/ 2>/dev/null | tail -n 1)fingerprint.json
        run "verify_$name" "$mlalab" verify "$fingerprint" --experiment "$experiment"
      done
      ;;
    tune)
      run tune_v4_h16 "$mlalab" tune --layout v4 --heads 16 \
        --batch 1,2,4,8,16,32,48,64,80,96,112,128 --context 4096 --fresh \
        --out "$out/tuning-v4-h16-p64.json"
      run tune_v3_h128 "$mlalab" tune --layout v3 --heads 128 \
        --batch 1,8,16,32,48,64,80,96,128 --context 4096 --fresh \
        --out "$out/tuning-v3-h128-p64.json"
      ;;
    tune_mixed)
      for heads in 128 16; do
        run "tune_mixed_h$heads" "$mlalab" tune --layout v3 --heads "$heads" \
          --batch 8,64,128 --context 8192 --lengths uniform:0.125 --fresh \
          --out "$out/tuning-v3-h$heads-p64-mixed.json"
      done
      ;;
    targets)
      run targets python3 bench/targets/hopper_targets.py --mlalab "$mlalab" --out "$out/targets" \
        --peers "${MLALAB_PEERS_JSON:-$out/peers.json}" \
        ${MLALAB_TARGETS_VARIANTS:+--variants "$MLALAB_TARGETS_VARIANTS"}
      ;;
    python)
      run python_install python3 -m pip install --no-build-isolation --no-index .
      run python_tests bash -c "cd python/tests && python3 -m pytest -q -rs \
        --junitxml='$(realpath -m "$out")/python.xml' ."
      ;;
    triton)
      for experiment in experiments/python-path.toml experiments/triton-occupancy.toml; do
        name=$(basename "$experiment" .toml)
        run "ab_$name" env MLALAB_PYTHON=python3 "$mlalab" ab "$experiment" --out "$out/ab" \
          ${MLALAB_AB_MINUTES:+--max-minutes "$MLALAB_AB_MINUTES"}
      done
      ;;
    peers)
      # shellcheck disable=SC2086  # MLALAB_PEERS_ARGS is a list of arguments
      run peers python3 bench/peers/peer_table.py --json "$out/peers.json" \
        --markdown "$out/peers.md" ${MLALAB_PEERS_ARGS:-}
      ;;
    stalls)
      # Where the decode kernel's warps wait, per source line: Nsight Compute's warp-state
      # sampling (the build has -lineinfo) at the GPU's own clocks, for the shapes whose
      # targets are furthest, each with the variant the committed tables serve it with
      # (docs/results/2026-12-01-h200-tuning/): 128 heads at batch 64, 16 heads at batch 64
      # and at batch 8, 4,096 tokens. The report itself stays out of the archive (size); its
      # source page comes back as CSV (per CUDA line, the SASS under it) and as the lines that
      # hold the most samples (scripts/ncu_stall_lines.py).
      # -lineinfo records the source paths of the machine that built the binary: where ncu
      # can be told to look for them elsewhere, this checkout's files are the same.
      source_folders=()
      # (grep reads all of the help: -q would stop early and SIGPIPE fail the pipeline.)
      ncu --help 2>/dev/null | grep -- '--source-folders' > /dev/null &&
        source_folders=(--source-folders "$PWD")
      for case in "h128_b64 128 64 wgmma_h64_t64_w8_s2" "h16_b64 16 64 wgmma_h64_t32_w8_s4" \
                  "h16_b8 16 8 wgmma_h16_t64_w4_s2"; do
        read -r name heads batch variant <<< "$case"
        report="$out.ncu/stalls_$name"
        mkdir -p "$out.ncu"
        run "stalls_$name" ncu --clock-control none --kernel-name regex:decode_kernel \
          --launch-skip 3 --launch-count 1 --section WarpStateStats --section SourceCounters \
          --section SpeedOfLight --import-source yes "${source_folders[@]}" -f -o "$report" \
          "$mlalab" bench --heads "$heads" --batch "$batch" --context 4096 --variant "$variant"
        run "stalls_${name}_details" ncu -i "$report.ncu-rep" --page details
        run "stalls_${name}_source" ncu -i "$report.ncu-rep" --page source --csv \
          --print-source cuda,sass
        run "stalls_${name}_lines" python3 scripts/ncu_stall_lines.py \
          "$out/stalls_${name}_source.log"
      done
      ;;
    *) echo "unknown stage $stage"; status=1 ;;
  esac
  pack
done
pack
exit $status
