#!/usr/bin/env bash
# Client instructions per model call of the toolloop loop (the `loop_overhead`
# bench's `--sequential` mode) in short and long conversations, counted by
# valgrind: unlike CPU time, instruction counts do not move with the load of
# the machine, so small changes in growth show. Kernel work (sending the
# body) is not counted. The stub server runs natively (valgrind does not
# follow it). Usage, from the repository root:
#   bash toolloop/benches/loop_instructions.sh [path/to/loop_overhead binary]
# FORMAT=anthropic (prompt caching on, as by default), FORMAT=responses or FORMAT=gemini
# measures that provider instead of OpenAI Chat Completions.
set -euo pipefail
bench=${1:-}
format=${FORMAT:-openai}
if [ -z "$bench" ]; then
  bench=$(cargo bench -p toolloop --bench loop_overhead --no-run --message-format=json 2>/dev/null \
    | grep -o '"executable":"[^"]*loop_overhead[^"]*"' | tail -1 | cut -d'"' -f4)
fi
# Instructions of a whole run: start-up, one warm-up conversation, then $1 conversations of $2 iterations.
instructions() {
  valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null "$bench" --sequential toolloop "$1" "$2" "$format" 2>&1 \
    | grep "I *refs" | tr -d ',' | awk '{print $NF}'
}
# The difference of two runs is the cost of the extra conversations alone.
short=$(( ($(instructions 150 10) - $(instructions 50 10)) / 1000 ))
long=$(( ($(instructions 5 400) - $(instructions 2 400)) / 1200 ))
echo "| conversation ($format) | instructions per model call |"
echo "|---|---|"
echo "| 10 iterations (mean depth 5) | $short |"
echo "| 400 iterations (mean depth 200) | $long |"
awk -v s="$short" -v l="$long" 'BEGIN { printf "\ngrowth: %.2fx\n", l / s }'
