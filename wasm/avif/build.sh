#!/usr/bin/env bash
# Rebuilds wasm/avif/avif.wasm (committed, so installing and testing never need a C toolchain).
#
#   bash wasm/avif/build.sh
#   bash wasm/avif/build.sh trace   # .cache/avif-build/avif-trace.wasm: reports each allocation of 64 KiB
#                                   # or more with its callers (scripts/avif-compare.mjs --wasm ...)
#
# Sources: libaom 3.12.1 and libavif 1.4.2 as Debian ships them (trixie and sid), and libwebp 1.5.0 for
# libsharpyuv (the tarball wasm/lean/build.sh uses), checked against the SHA-256 below. Toolchain:
# Debian's clang 14, wasm-ld, wasi-libc and cmake. Output: a WASI "reactor" that imports its memory (so
# each instance's maximum is set from JS) and exports the ae_* functions of avif_sink.c.
#
# libaom is built as an AV1 encoder only: no decoder, no threads, no run-time CPU detection (the
# generic C code, which clang may vectorise with WebAssembly SIMD), 8-bit only. Its error path leaves
# through longjmp, which wasi-libc lacks: shim/setjmp.h turns it into a call that throws out of the
# instance.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
work="$root/.cache/avif-build"

sources=(
  "a/aom/aom_3.12.1.orig.tar.gz 40c929a41b2a59c24319a699c358351422829b3ae646de31b18cbabed0191962"
  "liba/libavif/libavif_1.4.2.orig.tar.gz 2b645287340ba5a631d268b551dc2d72bd73ac33335962dd36dcdb6d8366921d"
  "libw/libwebp/libwebp_1.5.0.orig.tar.gz 7d6fab70cf844bf6769077bd5d7a74893f8ffd4dfb42861745750c63c2a5c92c"
)

if ! command -v clang-14 >/dev/null || ! command -v wasm-ld-14 >/dev/null || ! command -v llvm-ar-14 >/dev/null || [ ! -f /usr/lib/wasm32-wasi/libc.a ] || ! command -v cmake >/dev/null; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    apt-get install -y -q --no-install-recommends clang-14 lld-14 llvm-14 wasi-libc libclang-rt-14-dev-wasm32 cmake make perl
  else
    echo "needs clang-14, lld-14, llvm-14, wasi-libc, libclang-rt-14-dev-wasm32 and cmake (Debian 12 packages)" >&2
    exit 1
  fi
fi

mkdir -p "$work"
cd "$work"
# shellcheck source=../sources.sh
source "$root/wasm/sources.sh"
fetch_sources "${sources[@]}"

aom="$work/aom-3.12.1"
avif="$work/libavif-1.4.2"
webp="$work/libwebp-1.5.0"
flags=(--target=wasm32-wasi --sysroot=/usr -O3 -msimd128 -flto -DNDEBUG -Wno-everything -ffunction-sections -fdata-sections)

# libaom through its own CMake build, as a static library of LLVM bitcode (linked with LTO below);
# rebuilt when its configuration changes.
aom_config=(-DCMAKE_TOOLCHAIN_FILE="$here/wasm32-wasi.cmake" -DCMAKE_BUILD_TYPE=Release
  -DCMAKE_C_FLAGS="${flags[*]} -I$here/shim" -DCMAKE_C_FLAGS_RELEASE=""
  -DAOM_TARGET_CPU=generic -DCONFIG_AV1_DECODER=0 -DCONFIG_MULTITHREAD=0 -DCONFIG_RUNTIME_CPU_DETECT=0
  -DCONFIG_AV1_HIGHBITDEPTH=0 -DCONFIG_DENOISE=0 -DCONFIG_LIBYUV=0 -DCONFIG_WEBM_IO=0 -DCONFIG_PIC=0
  -DCONFIG_OS_SUPPORT=0 -DENABLE_TESTS=0 -DENABLE_EXAMPLES=0 -DENABLE_TOOLS=0 -DENABLE_DOCS=0 -DENABLE_TESTDATA=0)
stamp="$(printf '%s\n' "${aom_config[@]}" "$(sha256sum "$here/shim/setjmp.h" "$here/wasm32-wasi.cmake")" | sha256sum)"
if [ ! -f "$work/aom-build/libaom.a" ] || [ "$(cat "$work/aom-build/.imgedge-stamp" 2>/dev/null)" != "$stamp" ]; then
  rm -rf "$work/aom-build"
  mkdir -p "$work/aom-build"
  (cd "$work/aom-build" && cmake "$aom" "${aom_config[@]}" >/dev/null && make -j"$(nproc)" aom >/dev/null)
  echo "$stamp" > "$work/aom-build/.imgedge-stamp"
fi

objects="$work/obj"
rm -rf "$objects"
mkdir -p "$objects"
jobs=()
avif_flags="-I$root/wasm/shim -I$avif/include -I$avif/third_party/libyuv/include -I$aom -I$work/aom-build -I$webp -I$here/shim -DAVIF_CODEC_AOM=1 -DAVIF_CODEC_AOM_ENCODE=1 -DAVIF_LIBSHARPYUV_ENABLED=1"
for name in alpha avif codec_aom colr colrconvert diag exif gainmap io mem obu properties rawdata read reformat \
  reformat_libsharpyuv reformat_libyuv sampletransform scale stream utils write; do
  jobs+=("$avif/src/$name.c|$avif_flags")
done
# libavif's copy of the parts of libyuv it scales with (as its CMake build adds them without libyuv).
for name in scale scale_common scale_any row_common planar_functions; do
  jobs+=("$avif/third_party/libyuv/source/$name.c|$avif_flags")
done
for name in sharpyuv sharpyuv_cpu sharpyuv_csp sharpyuv_dsp sharpyuv_gamma; do jobs+=("$webp/sharpyuv/$name.c|-I$webp"); done
jobs+=("$here/avif_sink.c|$avif_flags")
printf '%s\n' "${jobs[@]}" | xargs -P "$(nproc)" -I{} bash -c '
  src="${1%%|*}"; extra="${1#*|}"
  out="$2/$(echo "$src" | tr / _).o"
  clang-14 '"${flags[*]}"' $extra -c "$src" -o "$out"' _ {} "$objects"

link=(/usr/lib/wasm32-wasi/crt1-reactor.o "$work/aom-build/libaom.a" -L/usr/lib/wasm32-wasi -lc
  /usr/lib/llvm-14/lib/clang/14.0.6/lib/wasi/libclang_rt.builtins-wasm32.a)
if [ "${1:-}" = trace ]; then
  clang-14 "${flags[@]}" $avif_flags -DAE_TRACE -c "$here/avif_sink.c" -o "$work/trace_sink.o"
  wasm-ld-14 --no-entry --import-memory --initial-memory=2097152 -z stack-size=524288 --stack-first --gc-sections \
    --lto-O3 --export=_initialize --wrap=malloc --wrap=free --wrap=calloc --wrap=realloc \
    "$work/trace_sink.o" $(ls "$objects"/*.o | grep -v avif_sink) "${link[@]}" -o "$work/avif-trace.wasm"
  ls -l "$work/avif-trace.wasm"
  exit 0
fi

# Linked by wasm-ld itself (see wasm/lean/build.sh). The stack comes first, so an overflow traps
# instead of writing over static data; libaom keeps some large blocks on the stack.
wasm-ld-14 --no-entry --import-memory --initial-memory=2097152 -z stack-size=524288 --stack-first \
  --gc-sections --strip-all --lto-O3 --export=_initialize "$objects"/*.o "${link[@]}" -o "$here/avif.wasm"
# The binary carries these libraries: their licence texts go with it.
mkdir -p "$here/licenses"
cp "$aom/LICENSE" "$here/licenses/libaom-LICENSE"
cp "$aom/PATENTS" "$here/licenses/libaom-PATENTS"
cp "$avif/LICENSE" "$here/licenses/libavif-LICENSE"
cp "$webp/COPYING" "$here/licenses/libwebp-COPYING"
cp "$webp/PATENTS" "$here/licenses/libwebp-PATENTS"
ls -l "$here/avif.wasm"
