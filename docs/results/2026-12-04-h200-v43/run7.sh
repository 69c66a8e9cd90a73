#!/bin/bash
# Session 28 device call 7: racecheck of version 43's ring (full build of 89f1dd1).
R=$OUT/r7; mkdir -p $R bins
tar -xJf build-d28/bins6.txz -C bins
export MLALAB_TEST_CASES='^(b3_h64_p64)$'
for v in wgmma_h64_t64_w8_s2 wgmma_h64_t32_w8_s4; do
  export MLALAB_TEST_VARIANTS="^$v\$"
  timeout 100 compute-sanitizer --tool racecheck --racecheck-report hazard --error-exitcode 1 bins/newt --gtest_filter='Layouts/DecodeSweep.*' > $R/racecheck_$v.log 2>&1; echo "racecheck rc=$?" >> $R/racecheck_$v.log
  echo "== $v"; tail -n 3 $R/racecheck_$v.log
  grep -E "at .* in .*:[0-9]+" $R/racecheck_$v.log | sed 's/.* in //' | sort | uniq -c | sort -rn | head -8
done
cd $OUT && tar -czf r7.tgz r7 && rm -rf r7
