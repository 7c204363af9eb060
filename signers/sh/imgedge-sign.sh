#!/bin/sh
# Sign an imgedge GET /img path from a shell: openssl's HMAC-SHA256 of the path as it will be requested, base64url.
# The path must already be percent-encoded as a browser sends it (spaces as %20, non-ASCII as UTF-8 %XX, # as %23).
#
#   SIGNING_KEY=... sh imgedge-sign.sh '/img/width=800,format=auto/photos/cat.jpg' [EXP]
#   # /img/width=800,format=auto/photos/cat.jpg?sig=...   (with EXP, a Unix time: ?exp=EXP&sig=...)
set -eu
path=$1
exp=${2:-}
message=$path
[ -n "$exp" ] && message="$path?exp=$exp"
sig=$(printf '%s' "$message" | openssl dgst -sha256 -hmac "$SIGNING_KEY" -binary | openssl base64 -A | tr '+/' '-_' | tr -d '=')
if [ -n "$exp" ]; then echo "$path?exp=$exp&sig=$sig"; else echo "$path?sig=$sig"; fi
