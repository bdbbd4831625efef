#!/usr/bin/env bash
# MkDocs from PyPI: scripts/tools/mkdocs.sh [VERSION]   (default 1.6.1, the current release; Debian's
# mkdocs is older). Installs a virtual environment in <cache>/mkdocs/<version>/venv with
# `pip install mkdocs==X`, and <cache>/mkdocs/<version>/bin/mkdocs, a small script running
# `venv/bin/python -m mkdocs`: the venv's own console script would name the staging folder's path in
# its #! line, which no longer exists once the finished folder is moved into place.
# Needs python3 with its venv module. Cold install: about 1 min 50 s (MkDocs and its dependencies from PyPI).
source "$(dirname "$0")/lib.sh"
version="${1:-1.6.1}"
tool_cached mkdocs "$version" bin/mkdocs && exit 0
command -v python3 >/dev/null || die "mkdocs $version: needs python3 (not found on PATH)"
tool_stage mkdocs "$version" >/dev/null; stage="$STAGE"  # not in $(…): STAGE and the cleanup trap must live in this shell
chmod 755 "$stage"  # mktemp made it private; the cache is read by whoever runs the tests
say "mkdocs $version: python3 -m venv + pip install mkdocs==$version"
python3 -m venv "$stage/venv" >&2 || die "mkdocs $version: python3 -m venv failed (Debian: apt-get install python3-venv)"
"$stage/venv/bin/python" -m pip install --quiet --disable-pip-version-check "mkdocs==$version" >&2 \
  || die "mkdocs $version: pip install mkdocs==$version failed (is $version on PyPI? see pip's message above)"
mkdir -p "$stage/bin"
cat > "$stage/bin/mkdocs" <<'SH'
#!/bin/sh
# MkDocs from the venv beside this folder (scripts/tools/mkdocs.sh).
here="$(dirname "$(readlink -f "$0")")"
exec "$here/../venv/bin/python" -m mkdocs "$@"
SH
chmod +x "$stage/bin/mkdocs"
tool_reports "mkdocs $version" "version ${version//./\\.} " "$stage/bin/mkdocs" --version
tool_commit mkdocs "$version" bin/mkdocs
