#!/usr/bin/env bash
# Compresses the lab's raw records under docs/results (results.json -> results.json.xz, ~10x
# smaller) so that the tracked tree stays well under the 64 MiB a device call carries with it.
# Run before committing a session's results. Files a test reads (named under tests/) stay plain;
# report.md and fingerprint.json stay plain everywhere. To use one again, e.g. with
# `mlalab ab --plan-from`: `xz -dk PATH/results.json.xz`.
#   bash scripts/compress_results.sh [FOLDER]   (default: docs/results)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
folder=${1:-docs/results}
before=$(du -sb "$folder" | cut -f1)
count=0
while IFS= read -r -d '' file; do
  if grep -rqF "${file#./}" tests python/tests; then continue; fi
  xz -9 --force "$file"
  count=$((count + 1))
done < <(find "$folder" -name results.json -print0)
after=$(du -sb "$folder" | cut -f1)
echo "compress_results: $count results.json in $folder compressed; $((before / 1048576)) MiB -> $((after / 1048576)) MiB"
