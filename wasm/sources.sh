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

# Where Debian's archive lacks a library: a pinned upstream commit, as GitHub serves it.
#
#   fetch_commit "<owner>/<repo> <commit> <sha256 of the tree>" ...
#
# Downloads the commit's tarball once and unpacks it as <repo>-<commit>, then checks the unpacked tree (the
# SHA-256 of every file's SHA-256, by path), not the tarball, whose compression GitHub does not promise to keep.
fetch_commit() {
  local entry repo commit sum dir tree
  for entry in "$@"; do
    read -r repo commit sum <<<"$entry"
    dir="$(basename "$repo")-$commit"
    [ -d "$dir" ] && continue
    curl -fsSL "https://codeload.github.com/$repo/tar.gz/$commit" | tar xzf -
    tree="$(cd "$dir" && find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum | sha256sum | cut -d' ' -f1)"
    [ "$tree" = "$sum" ] || { echo "$dir: tree $tree, expected $sum" >&2; rm -rf "$dir"; return 1; }
  done
}
