#!/usr/bin/env bash
# The steps of a device call, sourced by scripts/gpu_session.sh and by a results folder's own
# call scripts (docs/results/*/run*.sh), which run steps of their own (a device call is
# killed at its limit with everything in it, so every step is bounded by MLALAB_STOP_AT and
# the archive is packed again as steps finish). Before sourcing, set `out` (the folder each
# step's log goes to) and `archive` (the .tar.gz that holds it); `status` becomes 1 when a
# step fails or is skipped.
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
