#!/usr/bin/env bash
# Every test: unit and parity tests (CTest) in a release build and in the sanitized build (clang,
# ASan+UBSan, the fuzz targets' own build, so one instrumented build of the libraries serves
# both), every fuzz target briefly (libFuzzer), then the end-to-end tests (pytest) against the CLI
# and the real SmolLM2 and all-MiniLM-L6-v2 folders; the torch runner's tests with torch from a
# venv of their own.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install_deps.sh
bash tools/fetch_smollm2.sh
bash tools/fetch_chat_templates.sh
bash tools/fetch_minilm.sh
bash scripts/build.sh build

echo "== ctest (release)"
ctest --test-dir build --output-on-failure -j2
echo "== fuzz targets, 5 s each from their corpora (scripts/fuzz.sh TARGET SECONDS for a long run)"
bash scripts/fuzz.sh all 5
echo "== ctest (AddressSanitizer + UBSan, the fuzz build)"
ninja -C build-fuzz canrun_tests
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ctest --test-dir build-fuzz --output-on-failure -j2
echo "== pytest"
CANRUN_TORCH_PYTHON=$(bash scripts/install_torch.sh)
export CANRUN_TORCH_PYTHON
CANRUN_BIN="$PWD/build/canrun" python3 -m pytest -q tests/e2e
