#!/bin/bash
# ROOT=tree cg.sh factory args n  -> per-op I refs, D1 misses, LL misses (simulated)
cg() { valgrind --tool=cachegrind --cache-sim=yes --cachegrind-out-file=/dev/null node --predictable $ROOT/bench/.build/bench/instructions-proc.js "$1" "$2" 3000 "$3" 2>&1 | awk '/I *refs/{gsub(",","",$4); i=$4} /D1  misses/{gsub(",","",$4); d=$4} /LLd misses/{gsub(",","",$4); l=$4} END{print i, d, l}'; }
read a1 a2 a3 < <(cg "$1" "$2" 0); read b1 b2 b3 < <(cg "$1" "$2" "$3")
echo "$1 $2: I $(( (b1-a1)/$3 )) D1miss $(( (b2-a2)/$3 )) LLdmiss $(( (b3-a3)/$3 ))"
