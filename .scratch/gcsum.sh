#!/bin/bash
# gcsum.sh tree factory args n
taskset -c 1 node --trace-gc-nvp /work/main/.scratch/gcrun.mjs "$@" | awk -v n=$4 '/MEASURE/{m=1;next} /^CPU/{cpu=$2} m && /gc=s/{s++; match($0,/pause=[0-9.]+/); sp+=substr($0,RSTART+6,RLENGTH-6); match($0,/promoted=[0-9]+/); pr+=substr($0,RSTART+9,RLENGTH-9)} m && /gc=(mc|mmc)/{mc++; match($0,/pause=[0-9.]+/); mp+=substr($0,RSTART+6,RLENGTH-6)} END{printf "cpu %.1f µs/op; scavenges %d, %.2f µs/op, promoted %.0f B/op; mc %d, %.2f µs/op\n", cpu, s, sp*1000/n, pr/n, mc, mp*1000/n}'
