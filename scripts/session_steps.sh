#!/usr/bin/env bash
# The steps of a device call, sourced by scripts/gpu_session.sh and by a results folder's own
# call scripts (docs/results/*/run*.sh), which run steps of their own (a device call is
# killed at its limit with everything in it, so every step is bounded by MLALAB_STOP_AT and
# the archive is packed again as steps finish). Before the first step, set `out` (the folder
# each step's log goes to) and `archive` (the .tar.gz that holds it), or call session_folder;
# `status` becomes 1 when a step fails or is skipped.
status=${status:-0}

pack() {  # the archive, replaced whole, so a kill while packing leaves the last one
  tar czf "$archive.partial" -C "$(dirname "$out")" "$(basename "$out")" &&
    mv "$archive.partial" "$archive"
}

run() {  # run NAME CMD...: the output to $out/NAME.log (its tail shown), remember failures
  local name=$1
  shift
  local limit=()
  if [ -n "${MLALAB_STOP_AT:-}" ]; then
    local left=$((MLALAB_STOP_AT - $(date +%s)))
    if [ "$left" -le 0 ]; then
      echo "=== $name skipped: MLALAB_STOP_AT has passed"
      echo "$name" >> "$out/skipped.txt"
      status=1
      return 0
    fi
    # --foreground: the step alone gets SIGTERM, once (a lab's second SIGTERM would mean
    # "exit at once, write nothing"); --preserve-status: its own exit status, not 124.
    limit=(timeout --foreground --preserve-status --kill-after=20 "$left")
  fi
  echo "=== $name: $*"
  "${limit[@]}" "$@" > "$out/$name.log" 2>&1
  local rc=$?
  tail -n 25 "$out/$name.log"
  [ "$rc" -ne 0 ] && { echo "=== $name failed with exit status $rc"; status=1; }
  return 0
}

step() {  # step NAME CMD...: run, then pack (for call scripts whose every step is a stage)
  run "$@"
  pack
}

# session_folder NAME: the steps' logs into /tmp/mlalab-session/NAME, packed as $OUT/NAME.tar.gz
session_folder() {
  out=/tmp/mlalab-session/$1
  archive="$OUT/$1.tar.gz"
  mkdir -p "$out"
}

# unpack_builds NAME...: each build-d/NAME.txz (scripts/pack_build.sh) into build-NAME, once
unpack_builds() {
  local name
  for name in "$@"; do
    [ -x "build-$name/bin/mlalab" ] && continue
    mkdir -p "build-$name" && tar -xJf "build-d/$name.txz" -C "build-$name" || return 1
  done
}

# change_checks BUILD SWEPT MEMCHECKED SYNCCHECKED: a kernel change's correctness, three steps
# on BUILD's GPU tests: the decode sweep of the SWEPT variants (a regex: every case and split
# policy, both layouts), then memcheck of the MEMCHECKED and synccheck of the SYNCCHECKED ones
# on the cases that reach the launches' edges: fixed:2 (a split pair per sequence) among their
# policies, a sequence longer than the rest, and 17 heads (rows past the last head).
change_checks() {
  local tests="$1/tests/mlalab_gpu_tests"
  local cases='^(b3_h64_p64|b3_h128_long_p64|b3_h17_p16)$'
  step gpu_tests timeout 150 env MLALAB_TEST_VARIANTS="$2" "$tests" \
    --gtest_filter='Layouts/DecodeSweep.*:DecodeValidation.*:DispatcherCapture.*'
  step memcheck env MLALAB_TEST_VARIANTS="$3" MLALAB_TEST_CASES="$cases" timeout 100 \
    compute-sanitizer --tool memcheck --error-exitcode 1 "$tests" \
    --gtest_filter='Layouts/DecodeSweep.*'
  step synccheck env MLALAB_TEST_VARIANTS="$4" MLALAB_TEST_CASES="$cases" timeout 80 \
    compute-sanitizer --tool synccheck --error-exitcode 1 "$tests" \
    --gtest_filter='Layouts/DecodeSweep.*'
}

# on_h200: whether this machine's GPU is an H200 (the tables and targets are that card's; a call
# for one may be given an H100). Says which card it is when it is not.
on_h200() {
  local gpu
  gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1)
  [[ $gpu == *H200* ]] && return 0
  echo "not an H200: ${gpu:-no GPU}" >&2
  return 1
}

# lab_decision LAB CONCURRENCY: the landing rule written before a lab (scripts/lab_decision.py)
# on the newest results under $out/LAB, its gain needed at CONCURRENCY; 0 when it lands. The
# verdict goes to $out/decision_LAB.log too.
lab_decision() {
  local results
  results=$(ls -d "$out/$1"/*/ 2>/dev/null | tail -n 1)results.json
  python3 scripts/lab_decision.py "$results" --gain-at "$2" > "$out/decision_$1.log" 2>&1
  local rc=$?
  cat "$out/decision_$1.log"
  return $rc
}

# info_step [BUILD...]: the call's first step: when, which commit (the tree's, and each
# build-BUILD's own, which may differ: builds are carried), which GPU at which clocks
info_step() {
  local build versions=""
  for build in "$@"; do versions+="echo build-$build: \$(build-$build/bin/mlalab --version); "; done
  step info bash -c "date -u; echo tree: \$(git rev-parse --short=12 HEAD); ${versions}\
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,power.limit,driver_version \
--format=csv"
}

# begin_call NAME BUILD...: a results folder's device call starts: every step bounded by the
# call's limit (MLALAB_CALL_SECONDS, default 570 of the tool's 600), logs in NAME's folder,
# each carried build-d/BUILD.txz unpacked, then info_step. Fails when a build is missing.
begin_call() {
  export MLALAB_STOP_AT=$(( $(date +%s) + ${MLALAB_CALL_SECONDS:-570} ))
  session_folder "$1"
  shift
  unpack_builds "$@" || return 1
  info_step "$@"
}

# sustained_clocks BUILD [NAME]: nvidia-smi's SM clock, power and throttle reasons every 50 ms
# (to $out/NAME.csv; NAME defaults to sustained, the step's name too) while BUILD's mlalab runs
# 128 heads, batch 64 and 16 heads, batch 128 (context 4,096, the 64-token variants) for ~7 s
# each: whether a load runs at the power cap, and at what clock, where the bench's and the
# lab's short bursts would not show it
sustained_clocks() {
  local name=${2:-sustained}
  step "$name" bash -c "out='$out'; $(declare -f sustained_loads); sustained_loads '$1' '$name'"
}

sustained_loads() {
  nvidia-smi --format=csv -lms 50 --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,\
temperature.gpu,clocks_event_reasons.active > "$out/$2.csv" 2>&1 &
  local smi=$! case name heads batch variant runs
  for case in "h128_b64 128 64 wgmma_h64_t64_w8_s2 50000" \
              "h16_b128 16 128 wgmma_h16_t64_w4_s2 40000"; do
    read -r name heads batch variant runs <<< "$case"
    echo "$(date -u +%H:%M:%S.%N) start $name"
    "$1/bin/mlalab" bench --heads "$heads" --batch "$batch" --context 4096 \
      --variant "$variant" --runs "$runs"
    echo "$(date -u +%H:%M:%S.%N) end $name"
  done
  kill "$smi"
}
