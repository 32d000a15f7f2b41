#!/usr/bin/env bash
# Every benchmark of bench/README.md's table in sequence, from the project root, each one's output
# kept in bench-logs/<label>/<script>.log with the load average before and after it.
#   bash bench/run_all.sh [label] [repeats]
# BENCH_BENCHREG_ROOT=DIR bash bench/run_all.sh before 3   # the same scripts on another tree
# BENCH_BUSY=cores bash bench/run_all.sh busy 3            # with both CPUs kept busy meanwhile
# IMPORT=1 ...                                             # also the importers (long)
# The PromptCBLUE script needs a checkout of the official evaluator (--official, see its header).
set -euo pipefail
cd "$(dirname "$0")/.."
label=${1:-now}
repeats=${2:-5}
official=${OFFICIAL:-/tmp/PromptCBLUE}
logs=bench-logs/$label
mkdir -p "$logs"
python=${PYTHON:-.venv/bin/python}

run() {
    local name=$1
    shift
    {
        echo "# $(date -u +%FT%TZ) load: $(cut -d' ' -f1-3 /proc/loadavg)  $*"
        "$python" -m "$@"
        echo "# $(date -u +%FT%TZ) load: $(cut -d' ' -f1-3 /proc/loadavg)  done"
    } 2>&1 | tee "$logs/$name.log"
}

run cblue bench.cblue_official --official "$official" --copies 100 1000 --repeats "$repeats"
run molp2s_sweep bench.molp2s_sweep_overhead --repeats "$repeats"
run molp2s_100k bench.molp2s_100k --repeats "$repeats"
run reaction_mc_100k bench.reaction_mc_100k --repeats "$repeats"
run retrieval bench.retrieval_scoring --repeats "${RETRIEVAL_REPEATS:-$repeats}" ${RETRIEVAL_QUERIES:+--queries "$RETRIEVAL_QUERIES"}
if [ -z "${BENCH_BENCHREG_ROOT:-}" ]; then  # (cli_latency runs another tree itself: --before DIR)
    run cli bench.cli_latency --repeats 7
fi
if [ -n "${IMPORT:-}" ]; then
    run import bench.import_sources --repeats "$repeats"
fi
