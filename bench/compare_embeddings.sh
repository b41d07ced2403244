#!/usr/bin/env bash
# Side-by-side embedding speed: canrun against sentence-transformers on torch (eager) and ONNX
# Runtime, on all-MiniLM-L6-v2 as published and a synthetic-weights model of bge-base-en-v1.5's
# size, at batch 1, 8 and 32 with short (~16 tokens) and long (~256 tokens) texts, every engine
# on the same texts and threads. A table with ratios on stdout, JSON in bench/results/.
#
#   bash bench/compare_embeddings.sh
#
# Environment (all optional):
#   THREADS       threads for every engine (default: all cores)
#   MODELS        all-minilm-l6-v2,bge-base-synthetic
#   ENGINES       canrun,canrun-bf16,sentence-transformers,onnxruntime
#   COMPARE_VENV  an existing venv with bench/requirements-embed.txt (e.g. /work/venv-tools) instead
#                 of installing them into bench/.venv-embed
#   COMPARE_OUT   the JSON file to write (default bench/results/embeddings-<UTC time>.json)
set -euo pipefail
cd "$(dirname "$0")/.."
req=bench/requirements-embed.txt
venv=${COMPARE_VENV:-bench/.venv-embed}
if [[ -z ${COMPARE_VENV:-} ]]; then
  stamp=$(sha256sum "$req" | cut -c1-16)
  if [[ ! -f $venv/.installed || "$(cat "$venv/.installed")" != "$stamp" ]]; then
    echo "[compare] setting up $venv" >&2
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q -r "$req" >&2
    echo "$stamp" > "$venv/.installed"
  fi
fi
[[ -x build/canrun ]] || bash scripts/build.sh build
bash tools/fetch_minilm.sh >&2
mkdir -p bench/results
out=${COMPARE_OUT:-bench/results/embeddings-$(date -u +%Y%m%dT%H%M%SZ).json}
exec "$venv/bin/python" bench/compare_embeddings.py --out "$out"
