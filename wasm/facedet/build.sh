#!/usr/bin/env bash
# Rebuilds wasm/facedet/facedet.wasm (committed, so installing and testing never need a C++ toolchain).
#
#   bash wasm/facedet/build.sh
#
# Source: libfacedetection (Shiqi Yu, BSD-3-Clause: wasm/facedet/LICENSE), a pinned commit (Debian does not package
# it); its four files in src/ are checked against the SHA-256 below. Toolchain: Debian's clang++ 14, wasm-ld, wasi-libc
# and libc++ for wasm32. Output: a WASI "reactor" that imports its memory (each instance's maximum is set from JS,
# wasm/faces.ts) and exports detect.cpp's functions.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
work="$root/.cache/facedet-build"
commit=acf7b254121927e7dced30e233a2e03119f28ea2
files=(
  "src/facedetectcnn.h 896ad9cae317d1ebce947662ea44d7d1c3f12cd77606da977c0adea9c5625605"
  "src/facedetectcnn.cpp e86cbb3f4080762197d0a43b98f3534e08fe890a7eed5c5904e395b8bed4a55d"
  "src/facedetectcnn-model.cpp 0c5689b7070c070429a2c45eb3ae7f02018e492db94b0a3eb660681e9ca0aee6"
  "src/facedetectcnn-data.cpp cf019963f413528540d6de741e72eea4f2f0b572ca85b22dd4baa8fc71b42bb6"
)

if ! command -v clang++-14 >/dev/null || ! command -v wasm-ld-14 >/dev/null || [ ! -f /usr/lib/wasm32-wasi/libc++.a ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    apt-get install -y -q --no-install-recommends clang-14 lld-14 wasi-libc libclang-rt-14-dev-wasm32 libc++-14-dev-wasm32 libc++abi-14-dev-wasm32
  else
    echo "needs clang-14, lld-14, wasi-libc, libclang-rt-14-dev-wasm32, libc++-14-dev-wasm32 and libc++abi-14-dev-wasm32 (Debian 12 packages)" >&2
    exit 1
  fi
fi

mkdir -p "$work"
cd "$work"
src="libfacedetection-$commit"
[ -d "$src" ] || curl -fsSL "https://codeload.github.com/ShiqiYu/libfacedetection/tar.gz/$commit" | tar xzf - "$src/src"
for entry in "${files[@]}"; do
  read -r path sum <<<"$entry"
  echo "$sum  $src/$path" | sha256sum -c --quiet
done

# The CNN prints its rare errors to std::cerr: quiet.h stands in for <iostream>, so no stream is linked.
rm -rf quiet && mkdir quiet
for f in "$src"/src/*; do
  sed -e 's|#include <iostream>|#include "quiet.h"|' -e 's|std::cerr|quiet_stream|g' -e 's|std::endl|quiet_end|g' \
    -e 's|std::ostream|QuietStream|g' -e 's|const QuietStream &operator<<|const QuietStream \&operator<<|' "$f" >"quiet/$(basename "$f")"
done
echo '#define FACEDETECTION_EXPORT' >quiet/facedetection_export.h

flags=(--target=wasm32-wasi --sysroot=/usr -O3 -msimd128 -ffast-math -flto -DNDEBUG -Wno-everything -fno-exceptions
  -ffunction-sections -fdata-sections -I"$here" -Iquiet)
pids=()
for f in quiet/facedetectcnn.cpp quiet/facedetectcnn-model.cpp quiet/facedetectcnn-data.cpp "$here/detect.cpp"; do
  clang++-14 "${flags[@]}" -c "$f" -o "$(basename "$f" .cpp).o" &
  pids+=($!)
done
for pid in "${pids[@]}"; do wait "$pid"; done
wasm-ld-14 --no-entry --import-memory --initial-memory=2097152 -z stack-size=262144 --stack-first --gc-sections --strip-all \
  --lto-O3 --export=_initialize --export=__heap_base \
  facedetectcnn.o facedetectcnn-model.o facedetectcnn-data.o detect.o /usr/lib/wasm32-wasi/crt1-reactor.o \
  -L/usr/lib/wasm32-wasi -lc++ -lc++abi -lc /usr/lib/llvm-14/lib/clang/14.0.6/lib/wasi/libclang_rt.builtins-wasm32.a \
  -o "$here/facedet.wasm"
ls -l "$here/facedet.wasm"
