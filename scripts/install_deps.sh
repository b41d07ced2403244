#!/usr/bin/env bash
# Installs every build and test dependency, pinned: Debian packages and PyPI wheels.
# Safe to run again: it installs only what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

APT_PACKAGES=(
  cmake ninja-build g++ pkg-config
  python3-venv                        # the torch runner's test interpreter (scripts/install_torch.sh)
  libpcre2-dev libicu-dev nlohmann-json3-dev libcli11-dev libgtest-dev
  libcpp-httplib-dev                  # canrun serve's HTTP server, canrun cache pull/push
  libxxhash-dev                       # plan cache keys and checksums
  libjpeg62-turbo-dev libpng-dev libwebp-dev  # image files for image-text-to-text models
  libcurl4-openssl-dev libssl-dev     # canrun pull: the Hub client (HTTP(S), sha256 of blobs)
  libdnnl-dev                         # oneDNN: the prefill matrix products where its matmul is faster
  libopenmpi-dev openmpi-bin          # collectives between the workers of a sharded run (--cores N)
  chromium chromium-driver wrk        # the Space's browser test and load benchmark
  clang libclang-rt-14-dev libomp-14-dev  # the fuzz targets: libFuzzer, ASan/UBSan runtimes, OpenMP for clang
)

missing=()
for package in "${APT_PACKAGES[@]}"; do
  dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package")
done
if ((${#missing[@]})); then
  echo "[deps] apt-get install ${missing[*]}"
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

PYTHON=${PYTHON:-python3}
if ! "$PYTHON" -m pip install -q --disable-pip-version-check -r requirements.txt; then
  echo "[deps] pip install -r requirements.txt failed" >&2
  exit 1
fi
echo "[deps] ok"
