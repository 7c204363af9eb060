#!/bin/sh
# format=auto: the server picks AVIF or WebP from the Accept header, as it would for a browser, and
# otherwise keeps the input's family. The answer carries Vary: Accept, so caches keep one copy per Accept.
# Usage: sh negotiate.sh photo.jpg
set -eu
base="${IMGEDGE_URL:-http://127.0.0.1:8787}"
in="$1"

for accept in 'image/avif,image/webp,*/*' 'image/webp,*/*' '*/*'; do
  curl -sS --fail-with-body -o /dev/null \
    -w "Accept: $accept -> %{content_type}, %{size_download} bytes, Vary: %header{vary}\n" \
    -H "Accept: $accept" \
    -H 'Content-Type: application/octet-stream' \
    --data-binary "@$in" \
    "$base/api/compress?format=auto&width=320"
done
