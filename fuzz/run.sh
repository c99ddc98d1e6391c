#!/usr/bin/env bash
# Run every fuzz target for SECONDS (default 600) each, one after another, and append a summary per target to
# fuzz/runs.log: executions, time, and whether a crash was found (crash inputs land in fuzz/artifacts/TARGET/).
#   fuzz/run.sh [SECONDS] [TARGET...]        (needs nightly and cargo-fuzz)
set -uo pipefail
cd "$(dirname "$0")"
seconds=${1:-600}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(source_line agui_line checkpoint fragments recovery_laws fold_lanes)
[ -d corpus/source_line ] || ./seed.sh
for target in "${targets[@]}"; do
  mkdir -p "corpus/$target" "artifacts/$target"
  log="logs/$target.log"
  mkdir -p logs
  cargo +nightly fuzz run "$target" "corpus/$target" -- -max_total_time="$seconds" -max_len=65536 \
    -rss_limit_mb=4096 -timeout=20 -print_final_stats=1 > "$log" 2>&1
  status=$?
  execs=$(grep -E '^stat::number_of_executed_units' "$log" | awk '{print $2}')
  crashes=$(ls "artifacts/$target" 2>/dev/null | wc -l)
  printf '%s  %-14s %6ss  executions=%s  exit=%s  crash_artifacts=%s\n' "$(date -u +%FT%TZ)" "$target" "$seconds" \
    "${execs:-?}" "$status" "$crashes" | tee -a runs.log
done
