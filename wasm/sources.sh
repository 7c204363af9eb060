# Shared by wasm/*/build.sh (sourced, not run): the library sources, as Debian's archive ships them.
#
#   fetch_sources "pool/path/of/file.orig.tar.gz <sha256>" ...
#
# Downloads each pool file into the current directory once, checks it against its SHA-256 (a mismatch
# stops the build), and unpacks it once.
fetch_sources() {
  local mirror="http://deb.debian.org/debian/pool/main" entry path sum file dir
  for entry in "$@"; do
    read -r path sum <<<"$entry"
    file="$(basename "$path")"
    [ -f "$file" ] || curl -fsS -o "$file" "$mirror/$path"
    echo "$sum  $file" | sha256sum -c --quiet
    dir="$(tar tf "$file" | head -1 | cut -d/ -f1 || true)"
    [ -d "$dir" ] || tar xf "$file"
  done
}
