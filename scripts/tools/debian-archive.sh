# Sourced by the tool scripts that take files from Debian's archive beyond the system's own suite:
# PHP 8.4 and the PECL extensions (php-zts.sh), Composer 2.8 (composer.sh). The system stays as it is:
# nothing is added to /etc/apt, no other suite's package is installed. Files come from the archive
# the system's apt configuration already names (its own mirror), each checked against the sha256 of
# Debian's signed index (the Sources/Packages lists of that suite, or the package's .dsc) written
# beside it in the calling script.
#
#   debian_archive_uri            the archive's base URI (the one the system's binary lists come from)
#   debian_pool_fetch DEST PATH SHA256
#                                 pool/PATH from that archive into DEST, checked (apt's own download)
#   debian_apt_config DIR LINE... a private apt configuration in DIR (its own lists, cache and an
#                                 empty dpkg status) whose sources are the given one-line entries, with
#                                 the system's archive URI in place of @ARCHIVE@; prints APT_CONFIG's value
# shellcheck shell=bash

debian_archive_uri() {
  # The system's own binary index targets name the archive(s) it uses; the main archive is the one
  # that is not the security archive.
  local uri
  uri="$(apt-get indextargets --format '$(REPO_URI)' 'Created-By: Packages' 2>/dev/null | grep -v -- '-security/*$' | head -n 1)"
  [ -n "$uri" ] || die "no Debian archive in the system's apt configuration (apt-get indextargets lists none: run apt-get update)"
  printf '%s' "${uri%/}"
}

debian_pool_fetch() {
  local dest="$1" path="$2" sha="$3" base
  base="$(debian_archive_uri)"
  if [ -f "$dest" ] && [ "$(sha256sum "$dest" | cut -c1-64)" = "$sha" ]; then return 0; fi
  /usr/lib/apt/apt-helper -q download-file "$base/pool/$path" "$dest" "SHA256:$sha" >/dev/null 2>"$dest.err" \
    || die "Debian archive: pool/$path could not be fetched or did not match its sha256 $sha: $(grep -m1 -E 'E:|Err' "$dest.err" || tail -n 1 "$dest.err")"
  rm -f "$dest.err"
}

debian_apt_config() {
  local dir="$1" base line; shift
  base="$(debian_archive_uri)"
  mkdir -p "$dir/lists/partial" "$dir/cache/archives/partial"
  : > "$dir/status"
  : > "$dir/sources.list"
  for line in "$@"; do printf '%s\n' "${line//@ARCHIVE@/$base}" >> "$dir/sources.list"; done
  cat > "$dir/apt.conf" <<EOF
Dir::Etc::SourceList "$dir/sources.list";
Dir::Etc::SourceParts "/dev/null";
Dir::State::Lists "$dir/lists";
Dir::State::status "$dir/status";
Dir::Cache "$dir/cache";
Dir::Cache::pkgcache "";
Dir::Cache::srcpkgcache "";
Acquire::Languages "none";
EOF
  printf '%s' "$dir/apt.conf"
}
