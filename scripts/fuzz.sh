#!/usr/bin/env bash
# Runs the libFuzzer targets (cargo fuzz, nightly) with a seed corpus made from the repository's
# fixtures, each for SECONDS (default 60), one job per core; prints one line per target with
# execs, time and crashes. Crashes land in fuzz/artifacts/<target>/ (turn each into a
# regression test: fuzz/regressions/<target>/, replayed by --build-only).
# usage: scripts/fuzz.sh [SECONDS] [TARGET…]
#        scripts/fuzz.sh --build-only    (CI: build every target with AddressSanitizer,
#                                         unoptimized, and replay fuzz/regressions/*/* once each)
# SKG_FUZZ_SANITIZER=none runs without AddressSanitizer (coverage-guided all the same, several
# times the execs per second: the long runs; tree-sitter's C is not instrumented either way).
set -euo pipefail
cd "$(dirname "$0")/.."
if ! rustup toolchain list 2>/dev/null | grep -q nightly; then
  echo "skipped: cargo fuzz needs a nightly toolchain (rustup toolchain install nightly); none is installed" >&2
  [ "${1:-}" = "--build-only" ] && exit 0 || exit 2
fi
command -v cargo-fuzz > /dev/null || cargo install cargo-fuzz --locked
if [ "${1:-}" = "--build-only" ]; then
  (cd fuzz && cargo +nightly fuzz build --dev)
  echo "fuzz targets built: $(cd fuzz && cargo +nightly fuzz list | tr '\n' ' ')"
  # Every crash found so far, as an input that reproduced it: each must now run clean
  # (libFuzzer runs file arguments once each; a crash, leak or timeout fails the step).
  log=$(mktemp)
  for dir in fuzz/regressions/*/; do
    t=$(basename "$dir")
    mapfile -t inputs < <(find "$dir" -type f ! -name '*.md' | sort)
    [ ${#inputs[@]} -gt 0 ] || continue
    (cd fuzz && cargo +nightly fuzz run --dev "$t" "${inputs[@]/#/../}" -- -timeout=30 -rss_limit_mb=2048) \
      > "$log" 2>&1 || { cat "$log"; echo "fuzz regression failed: $t"; exit 1; }
    echo "fuzz regressions replayed clean: $t (${#inputs[@]})"
  done
  exit 0
fi
secs=${1:-60}; shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(frontmatter markdown registry script catalog gateway scan)

# Seed corpus: SKILL.md and other markdown of the demo registries, fixture scripts, catalogs.
seed() {
  local t=$1 dir=fuzz/corpus/$1
  mkdir -p "$dir"
  case $t in
    frontmatter|markdown|scan)
      find registries tests/fixtures -name '*.md' -size -64k -print0 | while IFS= read -r -d '' f; do
        cp "$f" "$dir/$(sha1sum "$f" | cut -c1-16)"; done ;;
    script)
      find registries tests/fixtures crates/skg-syntax -type f \( -name '*.js' -o -name '*.ts' -o -name '*.py' \) -size -64k -print0 |
        while IFS= read -r -d '' f; do
          case $f in *.js) p='\x00';; *.ts) p='\x01';; *) p='\x03';; esac
          { printf "$p"; cat "$f"; } > "$dir/$(sha1sum "$f" | cut -c1-16)"; done ;;
    catalog)
      find tests/fixtures/catalogs -type f -size -256k -print0 | while IFS= read -r -d '' f; do
        cp "$f" "$dir/$(sha1sum "$f" | cut -c1-16)"; done ;;
    *) : ;;  # structured inputs: libFuzzer builds them from scratch
  esac
}

jobs=$(nproc)
printf '%-12s %12s %8s %8s\n' target execs seconds crashes
for t in "${targets[@]}"; do
  seed "$t"
  log=$(mktemp)
  start=$(date +%s)
  (cd fuzz && cargo +nightly fuzz run -O -s "${SKG_FUZZ_SANITIZER:-address}" "$t" -- -max_total_time="$secs" -jobs="$jobs" -workers="$jobs" \
      -max_len=65536 -timeout=10 -rss_limit_mb=2048 -print_final_stats=1) > "$log" 2>&1 || true
  # Each job's own log (fuzz/fuzz-<job>.log) has its final stats; the parent's output repeats
  # them when the jobs end, so it is counted only when there are no job logs.
  if compgen -G 'fuzz/fuzz-*.log' > /dev/null; then stats=(fuzz/fuzz-*.log); else stats=("$log"); fi
  execs=$(grep -h '^stat::number_of_executed_units' "${stats[@]}" | awk '{s+=$2} END {print s+0}')
  crashes=$(find "fuzz/artifacts/$t" -type f 2>/dev/null | wc -l)
  printf '%-12s %12s %8s %8s\n' "$t" "$execs" "$(( $(date +%s) - start ))" "$crashes"
  rm -f "$log" fuzz/fuzz-*.log
done
