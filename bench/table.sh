#!/bin/bash
# The runs behind docs/performance.md's table: every overhead benchmark N times (default 3), one
# after the other, each run's output in $OUT (default bench-table/). Run from the repo root on a
# quiet machine:  N=3 bash bench/table.sh
# The agent SDK adapters (issue 37), not in the default list:  BENCHES="openai_agents google_adk" N=3 bash bench/table.sh
set -u
cd "$(dirname "$0")/.."
export LITELLM_LOCAL_MODEL_COST_MAP=True
N=${N:-3}
OUT=${OUT:-bench-table}
mkdir -p "$OUT"
for i in $(seq 1 "$N"); do
  for b in ${BENCHES:-overhead openai anthropic langchain llamaindex litellm stream_tools}; do
    case $b in
      overhead) cmd="bench/overhead.py --rounds 9 --calls 2000" ;;
      openai) cmd="bench/openai_overhead.py --cpu" ;;
      anthropic) cmd="bench/anthropic_overhead.py --cpu" ;;
      langchain) cmd="bench/langchain_overhead.py" ;;
      llamaindex) cmd="bench/llamaindex_overhead.py --cpu" ;;
      litellm) cmd="bench/litellm_overhead.py --rounds 9" ;;
      stream_tools) cmd="bench/stream_tools.py" ;;
      openai_agents) cmd="bench/openai_agents_overhead.py --calls 10 --rounds 61" ;;
      google_adk) cmd="bench/google_adk_overhead.py --calls 5 --rounds 61" ;;
      *) echo "unknown benchmark: $b" >&2; exit 2 ;;
    esac
    echo "== $b run $i, load $(cut -d' ' -f1 /proc/loadavg)" > "$OUT/$b-$i.txt"
    # shellcheck disable=SC2086
    uv run python $cmd >> "$OUT/$b-$i.txt" 2>&1
  done
done
