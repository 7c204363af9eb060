#!/bin/sh
# The JSON answer: the statistics and the image, base64-encoded, in one body.
# Accept: application/json asks for it (response=json in the query does too).
# Usage: sh json-answer.sh photo.jpg [out]    (needs jq)
set -eu
base="${IMGEDGE_URL:-http://127.0.0.1:8787}"
in="$1"

answer=$(curl -sS --fail-with-body \
  -H 'Accept: application/json' \
  -H 'Content-Type: application/octet-stream' \
  --data-binary "@$in" \
  "$base/api/compress?format=webp&width=320") || { echo "$answer" >&2; exit 1; }

# Everything but the image, then the image itself decoded to a file named by the server.
echo "$answer" | jq 'del(.image)'
# The answer's filename has the input's stem: .imgedge keeps it from overwriting the input.
out="${2:-$(echo "$answer" | jq -r '.filename | sub("(?<e>\\.[^.]*)$"; ".imgedge\(.e)")')}"
echo "$answer" | jq -r .image | base64 -d > "$out"
echo "wrote $out"
