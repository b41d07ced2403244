#!/usr/bin/env bash
# Runs one fuzz target (or `all`, one after the other) for SECONDS each, from its committed seed
# corpus fuzz/corpus/TARGET plus what earlier runs here found (build-fuzz/corpus/TARGET, kept).
# Builds build-fuzz/ with clang, libFuzzer, ASan and UBSan first. A crash, leak, sanitizer
# report or timeout stops it non-zero and leaves the input as build-fuzz/artifacts/TARGET-*;
# reproduce it with `build-fuzz/fuzz/TARGET_fuzz FILE`.
#
#   bash scripts/fuzz.sh all 5                  # every target, 5 s each (what scripts/test.sh runs)
#   bash scripts/fuzz.sh tokenizer_json 1800    # a long run of one target
set -euo pipefail
cd "$(dirname "$0")/.."
usage() { echo "usage: scripts/fuzz.sh TARGET|all SECONDS   (targets: $(ls fuzz/corpus | tr '\n' ' '))" >&2; exit 2; }
[ $# -eq 2 ] || usage
target=$1 seconds=$2
[[ "$seconds" =~ ^[0-9]+$ ]] && [ "$seconds" -gt 0 ] || { echo "SECONDS must be a positive whole number, got '$seconds'" >&2; exit 2; }
if [ "$target" = all ]; then targets=$(ls fuzz/corpus); else targets=$target; fi
for name in $targets; do
  [ -d "fuzz/corpus/$name" ] || { echo "no fuzz target '$name'" >&2; usage; }
done

build=${FUZZ_BUILD_DIR:-build-fuzz}  # where it builds and keeps what runs found
if [ ! -f "$build/build.ninja" ]; then
  # -O1 and line tables only: a third of the compile time of -O2 -g, the same findings.
  CC=clang CXX=clang++ cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only" -DCANRUN_FUZZ=ON >/dev/null
fi
ninja -C "$build" fuzzers >/dev/null

json_targets="safetensors_header safetensors_index model_config generation_config tokenizer_json messages_file plan_manifest plan_index"
mkdir -p "$build/artifacts"
for name in $targets; do
  found="$build/corpus/$name"
  mkdir -p "$found"
  # The target's dictionary: JSON's tokens for the JSON readers, plus its own words.
  dict="$build/corpus/$name.dict"
  : >"$dict"
  [[ " $json_targets " == *" $name "* ]] && cat fuzz/dictionaries/json.dict >>"$dict"
  [ -f "fuzz/dictionaries/$name.dict" ] && cat "fuzz/dictionaries/$name.dict" >>"$dict"
  echo "== fuzz $name for ${seconds}s"
  # -timeout: an input that takes 10 s is a finding (a hang; FUZZ_TIMEOUT_S on a loaded machine);
  # -rss_limit_mb: so is one that needs 2 GiB.
  set +e
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    "$build/fuzz/${name}_fuzz" $([ -s "$dict" ] && echo "-dict=$dict") -max_total_time="$seconds" -timeout="${FUZZ_TIMEOUT_S:-10}" -rss_limit_mb=2048 \
    -max_len=65536 -print_final_stats=1 -artifact_prefix="$build/artifacts/$name-" "$found" "fuzz/corpus/$name" 2>&1 |
    grep -v -E "^#[0-9]+[[:space:]]+(NEW|REDUCE|pulse)"
  status=${PIPESTATUS[0]}
  set -e
  [ "$status" -eq 0 ] || { echo "fuzz $name: stopped with status $status; see $build/artifacts/" >&2; exit 1; }
done
