#!/usr/bin/env bash
# Rebuilds wasm/lean/lean.wasm (committed, so installing and testing never need a C toolchain).
#
#   bash wasm/lean/build.sh
#
#   bash wasm/lean/build.sh trace   # .cache/lean-build/lean-trace.wasm: reports each allocation of 64 KiB
#                                   # or more with its callers (scripts/avif-compare.mjs --wasm ...)
#
# Sources: MozJPEG 4.1.5 (a pinned commit: Debian does not package it), libwebp 1.5.0, libpng 1.6.39, zlib 1.2.13, giflib 5.2.2, dav1d 1.5.1, libavif 1.4.2,
# libaom 3.12.1, libdeflate 1.23 and Little CMS 2.16, the release tarballs as Debian ships them, checked against the SHA-256 below. Toolchain: Debian's
# clang 14, wasm-ld, wasi-libc and cmake (installed with apt when missing and running as root). Output: a WASI "reactor" that imports its memory (so each
# instance's maximum is set from JS) and exports the functions of lean.c.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
work="$root/.cache/lean-build"

sources=(
  "libw/libwebp/libwebp_1.5.0.orig.tar.gz 7d6fab70cf844bf6769077bd5d7a74893f8ffd4dfb42861745750c63c2a5c92c"
  "libp/libpng1.6/libpng1.6_1.6.39.orig.tar.gz a00e9d2f2f664186e4202db9299397f851aea71b36a35e74910b8820e380d441"
  "z/zlib/zlib_1.2.13.dfsg.orig.tar.bz2 71feb7947e3c00ef125f83b79a4e529bde31171e5babe48b391f06758d1ab0a1"
  "g/giflib/giflib_5.2.2.orig.tar.gz be7ffbd057cadebe2aa144542fd90c6838c6a083b5e8a9048b8ee3b66b29d5fb"
  "d/dav1d/dav1d_1.5.1.orig.tar.xz 401813f1f89fa8fd4295805aa5284d9aed9bc7fc1fdbe554af4292f64cbabe21"
  "liba/libavif/libavif_1.4.2.orig.tar.gz 2b645287340ba5a631d268b551dc2d72bd73ac33335962dd36dcdb6d8366921d"
  "a/aom/aom_3.12.1.orig.tar.gz 40c929a41b2a59c24319a699c358351422829b3ae646de31b18cbabed0191962"
  "libd/libdeflate/libdeflate_1.23.orig.tar.gz 1ab18349b9fb0ce8a0ca4116bded725be7dcbfa709e19f6f983d99df1fb8b25f"
  "l/lcms2/lcms2_2.16.orig.tar.gz d873d34ad8b9b4cea010631f1a6228d2087475e4dc5e763eb81acc23d9d45a51"
)

if ! command -v clang-14 >/dev/null || ! command -v wasm-ld-14 >/dev/null || ! command -v llvm-ar-14 >/dev/null || [ ! -f /usr/lib/wasm32-wasi/libc.a ] || [ ! -d /usr/share/emscripten/system/include/compat ] || ! command -v cmake >/dev/null; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    apt-get install -y -q --no-install-recommends clang-14 lld-14 llvm-14 wasi-libc libclang-rt-14-dev-wasm32 emscripten cmake make perl
  else
    echo "needs clang-14, lld-14, llvm-14, wasi-libc, libclang-rt-14-dev-wasm32, emscripten and cmake (Debian 12 packages)" >&2
    exit 1
  fi
fi

mkdir -p "$work"
cd "$work"
# shellcheck source=../sources.sh
source "$root/wasm/sources.sh"
fetch_sources "${sources[@]}"
# MozJPEG 4.1.5 (libjpeg-turbo 2.1 with trellis quantisation and scan optimisation), tag v4.1.5.
fetch_commit "mozilla/mozjpeg 6c9f0897afa1c2738d7222a0a9ab49e8b536a267 13017ca838178c57f3de6bc705d785ff3b794c50f3312674d1b11b84681e8298"

jpeg="$work/mozjpeg-6c9f0897afa1c2738d7222a0a9ab49e8b536a267"
# MozJPEG keeps an unquantised copy of every coefficient beside the quantised ones whenever it buffers them
# (progressive or optimised tables), though only trellis quantisation reads it: without trellis (libjpeg-turbo's
# behaviour, effort 0-2 and where MozJPEG does not fit), not allocating it halves the buffer, as in libjpeg-turbo.
grep -q 'imgedge: no unquantised copy' "$jpeg/jccoefct.c" || patch -s -d "$jpeg" -p1 < "$here/mozjpeg-no-unquantised-copy.patch"
# And with trellis, that copy is the whole image again (2 bytes a coefficient, 37 MiB at 12 MP 4:2:0): with
# trellis_num_loops 0, each iMCU row is quantised by trellis as it is transformed, its AC rates from the symbols of
# the rows before it, keeping one row of unquantised blocks instead (lean.c's `mozjpeg` 3).
grep -q 'imgedge: trellis in the first pass' "$jpeg/jccoefct.c" || patch -s -d "$jpeg" -p1 < "$here/mozjpeg-one-pass-trellis.patch"
# Huffman coding of a block (baseline: counting symbols for optimised tables, then writing them) visits only the
# coefficients that are not zero, found with SIMD128, and counts bits with clz, as on Arm; the same bytes.
grep -q 'imgedge: which of a block' "$jpeg/jchuff.c" || patch -s -d "$jpeg" -p1 < "$here/mozjpeg-huffman-nonzero.patch"
# WebAssembly has 32-bit pointers but 64-bit integer registers, as the x32 ABI has: Huffman decoding and encoding
# keep 64 bits in their bit buffers, as on x32, so that they refill and flush a quarter as often; the same bytes.
grep -q 'imgedge: WebAssembly has 32-bit pointers' "$jpeg/jdhuff.h" || patch -s -d "$jpeg" -p1 < "$here/mozjpeg-wasm-bit-buffer.patch"
# A progressive JPEG's coefficients wait for its last scan in a store of compressed block rows (jmem_compact.c, in
# place of jmemnobs.c): jmemmgr tells the store how long a row is.
grep -q 'imgedge: block rows' "$jpeg/jmemmgr.c" || patch -s -d "$jpeg" -p1 < "$here/mozjpeg-block-store.patch"
webp="$work/libwebp-1.5.0"
png="$work/libpng-1.6.39"
zlib="$work/zlib-1.2.13.dfsg"
gif="$work/giflib-5.2.2"
dav1d="$work/dav1d-1.5.1"
avif="$work/libavif-1.4.2"
aom="$work/aom-3.12.1"
deflate="$work/libdeflate-1.23"
lcms="$work/lcms2-2.16"
# PNG output deflates a chunk of rows at a time (sink_png.c): every block libdeflate writes is left non-final
# and its stream ends with an empty stored block, so that the chunks' streams concatenate into one.
grep -q 'imgedge: no block is final' "$deflate/lib/deflate_compress.c" || patch -s -d "$deflate" -p1 < "$here/libdeflate-sync-flush.patch"

# The headers MozJPEG's CMake would generate, for an 8-bit build without SIMD, with arithmetic coding.
sed -e 's/@JPEG_LIB_VERSION@/62/' -e 's/@VERSION@/4.1.5/' -e 's/@LIBJPEG_TURBO_VERSION_NUMBER@/4001005/' \
    -e 's/@BITS_IN_JSAMPLE@/8/' -e 's/#cmakedefine \(MEM_SRCDST\|C_ARITH_CODING\|D_ARITH_CODING\)_SUPPORTED 1/#define \1_SUPPORTED 1/' \
    -e 's/#cmakedefine .*//' "$jpeg/jconfig.h.in" > "$jpeg/jconfig.h"
sed -e 's/@BUILD@/imgedge/' -e 's/@INLINE@/__inline__ __attribute__((always_inline))/' -e 's/@THREAD_LOCAL@//' \
    -e 's/@CMAKE_PROJECT_NAME@/mozjpeg/' -e 's/@VERSION@/4.1.5/' -e 's/@SIZE_T@/4/' \
    -e 's/#cmakedefine HAVE_BUILTIN_CTZL/#define HAVE_BUILTIN_CTZL/' -e 's/#cmakedefine .*//' \
    "$jpeg/jconfigint.h.in" > "$jpeg/jconfigint.h"
sed -e 's/@COPYRIGHT_YEAR@/2023/' "$jpeg/jversion.h.in" > "$jpeg/jversion.h"

# libpng's own default configuration, less setjmp and the simplified API built on it: wasi-libc has no
# setjmp/longjmp, and errors never return to libpng anyway (png.c's handler ends in the `fail` import,
# which throws out of the instance).
sed -e '/^#define PNG_\(SETJMP\|SIMPLIFIED_[A-Z_]*\)_SUPPORTED$/d' "$png/scripts/pnglibconf.h.prebuilt" > "$png/pnglibconf.h"

jpeg_sources="jcapimin jcapistd jccoefct jccolor jcdctmgr jcext jchuff jcicc jcinit jcmainct jcmarker jcmaster
  jcomapi jcparam jcphuff jcprepct jcsample jdapimin jdapistd jdatadst jdatasrc jdcoefct jdcolor jddctmgr
  jdhuff jdicc jdinput jdmainct jdmarker jdmaster jdmerge jdphuff jdpostct jdsample jerror jfdctint
  jidctint jidctred jutils jmemmgr jsimd_none jquant1 jquant2 jfdctflt jfdctfst jidctflt jidctfst jaricom jcarith jdarith"
# libwebp's SSE2 code, compiled to WebAssembly SIMD through Emscripten's SSE2 headers (which map each
# intrinsic onto wasm_simd128.h); EMSCRIPTEN makes libwebp's CPU check report SSE2 on wasm.
compat=/usr/share/emscripten/system/include/compat
flags=(--target=wasm32-wasi --sysroot=/usr -O3 -msimd128 -flto -DNDEBUG -Wno-everything -ffunction-sections -fdata-sections)
sse="$work/sse"
mkdir -p "$sse"
for header in xmmintrin.h emmintrin.h; do ln -sf "$compat/$header" "$sse/$header"; done
webp_flags=(-I"$sse" -I"$webp" -I"$webp/src" -D__SSE__ -D__SSE2__ -DEMSCRIPTEN)

# libaom for AVIF output (sink_avif.c) through its own CMake build, as a static library of LLVM bitcode (linked
# with LTO below), rebuilt when its configuration changes: an AV1 encoder only, no threads, no run-time CPU
# detection (the generic C code, which clang may vectorise with WebAssembly SIMD), 8-bit only. Its error path
# leaves through longjmp, which wasi-libc lacks: wasm/shim/setjmp.h turns it into a call that throws out of
# the instance.
aom_config=(-DCMAKE_TOOLCHAIN_FILE="$here/wasm32-wasi.cmake" -DCMAKE_BUILD_TYPE=Release
  -DCMAKE_C_FLAGS="${flags[*]} -I$root/wasm/shim" -DCMAKE_C_FLAGS_RELEASE=""
  -DAOM_TARGET_CPU=generic -DCONFIG_AV1_DECODER=0 -DCONFIG_MULTITHREAD=0 -DCONFIG_RUNTIME_CPU_DETECT=0
  -DCONFIG_AV1_HIGHBITDEPTH=0 -DCONFIG_DENOISE=0 -DCONFIG_LIBYUV=0 -DCONFIG_WEBM_IO=0 -DCONFIG_PIC=0
  -DCONFIG_OS_SUPPORT=0 -DENABLE_TESTS=0 -DENABLE_EXAMPLES=0 -DENABLE_TOOLS=0 -DENABLE_DOCS=0 -DENABLE_TESTDATA=0)
stamp="$(printf '%s\n' "${aom_config[@]}" "$(sha256sum "$root/wasm/shim/setjmp.h" "$root/wasm/shim/pthread.h" "$here/wasm32-wasi.cmake")" | sha256sum)"
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
for name in $jpeg_sources; do
  case "$name" in
    # MozJPEG's SIMD seam: our WebAssembly SIMD128 colour conversions, DCTs (and the 1/2- and 1/4-scale IDCTs), quantisation, downsampling and fancy upsampling (jsimd_wasm.c) in place of jsimd_none.c's
    # (renamed aside here), whose other entries (every jsimd_can_* answering 0) stay.
    jsimd_none) jobs+=("$jpeg/$name.c|-I$jpeg -Djsimd_can_ycc_rgb=none_can_ycc_rgb -Djsimd_ycc_rgb_convert=none_ycc_rgb_convert -Djsimd_can_rgb_ycc=none_can_rgb_ycc -Djsimd_rgb_ycc_convert=none_rgb_ycc_convert -Djsimd_can_idct_islow=none_can_idct_islow -Djsimd_idct_islow=none_idct_islow -Djsimd_can_quantize=none_can_quantize -Djsimd_quantize=none_quantize -Djsimd_can_fdct_islow=none_can_fdct_islow -Djsimd_fdct_islow=none_fdct_islow -Djsimd_can_convsamp=none_can_convsamp -Djsimd_convsamp=none_convsamp -Djsimd_can_h2v2_downsample=none_can_h2v2_downsample -Djsimd_h2v2_downsample=none_h2v2_downsample -Djsimd_can_h2v2_fancy_upsample=none_can_h2v2_fancy_upsample -Djsimd_h2v2_fancy_upsample=none_h2v2_fancy_upsample -Djsimd_can_h2v1_fancy_upsample=none_can_h2v1_fancy_upsample -Djsimd_h2v1_fancy_upsample=none_h2v1_fancy_upsample -Djsimd_can_idct_4x4=none_can_idct_4x4 -Djsimd_idct_4x4=none_idct_4x4 -Djsimd_can_idct_2x2=none_can_idct_2x2 -Djsimd_idct_2x2=none_idct_2x2") ;;
    *) jobs+=("$jpeg/$name.c|-I$jpeg") ;;
  esac
done
jobs+=("$here/jsimd_wasm.c|-I$jpeg")
jobs+=("$here/jmem_compact.c|-I$jpeg")
for dir in src/enc src/dsp src/utils sharpyuv; do
  for f in "$webp/$dir"/*.c; do
    case "$f" in *_neon.c|*_sse41.c|*_mips*.c|*_msa.c|*_avx2.c) continue ;; esac
    jobs+=("$f|${webp_flags[*]}")
  done
done
jobs+=("$here/lean.c|-I$jpeg -I$lcms/include ${webp_flags[*]}")
# libpng's reader and zlib's inflater for PNG input (png.c); PNG output is sink_png.c's own, with libdeflate.
for name in png pngerror pngget pngmem pngread pngrio pngrtran pngrutil pngset pngtrans; do jobs+=("$png/$name.c|-I$zlib"); done
for name in adler32 crc32 inffast inflate inftrees zutil; do jobs+=("$zlib/$name.c|"); done
jobs+=("$here/png.c|-I$png -I$zlib -I$lcms/include")
for name in deflate_compress adler32 crc32 utils; do jobs+=("$deflate/lib/$name.c|-I$deflate"); done
jobs+=("$here/sink_png.c|-I$deflate")
jobs+=("$here/sink_webpll.c|")
jobs+=("$here/pipeline.c|-I$lcms/include")
# Little CMS for colour management (colour.c): every source's profile to sRGB, and CMYK JPEGs. No threads in wasi-libc.
for f in "$lcms"/src/*.c; do jobs+=("$f|-I$lcms/include -DCMS_NO_PTHREADS=1"); done
jobs+=("$here/colour.c|-I$lcms/include -DCMS_NO_PTHREADS=1")
jobs+=("$here/resample.c|")
# The filters after the resample, trim=border's sink, gravity=auto's saliency map and its preview's block means: one file an operation.
for name in op_blur op_sharpen op_adjust op_trim op_saliency op_shrink; do jobs+=("$here/$name.c|"); done
jobs+=("$here/quant.c|")
jobs+=("$here/score.c|")
# libwebp's decoder for WebP input (webp_dec.c); what it uses of src/dsp and src/utils is built above.
for f in "$webp"/src/dec/*.c; do jobs+=("$f|${webp_flags[*]}"); done
jobs+=("$here/webp_dec.c|-I$lcms/include ${webp_flags[*]}")
# giflib's decoder, for GIF input (gif_dec.c).
for name in dgif_lib gif_err gifalloc openbsd-reallocarray; do jobs+=("$gif/$name.c|-I$gif"); done
jobs+=("$here/gif_dec.c|-I$gif -I$lcms/include")
# Animations (frames.c): every GIF frame composited (anim_gif.c), libwebp's demuxer and animation decoder for animated
# WebP input and its muxer and animation encoder for animated WebP output (anim_webp.c).
for dir in src/demux src/mux; do for f in "$webp/$dir"/*.c; do jobs+=("$f|${webp_flags[*]}"); done; done
jobs+=("$here/anim_gif.c|-I$gif -I$lcms/include")
jobs+=("$here/anim_webp.c|-I$lcms/include ${webp_flags[*]}")
jobs+=("$here/frames.c|")
# dav1d for AVIF input (avif_dec.c): its C code only, configured by hand (dav1d/config.h) instead of meson, the
# pixel templates built once for 8-bit and once for 16-bit samples (10 and 12 bits).
# Not link-time optimised: clang 14 with -msimd128 and LTO together miscompiles dav1d (a lossless AVIF's Y plane
# came out offset by about 124), while either alone, and this, decode every test AVIF bit-exactly as a native build.
dav1d_flags="-fno-lto -I$here/dav1d -I$root/wasm/shim -I$dav1d -I$dav1d/include -I$dav1d/include/dav1d -I$dav1d/src -D_GNU_SOURCE"
for name in cdf cpu ctx data decode dequant_tables getbits intra_edge itx_1d lf_mask lib log mem msac obu pal picture qm ref \
  refmvs scan tables thread_task warpmv wedge; do jobs+=("$dav1d/src/$name.c|$dav1d_flags"); done
mkdir -p "$work/dav1d-tmpl"
for name in cdef_apply cdef fg_apply filmgrain ipred_prepare ipred itx lf_apply loopfilter looprestoration lr_apply mc recon; do
  for depth in 8 16; do
    printf '#define BITDEPTH %s\n#include "%s"\n' "$depth" "$dav1d/src/${name}_tmpl.c" > "$work/dav1d-tmpl/${name}_$depth.c"
    jobs+=("$work/dav1d-tmpl/${name}_$depth.c|$dav1d_flags")
  done
done
# libavif: its reader with dav1d (avif_dec.c), its writer with libaom (sink_avif.c), its YUV <-> RGB conversions
# with libwebp's libsharpyuv for lossy output (no libyuv: its stub; no scale.c, which needs libyuv and which
# neither path calls).
avif_flags="-I$avif/include -I$root/wasm/shim -I$dav1d/include -I$aom -I$work/aom-build -I$webp -DAVIF_CODEC_DAV1D=1 -DAVIF_CODEC_AOM=1 -DAVIF_CODEC_AOM_ENCODE=1 -DAVIF_LIBSHARPYUV_ENABLED=1"
for name in alpha avif codec_aom codec_dav1d colr colrconvert diag exif gainmap io mem obu properties rawdata read reformat \
  reformat_libsharpyuv reformat_libyuv sampletransform stream utils write; do jobs+=("$avif/src/$name.c|$avif_flags"); done
jobs+=("$here/avif_dec.c|$avif_flags -I$lcms/include")
jobs+=("$here/sink_avif.c|$avif_flags")
printf '%s\n' "${jobs[@]}" | xargs -P "$(nproc)" -I{} bash -c '
  src="${1%%|*}"; extra="${1#*|}"
  out="$2/$(echo "$src" | tr / _).o"
  clang-14 '"${flags[*]}"' $extra -c "$src" -o "$out"' _ {} "$objects"

link=(/usr/lib/wasm32-wasi/crt1-reactor.o "$work/aom-build/libaom.a" -L/usr/lib/wasm32-wasi -lc
  /usr/lib/llvm-14/lib/clang/14.0.6/lib/wasi/libclang_rt.builtins-wasm32.a)
if [ "${1:-}" = trace ]; then
  clang-14 "${flags[@]}" $avif_flags -DLEAN_TRACE -c "$here/sink_avif.c" -o "$work/trace_sink.o"
  wasm-ld-14 --no-entry --import-memory --initial-memory=2097152 -z stack-size=524288 --stack-first --gc-sections \
    --lto-O3 --export=_initialize --wrap=malloc --wrap=free --wrap=calloc --wrap=realloc \
    "$work/trace_sink.o" $(ls "$objects"/*.o | grep -v sink_avif) "${link[@]}" -o "$work/lean-trace.wasm"
  ls -l "$work/lean-trace.wasm"
  exit 0
fi

# Linked by wasm-ld itself: the clang driver would run any wasm-opt on PATH (Emscripten's is) without
# the SIMD feature flag, and fail. The stack comes first, so an overflow traps instead of writing over
# static data; libaom keeps some large blocks on the stack. The stack pointer and the heap's start are
# exported so that wasm/lean.ts can reset one instance to its state at instantiation between conversions.
wasm-ld-14 --no-entry --import-memory --initial-memory=2097152 -z stack-size=524288 --stack-first \
  --gc-sections --strip-all --lto-O3 --export=_initialize --export=__stack_pointer --export=__heap_base \
  "$objects"/*.o "${link[@]}" -o "$here/lean.wasm"
# The binary carries these libraries: their licence texts go with it.
mkdir -p "$here/licenses"
rm -f "$here/licenses/libjpeg-turbo-LICENSE.md" "$here/licenses/libjpeg-turbo-README.ijg"
cp "$jpeg/LICENSE.md" "$here/licenses/mozjpeg-LICENSE.md"
cp "$jpeg/README.ijg" "$here/licenses/mozjpeg-README.ijg"
cp "$webp/COPYING" "$here/licenses/libwebp-COPYING"
cp "$webp/PATENTS" "$here/licenses/libwebp-PATENTS"
cp "$png/LICENSE" "$here/licenses/libpng-LICENSE"
cp "$gif/COPYING" "$here/licenses/giflib-COPYING"
cp "$dav1d/COPYING" "$here/licenses/dav1d-COPYING"
cp "$avif/LICENSE" "$here/licenses/libavif-LICENSE"
cp "$aom/LICENSE" "$here/licenses/libaom-LICENSE"
cp "$aom/PATENTS" "$here/licenses/libaom-PATENTS"
cp "$deflate/COPYING" "$here/licenses/libdeflate-COPYING"
cp "$lcms/LICENSE" "$here/licenses/lcms2-LICENSE"
# zlib 1.2.13 ships its licence as the last section of its README.
sed -n '/^Copyright notice:/,$p' "$zlib/README" > "$here/licenses/zlib-LICENSE"
# The build's identity, for what caches the codec's output (GET /img's ETags): test/install/build-id.test.ts checks it.
cat > "$here/../build-id.ts" <<EOF
/** The first 16 hex digits of lean.wasm's SHA-256, written by build.sh: answers made by another build are other bytes. */
export const LEAN_BUILD = '$(sha256sum "$here/lean.wasm" | cut -c1-16)'
EOF
ls -l "$here/lean.wasm"
