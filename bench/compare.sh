#!/usr/bin/env bash
# Side-by-side speed of canrun, llama.cpp (llama-cpp-python) and transformers (eager and
# torch.compile) on the same models, precision, thread count and token-id prompts.
#
#   bash bench/compare.sh                       # all models; table on stdout, JSON in bench/results/
#   MODELS=smollm2 bash bench/compare.sh        # a subset: smollm2,qwen2.5-0.5b,qwen2.5-1.5b
#
# Environment (all optional):
#   MODELS          smollm2,qwen2.5-0.5b,qwen2.5-1.5b (the Qwen ones: synthetic weights at the
#                   catalog's real config, made by `canrun check --synthetic`)
#   ENGINES         canrun,llama.cpp,transformers-eager,transformers-compile
#   THREADS         threads for every engine (default: all cores)
#   PROMPT_TOKENS   512      OUTPUT_TOKENS 128      RUNS 3 (measured)      WARMUP 1
#   PRECISION       f32 (both canrun backends compute in f32); bf16 converts the GGUF to BF16 and
#                   loads transformers in bfloat16 (canrun computes in f32 from the checkpoint's weights)
#   CANRUN_BACKEND  passed to `canrun bench --backend`: cpu (default: the compiled, fast backend) or ref
#   COMPARE_VENV    an existing venv with torch + transformers (e.g. /work/venv-tools) to use for
#                   transformers and the GGUF converter instead of installing them into
#                   bench/.venv-compare; llama-cpp-python always goes into bench/.venv-compare
#   COMPARE_OUT     the JSON file to write (default bench/results/compare-<UTC time>.json)
#   ENGINE_TIMEOUT_S  per engine and model (default 3600)
#   JOBS            parallel jobs when building llama.cpp (default 2)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
cache=${COMPARE_CACHE:-$root/bench/.cache}
venv=$root/bench/.venv-compare
req=$root/bench/requirements-compare.txt
mkdir -p "$cache"

# canrun
if [[ ! -x build/canrun ]]; then
  echo "[compare] building canrun (scripts/build.sh build)" >&2
  bash scripts/build.sh build
fi

# llama-cpp-python's sdist, kept to reach the converter it vendors (vendor/llama.cpp).
llama_version=$(sed -n 's/^llama-cpp-python==//p' "$req")
sdist=$cache/llama_cpp_python-$llama_version.tar.gz
llama_src=$cache/llama_cpp_python-$llama_version/vendor/llama.cpp
if [[ ! -f $sdist ]]; then
  python3 -m pip download --no-deps --no-binary :all: "llama-cpp-python==$llama_version" -d "$cache"
fi
if [[ ! -f $llama_src/convert_hf_to_gguf.py ]]; then
  tar -xzf "$sdist" -C "$cache"
fi

# The venv. llama.cpp is built from source by pip (PyPI has only the sdist) for this machine's
# CPU features (GGML_NATIVE), with OpenMP threads.
cmake_args=${CMAKE_ARGS:-"-DGGML_NATIVE=ON -DGGML_OPENMP=ON -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF"}
stamp="$(sha256sum "$req" | cut -c1-16) ${COMPARE_VENV:+llama-only} $cmake_args"
if [[ ! -f $venv/.compare-installed || "$(cat "$venv/.compare-installed")" != "$stamp" ]]; then
  echo "[compare] setting up $venv" >&2
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q --upgrade pip >&2
  if [[ -n ${COMPARE_VENV:-} ]]; then
    # torch, transformers and the converter's needs come from $COMPARE_VENV.
    grep -E '^(numpy|typing-extensions|diskcache|jinja2|MarkupSafe)==' "$req" > "$cache/req-llama-only.txt"
    "$venv/bin/pip" install -r "$cache/req-llama-only.txt" >&2
  else
    grep -v '^llama-cpp-python==' "$req" > "$cache/req-no-llama.txt"
    "$venv/bin/pip" install -r "$cache/req-no-llama.txt" >&2
  fi
  echo "[compare] building llama-cpp-python $llama_version (llama.cpp from source, CMAKE_ARGS=$cmake_args)" >&2
  CMAKE_ARGS="$cmake_args" CMAKE_BUILD_PARALLEL_LEVEL=${JOBS:-2} \
    "$venv/bin/pip" install --no-deps "$sdist" >&2
  echo "$stamp" > "$venv/.compare-installed"
fi

torch_py=$venv/bin/python
convert_deps=
if [[ -n ${COMPARE_VENV:-} ]]; then
  torch_py=$COMPARE_VENV/bin/python
  # The converter's one package that such a venv may lack, installed beside it (not into it).
  convert_deps=$cache/convert-deps
  if ! PYTHONPATH=$convert_deps "$torch_py" -c 'import sentencepiece' 2>/dev/null; then
    "$torch_py" -m pip install -q --target "$convert_deps" "$(grep '^sentencepiece==' "$req")" >&2
  fi
fi

CONVERT_DEPS=$convert_deps CC=${CC:-gcc} LLAMA_SRC=$llama_src TORCH_PY=$torch_py LLAMA_PY=$venv/bin/python COMPARE_CACHE=$cache \
  exec python3 bench/compare.py
