#!/bin/sh
# Compress an image to WebP at quality 75, scaled down to 320 px wide, and print the answer's headers.
# Usage: sh compress.sh photo.jpg [out.webp]
set -eu
base="${IMGEDGE_URL:-http://127.0.0.1:8787}"
in="$1"
# The default output name is never the input's (photo.webp in gives photo.imgedge.webp out).
out="${2:-${in%.*}.imgedge.webp}"

# --data-binary sends the file byte for byte; the server sniffs the format from the bytes.
# --fail-with-body: on an error, curl exits non-zero and the problem+json body is what lands in $out.
curl -sS --fail-with-body -o "$out" -D - \
  -H 'Content-Type: application/octet-stream' \
  --data-binary "@$in" \
  "$base/api/compress?format=webp&quality=75&width=320" || { cat "$out" >&2; exit 1; }

echo "wrote $out"
