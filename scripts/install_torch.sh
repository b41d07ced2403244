#!/usr/bin/env bash
# The torch runner's interpreter for the tests: a venv at .venv-torch with
# tests/requirements-torch.txt, made once (about 80 s and 5.6 GB on this project's machines).
# Prints the interpreter's path; scripts/test.sh passes it on as CANRUN_TORCH_PYTHON.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=.venv-torch
[ -x "$venv/bin/python" ] || python3 -m venv "$venv" >&2
# Quick when everything is there already.
"$venv/bin/python" -m pip install -q --disable-pip-version-check -r tests/requirements-torch.txt >&2
echo "$PWD/$venv/bin/python"
