#!/bin/bash
# ROOT=tree ir.sh factory args n
ir() { valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null node --predictable $ROOT/bench/.build/bench/instructions-proc.js "$1" "$2" 3000 "$3" 2>&1 | awk '/I *refs/{gsub(",","",$4); print $4}'; }
a=$(ir "$1" "$2" 0); b=$(ir "$1" "$2" "$3"); echo "$1 $2: $(( (b - a) / $3 )) instr/op"
