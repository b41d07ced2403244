#!/usr/bin/env bash
# Set up models/chat-templates/llama-cpp-python-0.3.36, the chat templates the Jinja renderer is
# checked against (tests/goldens/chat_templates/renders.json holds what transformers renders).
#
# The templates are the ones llama.cpp keeps for its own tests (vendor/llama.cpp/models/templates),
# taken from the llama-cpp-python 0.3.36 source distribution on PyPI, pinned by its sha256. They are
# never committed (models/ is ignored). Safe to rerun: it does nothing when the folder is complete
# for this sdist.
#
# Environment: CANRUN_DOWNLOAD_CACHE (default ~/.cache/canrun) holds the download;
#              PYTHON (default python3) runs pip.
set -euo pipefail

usage() {
    cat <<EOF
usage: $(basename "$0") [--force]

Download the llama-cpp-python==0.3.36 sdist from PyPI, check its sha256 and extract its
vendor/llama.cpp/models/templates/ folder into models/chat-templates/llama-cpp-python-0.3.36
(relative to the repository root).

  --force   extract again even if the folder is already complete
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
cache=${CANRUN_DOWNLOAD_CACHE:-$HOME/.cache/canrun}/downloads
sdist=$cache/llama_cpp_python-0.3.36.tar.gz
sdist_sha256=832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e
member=llama_cpp_python-0.3.36/vendor/llama.cpp/models/templates/
out=$repo_root/models/chat-templates/llama-cpp-python-0.3.36
stamp_name=.canrun-complete

stamp="sdist $sdist_sha256 member $member"
if [[ $force == 0 && -f $out/$stamp_name && "$(cat "$out/$stamp_name")" == "$stamp" ]]; then
    echo "$out is complete; nothing to do (--force extracts again)"
    exit 0
fi

fetch_pinned "$sdist" "$sdist_sha256" --no-binary :all: llama-cpp-python==0.3.36

# Extract next to the target and swap it in at the end, so an interrupted run leaves no
# half-written folder that looks complete.
staging=$out.partial
rm -rf "$staging"
mkdir -p "$staging"
echo "extracting $member -> $out"
tar -xzf "$sdist" -C "$staging" --strip-components=5 --no-same-owner "$member"
count=$(find "$staging" -maxdepth 1 -name '*.jinja' | wc -l)
if [[ $count == 0 ]]; then
    echo "$(basename "$0"): no *.jinja under $member in $sdist" >&2
    rm -rf "$staging"
    exit 1
fi
echo "$stamp" > "$staging/$stamp_name"
rm -rf "$out"
mv "$staging" "$out"
echo "done: $out ($count templates)"
