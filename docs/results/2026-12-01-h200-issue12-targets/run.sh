#!/usr/bin/env bash
# mlalab bench at issue 12's target shapes (V3 and V4, page 64 and 1), on the device machine:
# build-carry/full.tgz holds build-gpu/bin/mlalab (every variant, sm_90a); results go to $OUT/s.
O=${OUT:?}/s
mkdir -p $O
tar xzf build-carry/full.tgz
m=build-gpu/bin/mlalab
s=$(date +%s)
el() { echo "$1 rc $2 at $(( $(date +%s) - s )) s"; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,driver_version --format=csv > $O/gpu.csv
b() { n=$1; shift; timeout 60 $m bench "$@" --json $O/$n.json > $O/$n.log 2>&1; el $n $?; grep -E "^\| (h|w)|memory:" $O/$n.log; }
b h16_v3_p64 --heads 16 --batch 1,8,32,64,128 --context 4096 --variant h16_t16_w4_s2,h16_t32_w4_s2,wgmma_h64_t64_w8_s2
b h16_v3_l16k --heads 16 --batch 1 --context 16384 --variant h16_t16_w4_s2,h16_t32_w4_s3,wgmma_h64_t64_w8_s2
b h16_v4_p64 --layout v4 --heads 16 --batch 32,64,128 --context 4096 --variant h16_t16_w4_s2,wgmma_h64_t64_w8_s2
b h128_v4_p64 --layout v4 --heads 128 --batch 32,64,128 --context 4096 --variant wgmma_h64_t64_w8_s2
b page1 --heads 128 --batch 64 --context 4096 --page-size 1 --variant wgmma_h64_t64_w8_s2,h64_t32_w8_s2
b page1_h16 --heads 16 --batch 64 --context 4096 --page-size 1 --variant h16_t16_w4_s2,h16_t32_w8_s2,wgmma_h64_t64_w8_s2
tar czf $OUT/s.tgz -C $OUT s
