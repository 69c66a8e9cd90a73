#!/usr/bin/env bash
# Compresses the raw records under docs/results so that the tracked tree stays well under the
# 64 MiB a device call carries with it: every lab's results.json (-> results.json.xz, ~10x
# smaller), and any other .json or .log over 64 KiB (timelines, sanitizer hazard lists, old
# tuning tables). Run before committing a session's results. Plain stay: files a test reads
# (named under tests/), report.md and fingerprint.json everywhere, and a large record that a
# file outside docs/results names by its path or its folder's (a tuning table the README or a
# script points to, a log a script quotes). To use one again, e.g. with
# `mlalab ab --plan-from`: `xz -dk PATH/results.json.xz`.
#   bash scripts/compress_results.sh [FOLDER]   (default: docs/results)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
folder=${1:-docs/results}
outside_results=(README.md experiments scripts src python bench cmake tests .ci)

named_by_a_test() { grep -rqF "$1" tests python/tests; }
named_outside_results() {
  grep -rqF -e "$1" -e "$(dirname "$1")/" "${outside_results[@]}" 2>/dev/null
}

before=$(du -sb "$folder" | cut -f1)
labs=0
large=0
while IFS= read -r -d '' file; do
  named_by_a_test "${file#./}" && continue
  xz -9 --force "$file"
  labs=$((labs + 1))
done < <(find "$folder" -name results.json -print0)
while IFS= read -r -d '' file; do
  named_outside_results "${file#./}" && continue
  xz -9 --force "$file"
  large=$((large + 1))
done < <(find "$folder" \( -name '*.json' -o -name '*.log' \) ! -name results.json \
           ! -name fingerprint.json -size +64k -print0)
after=$(du -sb "$folder" | cut -f1)
echo "compress_results: $labs results.json and $large other records over 64 KiB in $folder" \
  "compressed; $((before / 1048576)) MiB -> $((after / 1048576)) MiB"
