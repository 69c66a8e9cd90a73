#!/bin/bash
# Session 27 device call 9: racecheck of the t64 pair order (full build of 22950dc).
R=$OUT/r9; mkdir -p $R bins
tar -xJf build-d27/bins9.txz -C bins
export MLALAB_TEST_VARIANTS='^wgmma_h64_t64_w8_s2$'
export MLALAB_TEST_CASES='^(b3_h64_p64|all_lengths_h16_p64)$'
timeout 200 compute-sanitizer --tool racecheck --racecheck-report hazard --error-exitcode 1 bins/newt --gtest_filter='Layouts/DecodeSweep.*' > $R/racecheck.log 2>&1; echo "racecheck rc=$?" >> $R/racecheck.log
tail -n 4 $R/racecheck.log
grep -E "^========= (Error|Warning)" $R/racecheck.log | sort | uniq -c | head
grep -E "at .* in .*:[0-9]+" $R/racecheck.log | sed 's/.* in //' | sort | uniq -c | sort -rn | head -12
cd $OUT && tar -czf r9.tgz r9 && rm -rf r9
