#!/usr/bin/env bash
# Client instructions per streamed model call and per streamed event, toolloop's
# `Model::stream` against the bare reqwest + eventsource-stream loop (the
# `stream_overhead` bench's `--sequential` mode), counted by valgrind: unlike
# CPU time, instruction counts do not move with the load of the machine.
# Kernel work is not counted. The stub server runs natively (valgrind does not
# follow it). Usage, from the repository root (about 3 minutes):
#   bash toolloop/benches/stream_instructions.sh [path/to/stream_overhead binary]
set -euo pipefail
bench=${1:-}
if [ -z "$bench" ]; then
  bench=$(cargo bench -p toolloop --bench stream_overhead --no-run --message-format=json 2>/dev/null \
    | grep -o '"executable":"[^"]*stream_overhead[^"]*"' | tail -1 | cut -d'"' -f4)
fi
# Instructions of a whole run: start-up, one warm-up call, then $6 calls.
instructions() {
  valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null \
    "$bench" --sequential "$1" "$2" "$3" "$4" "$5" "$6" 2>&1 \
    | grep "I *refs" | tr -d ',' | awk '{print $NF}'
}
# The difference of two runs is the cost of the extra calls alone.
per_call() { # loop format texts arguments pace_ms
  local few=$(( $5 > 0 ? 3 : 20 )) many=$(( $5 > 0 ? 11 : 60 ))
  echo $(( ($(instructions "$1" "$2" "$3" "$4" "$5" $many) - $(instructions "$1" "$2" "$3" "$4" "$5" $few)) / (many - few) ))
}
events() { # format texts arguments: SSE events per call (see stub.rs)
  if [ "$1" = anthropic ]; then echo $(( $2 + $3 + 8 )); else echo $(( $2 + $3 + 5 )); fi
}
echo "| format | loop | per call, 100+40 deltas, whole body | per extra event | per call, one event per ms |"
echo "|---|---|---|---|---|"
for format in anthropic openai; do
  small_events=$(events $format 100 40)
  large_events=$(events $format 400 160)
  for loop in bare toolloop; do
    small=$(per_call $loop $format 100 40 0)
    large=$(per_call $loop $format 400 160 0)
    paced=$(per_call $loop $format 100 40 1)
    marginal=$(( (large - small) / (large_events - small_events) ))
    echo "| $format ($small_events events) | $loop | $small | $marginal | $paced |"
  done
done
