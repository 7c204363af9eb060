import { AVIF_WHOLE_PIXELS } from '../../wasm'
import { CODECS, type FormatId, type OutputFormat } from '../codecs/registry'
import type { EncodeSettings } from '../codecs/types'
import type { Limits } from '../env'
import { ApiError } from '../errors'
import { sampleSpansOf, type Span } from './auto-quality'
import type { FoundGravity } from './found-gravity'
import { type ImageHeader, uprightSize } from './sniff'
import { filtersMiB } from './filters'
import { DECODE_MARGIN, DECODE_SCALES, decodeScale, type Geometry, isIdentity } from './transform'

/**
 * The memory model: estimated peak growth of the isolate, in MiB, for one conversion, fitted to the
 * measurements in docs/results/memory.md (peak RSS growth of workerd; scripts/measure-memory.mjs). Every
 * term is linear in megapixels: decoding holds the decoder's linear memory and the RGBA copy handed
 * to JS; resizing copies the pixels into the resampler, whose output is a view of its memory;
 * encoding copies them into the encoder, whose working memory comes on top. Dropped instances are
 * not reliably collected before the next step grows, so the terms add up.
 */
export const MEMORY_MODEL = {
  /** Per request: body buffers, JS objects, first use of a codec. */
  baseMiB: 12,
  /**
   * gravity=auto's preview pass (`preview`), outside the lean memory: the preview copied out to JS and its saliency map
   * copied back (op_saliency.c computes it in the lean memory), garbage until V8 collects them. A 12 MP JPEG to a 640 px
   * WebP cover measured 34.3 MiB with the preview decoded on its own against 25.3 centred (the rows a pass keeps for
   * the conversion: `rows.keptPerMP`), while the map was still computed in JavaScript, with its float planes: a bound
   * from above (with 853x640 kept, 2.2 MiB, it measures 30.7).
   */
  previewMiB: 8,
  /**
   * gravity=face: the face detector's memory (wasm/faces.ts), outside the lean memory: one instance the isolate keeps,
   * whose CNN grows it to 3.9 MiB for a 256x192 preview, 4.9 for 256x256 (5.1 after a detection that ran out of it),
   * charged to every gravity=face request (the first one grows it).
   */
  facesMiB: 6,
  /**
   * MiB per decoded megapixel while decoding a whole image (the `pixels` route: animated WebP and PNG; every
   * GIF and AVIF takes the row pipeline). JPEG, PNG and WebP are decoded by the lean codec (JPEG at its
   * DCT-scaled size, WebP shrunk by libwebp's scaler) and their pixels are a view of the decoder's memory,
   * not a copy. A PNG's file comes on top (`pngFile`).
   */
  decodePerMP: { jpeg: 5.5, png: 4.5, webp: 5.5 } as Readonly<Partial<Record<FormatId, number>>>,
  /**
   * A PNG's decoder holds its file twice (the request body, and its copy in the lean memory) beside
   * libpng's and zlib's state: fixed MiB plus MiB per MiB of file. A screenshot's file is a tenth of a
   * photo's per pixel (0.3 against 1.7 MiB per MP), so the file is charged, not the pixels. Without the
   * file's size (a plan made from a header alone), a photo's 1.7 MiB per MP is assumed.
   */
  pngFile: { baseMiB: 5, perFileMiB: 2, assumedMiBPerMP: 1.7 },
  /**
   * Extra MiB per input megapixel of a WebP whose decoder holds more than the pixels it writes: a
   * lossless one keeps the whole image as ARGB (4 B/px), a lossy one with alpha its alpha plane and
   * the ALPH chunk's own lossless image (6 B/px). An animation's frames are not looked into, so it
   * is charged too. 10, not the 6.5 first fitted: a 4 MP WebP with alpha to PNG measured 168.9 MiB.
   */
  webpHeldPerMP: 10,
  /** Fixed MiB on top of baseMiB for WebP input (libwebp's decoder in the lean instance; 1 MP measured 3-4 MiB above JPEG's). */
  webpInputMiB: 3,
  /**
   * A progressive JPEG's coefficients, which its decoder keeps until the last scan in a store of compressed block rows
   * (wasm/lean/jmem_compact.c): 4.5 MiB per MiB of file (a nonzero coefficient takes at least 2 bits of file and a
   * byte of store, 2-3 bytes only for values that take 8 bits or more of file; an eighth more as room to grow), MiB per
   * MP for each block's count, mask and DC (at
   * most 11 bytes a block, 4:4:4), and the strips of block rows libjpeg works on, 0.92 MiB per 1000 px of width
   * (4 x 5 iMCU rows of every component). The store keeps a block as it is where that is smaller, so it never holds
   * more than libjpeg's arrays and a byte a block (`mostPerMP`, 4:4:4's 6 bytes a pixel). Without the file's size, every
   * coefficient as libjpeg holds them uncompressed (2 bytes each, 3 MiB per MP at 4:2:0). A 24 MP one of 3.8 MiB grew
   * the lean memory by 19 MiB, against 70 MiB for the coefficients themselves.
   */
  progressiveJpeg: { perFileMiB: 4.5, perMP: 0.5, perKpxWide: 1, mostPerMP: 5.8, assumedPerMP: 3 },
  /**
   * The lean codec's one-pass conversions at the same size (see `Route`): fixed MiB (instance: 4 since
   * libaom's tables are in it, a 1 MP WebP to WebP measuring 21.6 MiB against 22 with 2), plus MiB per megapixel:
   * WebP holds its YUV planes and encoder state; JPEG holds the compressor's coefficients, plus the
   * decoded RGB when the orientation turns the image or the source is a WebP.
   */
  transcode: { baseMiB: 4, perMP: { 'jpeg-to-webp': 4.8, 'jpeg-to-jpeg': 4.5, 'jpeg-to-jpeg-turned': 7, 'webp-to-webp': 5.2 } },
  /** libjpeg-turbo encoding RGBA from JS (`turbo`): the copy in, the compressor's coefficients. */
  turboJpegEncode: { baseMiB: 2, perMP: 8 },
  /**
   * Of the lean encoders' per-MP terms (WebP, libjpeg-turbo), the copy of the RGBA pixels into the
   * codec. Pixels that a lean step left in the conversion's lean memory (a lean decoder's, or the
   * resampler's) are handed over by address instead, unless JavaScript touched them on the way
   * (padding, an EXIF turn of a PNG or WebP, flattening alpha for JPEG). libjpeg-turbo saves less than
   * the copy (a 4 MP PNG to JPEG measured 67.9 MiB, 1 over the full 4).
   */
  copyInPerMP: { webp: 4, jpeg: 3 },
  /**
   * Resampling (the lean codec's, row by row): fixed MiB plus MiB per input (after the crop) and per
   * output megapixel: its copy of the input and its output, a view handed to the encoder.
   */
  resize: { baseMiB: 4, inputPerMP: 4, outputPerMP: 4 },
  /**
   * Encoding whole RGBA pixels (the `pixels` route): fixed MiB plus MiB per output megapixel, of which
   * `copyInPerMP` is the copy into the codec where the pixels were not handed over. MozJPEG's term covers a 1 MP
   * PNG to JPEG (42.6 MiB, 5.6 over the model without it), fitted with its trellis passes and kept for its trellis in
   * one pass, which holds about 3 MiB per MP less (this route only has animated PNG and WebP inputs); PNG's is the
   * writer's (`rows.sink.png`) and the copy.
   */
  encode: {
    jpeg: { baseMiB: 6, perMP: 16.6 },
    webp: { baseMiB: 4, perMP: 8 },
    // libavif + libaom (wasm/lean/sink_avif.c): a lossy image of up to 2.1 MP is one frame, whose libaom state follows
    // the frame; a lossless one is a grid of 4:4:4 planes and a file of about 1.4 B/px. This term is theirs
    // (lossy grids: `avifGrid`). Fitted to lossless (12 MP 214.5 MiB with the RGBA image beside it, 169.4 with
    // the rows pulled) and to whole frames (a 12 MP JPEG to 1600 px 76.7, 1 MP 59.2, a 2880x1800 screenshot
    // to 1600 px 80.6, with the rows pulled).
    avif: { baseMiB: 46, perMP: 9 },
    png: { baseMiB: 15, perMP: 4.8 },
  } as Readonly<Record<OutputFormat, { baseMiB: number; perMP: number }>>,
  /**
   * A lossy AVIF over 2.1 MP (AVIF_WHOLE_PIXELS), in place of `encode.avif`: a grid of 768x768 cells that
   * libaom encodes one after another, so its state is one cell's, beside the YUV planes (4:2:0; 4:4:4 when the
   * size is odd) and the file. An image that may have alpha also has an alpha grid. Fitted to the rows pulled
   * from a JPEG, PNG, GIF and AVIF (encoder alone: 35.3 MiB at 4 MP, 45.1 at 12.2 MP, 51.7 at 15.9 MP; odd
   * sizes 48.2 at 4 MP and 73.1 at 12.2 MP; a WebP with alpha at 4 MP 55.8; docs/results/memory.md).
   */
  avifGrid: { baseMiB: 40, perMP: { '420': 1.6, '444': 3.2 }, alpha: { baseMiB: 12, perMP: 2 } },
  /**
   * A lossy WebP of an image with transparency: libwebp compresses the alpha plane with its lossless
   * coder (hash chains, backward references), on top of the YUV planes. Charged once the decoded pixels
   * show transparency (an RGBA file whose alpha is all 255 has no alpha plane): RGBA PNGs to WebP
   * measured 73.7 (1 MP), 102.4 (2 MP), 126.0 (3 MP) and 155.3 MiB (4 MP) against 33-84 without it; through
   * the row pipeline (whose sink allocates the plane at the first transparent row) 71.8, 103.4 and 141.8 (4 MP).
   */
  webpAlpha: { baseMiB: 32, perMP: 17.5 },
  /**
   * Lossless WebP (libwebp's VP8L: the ARGB image, hash chains, backward references), in place of
   * `encode.webp`: RGBA PNGs measured 64.9 MiB at 1 MP and 122.7 at 3 MP, the lossy term's 33 and 67;
   * through the row pipeline, 66.0 at 1 MP and 111.6 at 2 MP (a 5.9 MiB file); refitted (base 26 -> 32) when the
   * file's term fell to what the BYOB reader leaves (110.0 at 2 MP then).
   */
  webpLosslessEncode: { baseMiB: 32, perMP: 27 },
  /**
   * An animation to an animated WebP (route `frames`, src/pipeline/frames.ts), one frame at a time: fixed MiB, the file
   * (a GIF read from the body in place; an animated WebP's copy in the instance), the source's canvases per input MP (a
   * GIF's canvas and the rectangle a frame restores; libwebp's decoder's canvas, the previous one disposed and a
   * frame's own decoding), and per output MP the frame handed to libwebp's animation encoder, its three canvases and
   * the candidate frames it encodes and keeps (lossy: YUV planes and the VP8 encoder; lossless: VP8L's hash chains). A
   * lossless animation's file is large and held about four times at its end (the encoder's frames, the file assembled
   * from them, its copy out of the instance, the answer): `losslessAnswerCopies` times its size, `losslessFileMiBPerMP` per
   * MP of all frames' output (what a photographic one measured), or for a flat GIF (isFlatGif) the GIF's own size.
   * Fitted to npm run memory (2026-11-26; estimates now): 100 frames of 1280x720 GIF 83.0 MiB (est. 88), at 640 px
   * 60.4 (65), 18 of 640x400 39.3-42.1 over seven runs (42), lossless 49.7 (55), a 20-frame 480x360 cartoon 33.7 (35);
   * an animated WebP of 100 frames of 720p 76.4 (80), to 640 px lossless (a 13.4 MiB answer) 108.3 (113).
   */
  frames: {
    baseMiB: 16,
    gif: { filePerMiB: 1.25, perMP: 8 },
    webp: { filePerMiB: 3, perMP: 14 },
    lossyPerMP: 34,
    losslessPerMP: 40,
    losslessFileMiBPerMP: 0.6,
    losslessAnswerCopies: 4,
  },
  /**
   * The row pipeline (route `rows`, wasm/lean/pipeline.c), fitted to docs/results/memory.md's runs: fixed MiB,
   * then what each stage holds. The request's file: MiB per MiB of file (the body buffer, read in place by
   * a BYOB reader, and a JPEG's, WebP's or AVIF's copy in the instance, still charged as when workerd held
   * the body about twice; libpng and giflib read the body in place: PNG 1.25 and GIF 1.75 since the
   * fourth session's measurements, 2.25 before), assumed per MP when a plan has no file size. The source: a JPEG's decompressor (MiB per decoded MP; a
   * progressive one's coefficients come on top, `progressiveJpeg`), a PNG's libpng and zlib
   * (`pngFile.baseMiB`; an Adam7 one is decoded whole, as RGBA), a still WebP's planes (lossy at its size: YUV 4:2:0, and with alpha the alpha
   * plane twice, the decoder's and ours) or RGBA (shrunk, or lossless, whose decoder also holds the
   * input as ARGB: `webpLosslessPerMP` of input). An EXIF turn collects the decoded image once (RGBA).
   * The resampler holds its ring (`ringMiB`). The sink, fixed MiB plus MiB per output MP: libjpeg-turbo
   * (progressive or optimised tables: its coefficients; baseline with standard tables: a band of rows), libwebp (with its token buffer, or in low-memory mode) (planes and working memory; lossless in
   * place of lossy as `webpLosslessEncode`), the PNG writer (libdeflate's compressor, a chunk of rows raw, filtered
   * and deflated, and the output, written out to JS as it goes), or a band of rows with libavif + libaom's planes and
   * state (`encode.avif` or `avifGrid`).
   */
  rows: {
    baseMiB: 2,
    filePerMiB: { jpeg: 3, png: 1.25, webp: 3, gif: 1.75, avif: 3 } as Readonly<Partial<Record<FormatId, number>>>,
    /**
     * MiB per MiB of a PNG's file more when the sink is a JPEG's: photo PNGs to a JPEG measured above the same PNGs to
     * WebP by an amount that grows with the file (4 MiB at 20.8 MiB of file, 7 at 27.2, 9-16 at 41.7, 2-16 at 61.3, 3-27
     * at 85), where the sinks' own terms say the JPEG's is the smaller; not yet explained. A 41.7 MiB PNG to a 1600 px
     * JPEG measured 86.4 (and 77.6), 82.7 without this.
     */
    pngToJpegPerFileMiB: 0.1,
    /**
     * A PNG read as it arrives (src/pipeline/body.ts, one pass into a JPEG, WebP or AVIF sink) in place of the file's
     * terms: the body buffer's window (256 KiB), the chunk being read into it and the suspended stack. 0.5 left a 24 MP
     * PNG to a 2048 px JPEG at 35.0 MiB measured against 35 (the 24-50 MP photo PNGs to JPEG measured 26.4-35.4 MiB,
     * whatever the file's size: 42-85 MiB), and a 12 MP one to full-size JPEG measured 65.5-66.6 against 67 at 2: 3.
     */
    streamedFileMiB: 3,
    /**
     * MiB per MiB of file once more when the answer may be the input itself (same format, same pixels: the
     * never-bigger rule): its copy out of the body buffer (copyParts), into the parts of the file the PNG writer gave
     * up on where it did; other sinks' files are whole arrays, charged by their own terms.
     */
    answerPerFileMiB: 1,
    assumedFileMiBPerMP: { jpeg: 0.5, png: 1.7, webp: 0.3, gif: 1.2, avif: 0.3 } as Readonly<Partial<Record<FormatId, number>>>,
    // webpYuvAlpha: lossy WebP with alpha, whose ALPH decoder holds far more than the plane it writes (the lean memory is
    // 103 MiB after opening a 12 MP one); 3.5 until a 12 MP one to PNG measured 130.5 MiB (2026-11-25, 131.8 before the PNG writer).
    sourcePerMP: { jpeg: 0.1, webpYuv: 1.5, webpYuvAlpha: 7, rgba: 4, gifInterlaced: 1 },
    /** giflib's state, its read buffer and a row of RGBA. */
    gifMiB: 1,
    /**
     * AVIF (libavif + dav1d): fixed MiB (the decoder's tables, a band of RGBA), its per-frame state per MP,
     * and the decoded planes: bytes per pixel by chroma (4:4:4 when av1C does not say), twice above 8 bits,
     * an alpha plane on top.
     */
    avif: {
      baseMiB: 4,
      statePerMP: 1,
      planes: { '420': 1.5, '422': 2, '444': 3, mono: 1 } as const,
      /**
       * MiB per input MP of the decoder's working memory that is given back once the planes are decoded and that
       * libavif + libaom's encoder then takes, so an AVIF to AVIF does not need both, at most the encoder's own term
       * (lean memory at 16 MP, after an AVIF source: the AVIF sink grew it by 25.9 MiB full size and 8.4 at 1600 px;
       * after a JPEG source: 36.2 and 39.0). A grid's (full size) reuse, 10.3 MiB at 15.9 MP, and a whole frame's (up to
       * AVIF_WHOLE_PIXELS), 30.6; workerd measured 98.0 and 82.3 MiB at 16 MP, 93.2 for a 24 MP one to 1600 px.
       */
      reusedByAvifSinkPerMP: { grid: 0.65, frame: 1.9 },
    },
    webpLosslessPerMP: 4,
    turnedPerMP: 4,
    /**
     * gravity=auto's rows kept for the conversion (`kept`): the region resized as the crop is, RGBA in the lean memory from
     * the pass to the conversion's end, beside everything else (4 B a pixel and the allocator's round-up).
     */
    keptPerMP: 4,
    /**
     * Little CMS's transform to sRGB and the profile read to build it: a 12 MP CMYK JPEG with a 557 KB SWOP profile grew
     * the lean memory by 3.5 MiB over the same conversion without colour (docs/notes/benchmarks.md item 25); a P3 one by 0.2.
     */
    colourMiB: 4,
    /** Lossy PNG's quantiser (wasm/lean/quant.c): the sample (0.25 MiB), its order (0.25), the nearest-colour cache (0.5; 2 when this was set, kept as measured under it) and rows of errors and input. */
    paletteMiB: 3,
    /**
     * quality=auto's scoring (wasm/lean/score.c): 19 float planes, the decoded try and the tile's copy, about 88 B per
     * pixel scored, taken while no sink holds anything: the whole output up to 576 x 576, else one 192 px tile at a time.
     */
    scorePerMP: 88,
    /**
     * The passes that a lossy PNG's quality=auto search and a PNG's max_bytes tries add: each a palette built and a file
     * written, whose parts stay JavaScript garbage until V8 collects them (npm run memory, 2026-11-26: quality=auto 4 MP
     * 44.8 MiB against 43 without this; max_bytes, a lossless first pass then palette tries, 4 MP 45.1 against 36 and
     * 12 MP 53.1-66.7 against 51, as many tries as the CPU limit let run).
     */
    pngPassesMiB: { search: 4, fit: 21 },
    /**
     * quality=auto's check of the whole answer (`checkMiB`): the answer read as rows (its decoder's state and planes, its
     * file: a JPEG's band of rows, a lossy WebP's YUV planes, 7 MiB per MP with alpha, an AVIF's planes and dav1d's
     * state, a PNG's zlib stream) or, where it needs the input's decoder, decoded whole (RGBA and the decoder's file);
     * then the score's rows, per 1000 px of width (twice for a format with alpha: two backgrounds).
     */
    check: {
      streamed: {
        jpeg: { baseMiB: 1, perMP: 1.5 },
        webp: { baseMiB: 3, perMP: 2 },
        webpAlpha: { baseMiB: 3, perMP: 8 },
        avif: { baseMiB: 4, perMP: 5 },
        avifAlpha: { baseMiB: 4, perMP: 6.5 },
        png: { baseMiB: 5, perMP: 3 },
      } as Readonly<Record<OutputFormat | 'webpAlpha' | 'avifAlpha', { baseMiB: number; perMP: number }>>,
      whole: {
        jpeg: { baseMiB: 1, perMP: 5 },
        webp: { baseMiB: 3, perMP: 6 },
        avif: { baseMiB: 4, perMP: 8 },
        png: { baseMiB: 5, perMP: 6 },
      } as Readonly<Record<OutputFormat, { baseMiB: number; perMP: number }>>,
      scorePerKpxWide: 2,
    },
    sink: {
      jpeg: { baseMiB: 2, perMP: 3.4 },
      jpegBaseline: { baseMiB: 2, perMP: 0.8 },
      /**
       * MozJPEG's trellis a row at a time (wasm/lean/mozjpeg-one-pass-trellis.patch; scans chosen by trial): the
       * quantised coefficients as libjpeg-turbo keeps them, one row of unquantised blocks and the trial scans' output.
       * Fitted to the matrix's JPEG column (2026-11-26, eighth session): a 2880x1800 screenshot to JPEG 40.5-42.7 MiB,
       * 3840x2160 51.7-53.2, a 12 MP photo PNG 84.4-86.3, a 12 MP JPEG 60.1, a 16 MP one 68.7-74.1.
       */
      mozjpeg: { baseMiB: 4.5, perMP: 3.4 },
      /**
       * MozJPEG's trellis per scan, in passes (effort 8-9, `trellisPasses`): an unquantised copy of every coefficient on
       * top, about 3 MiB per MP (lean memory after a 12 MP JPEG: 42.9 MiB without trellis, 78.5 with its passes, 82.9
       * per scan). Fitted to workerd: a 3840x2160 screenshot PNG to JPEG 74.3 MiB, a 12 MP JPEG to JPEG 96.5.
       */
      mozjpegPasses: { baseMiB: 2, perMP: 6.7 },
      /**
       * libwebp with its token buffer, which grows with what it codes: a 12 MP photo PNG (grainy) read as it arrives,
       * so without a file to hide it under, measured 78.4-82.4 MiB to WebP over four runs, against 76 at 3.7 per MP (a
       * 12 MP JPEG of the same photo 60.6): 4.3 (84). More (4.6) would leave quality=auto's whole check of a 12 MP
       * photo to WebP without room beside the conversion.
       */
      webp: { baseMiB: 10, perMP: 4.3 },
      webpLowMemory: { baseMiB: 10, perMP: 2 },
      /**
       * The PNG writer (wasm/lean/sink_png.c): libdeflate's compressor and about four chunks of 1 MiB, and the file in
       * JS. Where the answer may be the input, the file grows to the input's size before the writer gives up, and its
       * parts then hold the answer (copyParts), so `answerPerFileMiB` is all it adds. Fitted to the matrix's PNG column
       * (2026-11-25; a 1 MP photo PNG to PNG 37.5, a 16 MP JPEG to PNG 40.3, a 5.2 MP screenshot 23.5). Photo PNGs to PNG,
       * the input returned, largest of three runs (2026-11-26): 1 MP 33.8, 2 MP 38.9, 4 MP 47.0, 12 MP 70.4, 16 MP 84.2
       * MiB (sent as views of the body buffer before: 12 MP 109.8, 16 MP 136.6).
       */
      png: { baseMiB: 15, perMP: 0.8 },
      /**
       * Our lossless WebP coder (wasm/lean/sink_webpll.c, `streamedLossless`): a band of 33 rows, a window of 2^18 coded
       * pixels with its hash chains (2 MiB), histograms, and the file in JS as it is written (a photo's is about 2 B
       * per pixel, a screenshot's a tenth of that).
       */
      webpLossless: { baseMiB: 8, perMP: 2.5 },
      /** AVIF's band of 64 RGBA rows (wasm/lean/sink_avif.c); the encoder's memory is `encode.avif` or `avifGrid`. */
      avifBand: { baseMiB: 1, perMP: 0 },
    },
  },
}

/**
 * How a conversion runs: through the row pipeline (`rows`: a JPEG, PNG, still WebP, GIF or AVIF source, row
 * transforms, a sink; src/pipeline/rows.ts); as one of the lean codec's same-size passes that keep loops
 * of their own (a turned JPEG into a lossy WebP's planes, a JPEG into libjpeg-turbo: a 4:2:0 one as its planes, others as RGB; a lossy
 * opaque WebP's YUV into the encoder's planes; src/pipeline/codec.ts, `transcode`); through whole
 * RGBA pixels (`pixels`: the first frame of an animated WebP or PNG); or frame by frame into an animated WebP (`frames`:
 * a GIF's or an animated WebP's every frame; src/pipeline/frames.ts).
 */
export type Route = 'pixels' | 'rows' | 'frames' | 'jpeg-to-webp' | 'jpeg-to-jpeg' | 'webp-to-webp'

export interface ConversionPlan {
  header: ImageHeader
  format: OutputFormat
  route: Route
  /** Decode scale in eighths (8: full size): a JPEG's DCT scale or a still WebP's rescale; other formats always 8. */
  scale: number
  /** JPEG output with libjpeg-turbo's behaviour (MozJPEG's fastest profile) instead of MozJPEG's trellis (see EncodeSettings). */
  turbo: boolean
  /**
   * MozJPEG's trellis per scan (effort 8-9), in passes over an unquantised copy of every coefficient, where it keeps
   * the lean memory under MOZJPEG_MAX_MIB; otherwise MozJPEG quantises each row by trellis as it is transformed.
   */
  trellisPasses: boolean
  /** Pixels the decoder produces: the input's, or fewer for a DCT-scaled JPEG. */
  decodedPixels: number
  /** Pixels kept from the source (after a cover crop), at the input's size. */
  cropPixels: number
  /**
   * MiB of the resampler's ring of rows (wasm/lean/resample.c): 16 B per output pixel for each source
   * row a Lanczos3 window spans, at most 6x the vertical factor plus 3. Negligible for a photo, but a
   * fill to a very flat box (6000x6000 to 6000x10) would keep thousands of rows.
   */
  ringMiB: number
  /** Output size. */
  width: number
  height: number
  resized: boolean
  /** `contain` pads the resized image onto a larger canvas (in JavaScript). */
  padded: boolean
  /** MiB the filters after the resample hold (sharpen, blur, colour adjustments; src/pipeline/filters.ts), 0 without any. */
  filterMiB: number
  /** Lossless output (WebP's lossless coder needs more memory than its lossy one). */
  lossless: boolean
  /** quality=auto: the sample is scored before the encode (`searchMiB`). */
  autoQuality: boolean
  /**
   * quality=auto: the whole answer is scored after the encode, against the rows built again (`checkMiB`), where the
   * input has a row source and that fits the budget beside the conversion; otherwise the sample's score stands.
   */
  checkWhole: boolean
  /** max_bytes: lower qualities may be tried after the first pass (a PNG's: `rows.pngPassesMiB.fit`). */
  fitTo: boolean
  /**
   * libwebp's low_memory mode (no token buffer: about 1.4 MiB less per MP, twice the encode time), for a
   * lossy WebP from the row pipeline whose plan does not fit without it.
   */
  lowMemoryWebp: boolean
  /**
   * Lossless WebP by our own VP8L encoder (wasm/lean/sink_webpll.c: three passes over the rows, a few rows and a window
   * of recent ones held) instead of libwebp's, which holds the image several times over, where libwebp's does not fit.
   */
  streamedLossless: boolean
  /**
   * libjpeg-turbo keeps every coefficient until the end: for a progressive JPEG (effort 3 and up) and for
   * optimised Huffman tables (every effort). Where that does not fit, the row pipeline writes a baseline
   * JPEG with the standard tables instead (5-10 % larger), holding a band of rows.
   */
  bufferedJpeg: boolean
  /**
   * gravity=auto's pass is the conversion's start: it decodes, resizes the whole region as the crop will be, and keeps
   * the rows (this size, or as decoded for an output smaller than the preview; `rows.keptPerMP`) in the lean memory, from
   * which the conversion cuts the window instead of decoding the file again (src/pipeline/rows.ts, pixelProbes).
   * Undefined: the preview is a decode of its own.
   */
  kept: { width: number; height: number } | 'decoded' | undefined
  /**
   * gravity=auto's preview pass runs before the conversion (`MEMORY_MODEL.previewMiB`); with `face`, gravity=face's,
   * which asks the face detector of the preview too (`MEMORY_MODEL.facesMiB`).
   */
  preview: false | FoundGravity
}

/**
 * Step 3, the plan: what one conversion will decode, at what size, by which route and encoder. The
 * same-size passes first (see Route); then, for a JPEG, PNG or still WebP, the row pipeline, a JPEG or
 * WebP decoded at the scale chosen for the resize (see decodeScale), into libwebp, into MozJPEG's trellis (from
 * effort 3, where it fits: smaller files than libjpeg-turbo at the same quality) or else its libjpeg-turbo profile,
 * and into the PNG writer (libdeflate, which reads the rows twice); libavif takes the rows a band of 64 at a time. Other inputs go through whole RGBA pixels, MozJPEG before libjpeg-turbo.
 * `preview`: gravity=auto's pass runs first (charged), and keeps rows of that size (or as decoded) for the conversion
 * where that fits (src/pipeline/stages.ts, keptSize).
 *
 * @example
 * planConversion(header, 'webp', planGeometry(4032, 3024, { width: 1600 }), settings, limits).route // 'rows'
 */
export function planConversion(
  header: ImageHeader,
  format: OutputFormat,
  geometry: Geometry,
  settings: EncodeSettings,
  limits: Limits,
  leanResidentMiB = 0,
  preview?: { width: number; height: number } | 'decoded',
  faces = false,
): ConversionPlan {
  const pass = preview !== undefined && hasRowSource(header) && (faces ? 'face' : 'auto')
  const route = planRoute(header, format, geometry, settings, limits, leanResidentMiB, pass)
  const fits = (plan: ConversionPlan) => estimateMiB(plan, leanResidentMiB) <= limits.memoryBudgetMiB
  // quality=auto's check of the whole answer, where it fits beside the conversion (max_bytes checks sizes instead)
  const checked = { ...route, checkWhole: true }
  // (an output no larger than the sample is its own sample: the search scored it whole already)
  const { columns, rows } = sampleSpansOf(route)
  const sampledWhole = columns.length === 1 && rows.length === 1
  const checks = route.autoQuality && !route.fitTo && !sampledWhole && route.route !== 'frames' && hasRowSource(header) && fits(checked)
  const plan = checks ? checked : route
  // gravity=auto's pass as the conversion's start, its rows kept for it, where that fits beside the rest and the rows
  // are at most KEPT_MAX_MIB (MozJPEG's trellis per scan, whose lean memory MOZJPEG_MAX_MIB bounds, goes first)
  const kept = { ...plan, kept: preview }
  const passesStayUnder = !kept.trellisPasses || estimateMiB(kept) <= MOZJPEG_MAX_MIB
  return preview && plan.route === 'rows' && header.streamed !== true && keptMiB(kept) <= KEPT_MAX_MIB && passesStayUnder && fits(kept) ? kept : plan
}

/**
 * The most lean memory (MiB) gravity=auto's pass keeps rows in for the conversion: 8 MP, a 4K output's. Keeping them
 * saves a second decode of the file (a 12 MP JPEG's at 1/8, about 30 ms; a 12 MP photo PNG's, all of it, about 200)
 * at 4 MiB per kept MP, which stays with the isolate (see MOZJPEG_MAX_MIB): a 12 MP JPEG to a 1600 px WebP cover keeps
 * 2133x1600 (3.4 MP, 13 MiB).
 */
export const KEPT_MAX_MIB = 32

/** The lean memory of the rows gravity=auto's pass keeps for the conversion (`rows.keptPerMP`). */
const keptMiB = ({ kept, decodedPixels }: ConversionPlan): number =>
  kept ? (MEMORY_MODEL.rows.keptPerMP * (kept === 'decoded' ? decodedPixels : kept.width * kept.height)) / 1e6 : 0

function planRoute(header: ImageHeader, format: OutputFormat, geometry: Geometry, settings: EncodeSettings, limits: Limits, leanResidentMiB: number, preview: ConversionPlan['preview']): ConversionPlan {
  const { crop, resize, canvas } = geometry
  const at = (scale: number, turbo = false): ConversionPlan => ({
    header,
    format,
    route: 'pixels',
    scale,
    turbo,
    trellisPasses: false,
    decodedPixels: Math.ceil((header.width * scale) / 8) * Math.ceil((header.height * scale) / 8),
    cropPixels: crop.width * crop.height,
    ringMiB: ((6 * Math.max(1, Math.ceil((crop.height * scale) / 8) / resize.height) + 3) * resize.width * 16) / 2 ** 20,
    width: canvas.width,
    height: canvas.height,
    resized: resize.width !== crop.width || resize.height !== crop.height,
    padded: resize.width !== canvas.width || resize.height !== canvas.height,
    filterMiB: geometry.filters ? filtersMiB(geometry.filters, resize.width) : 0,
    lossless: settings.lossless,
    autoQuality: settings.autoQuality !== undefined,
    checkWhole: false,
    fitTo: settings.fitTo !== undefined,
    bufferedJpeg: format === 'jpeg',
    lowMemoryWebp: false,
    streamedLossless: false,
    kept: undefined,
    preview,
  })
  // An animation to WebP keeps every frame: one canvas at a time through the row transforms into the animation encoder.
  if (settings.animate) return { ...at(8), route: 'frames' }
  const fits = (plan: ConversionPlan) => estimateMiB(plan, leanResidentMiB) <= limits.memoryBudgetMiB
  const rows = (scale: number, turbo = false): ConversionPlan => ({ ...at(scale, turbo), route: 'rows' })
  // MozJPEG where it fits; its trellis per scan (effort 8-9) only where that keeps the lean memory small (MOZJPEG_MAX_MIB).
  const mozjpeg = (plan: ConversionPlan): ConversionPlan | undefined => {
    const passes = { ...plan, trellisPasses: true }
    if (settings.effort >= 8 && fits(passes) && estimateMiB(passes) <= MOZJPEG_MAX_MIB) return passes
    return fits(plan) ? plan : undefined
  }
  const upright = uprightSize(header)
  const sameSize = isIdentity(geometry, upright.width, upright.height)
  // Effort 0-2 asks for speed: libjpeg-turbo's behaviour, as sharp's default JPEG, instead of MozJPEG's trellis.
  const fast = format === 'jpeg' && settings.effort <= 2
  // Colours to convert (an ICC profile, CMYK) take the row pipeline, where the conversion is a stage.
  const srgb = header.colour === 'srgb'
  if (header.format === 'jpeg' && sameSize && srgb) {
    if (format === 'webp' && !settings.lossless && header.orientation > 1) return { ...at(8), route: 'jpeg-to-webp' }
    // (a turned one that does not fit this way may still fit as rows into a baseline JPEG: 16 MP rotated 90, say)
    const same: ConversionPlan = { ...at(8), route: 'jpeg-to-jpeg' }
    if (format === 'jpeg' && (fast || !mozjpeg(rows(8))) && (fits(same) || header.orientation === 1)) return same
  }
  if (header.format === 'webp' && sameSize && srgb && header.orientation === 1 && header.frames === 1 && !header.hasAlpha && !header.lossless) {
    if (format === 'webp' && !settings.lossless) return { ...at(8), route: 'webp-to-webp' }
  }
  const shrinks = (header.format === 'jpeg' || (header.format === 'webp' && header.frames === 1)) && !sameSize
  const [first, last] = shrinks ? [decodeScale(geometry, DECODE_MARGIN), decodeScale(geometry, 1)] : [8, 8]
  const scales = DECODE_SCALES.filter((s) => s <= first && s >= last)
  // The row pipeline, for the sources it has: every encoder takes rows.
  if (hasRowSource(header)) {
    if (format === 'webp') {
      const webp = rows(first)
      // libwebp where it fits (its files are smaller: docs/results/camera-size.md); else our own streaming lossless coder or libwebp's low-memory mode
      if (fits(webp)) return webp
      return settings.lossless ? { ...webp, streamedLossless: true } : { ...webp, lowMemoryWebp: true }
    }
    if (format === 'jpeg') {
      // MozJPEG, or libjpeg-turbo's behaviour progressive or with optimised tables, keeps every coefficient;
      // baseline with standard tables a band of rows.
      const turbo = rows(first, true)
      const moz = fast ? undefined : scales.map((scale) => mozjpeg(rows(scale))).find((plan) => plan !== undefined)
      return moz ?? (fits(turbo) ? turbo : { ...turbo, bufferedJpeg: false })
    }
    return scales.map((scale) => rows(scale)).find(fits) ?? rows(last)
  }
  // Whole RGBA images (animated WebP and PNG): for a shrinking JPEG or still WebP (an animated WebP's
  // frames), the DCT or rescaler scale that leaves Lanczos3 a factor of 1.25 or, when that does not fit
  // the budget, smaller ones down to the output size itself; at each, MozJPEG before libjpeg-turbo.
  for (const scale of scales) {
    if (format !== 'jpeg') {
      if (fits(at(scale))) return at(scale)
      continue
    }
    const moz = fast ? undefined : mozjpeg(at(scale))
    if (moz) return moz
    if (fits(at(scale, true))) return at(scale, true)
  }
  return at(last, format === 'jpeg')
}

/**
 * The largest estimate (MiB, first request) at which JPEG output at effort 8-9 takes MozJPEG's trellis per scan
 * rather than its trellis in one pass: the passes keep an unquantised copy of every coefficient (about 3 MiB per MP
 * more), and the lean memory a conversion grows stays with the isolate. A 12 MP JPEG to JPEG with that copy fits the
 * budget (96 MiB measured) but left 16 clients at 170 MiB over idle (npm run memory:steady) against 138-148 without it.
 * 80 lets it take up to about 8 MP of output (a 3840x2160 screenshot: 75 MiB measured, 79 estimated).
 */
export const MOZJPEG_MAX_MIB = 80

/**
 * Whether the row pipeline reads this input (wasm/lean/pipeline.c has a source for every input format): any
 * still image, and any GIF or AVIF (their sources are the first frame). An animated WebP or PNG goes through
 * whole pixels, its first frame composited in JavaScript.
 */
export const hasRowSource = (header: ImageHeader): boolean => header.frames === 1 || header.format === 'gif' || header.format === 'avif'

/** An input whose every frame the `frames` route can convert: a GIF or WebP of more than one frame (an APNG or AVIF sequence is not). */
export const isAnimation = (header: ImageHeader): boolean => header.frames > 1 && (header.format === 'gif' || header.format === 'webp')

/**
 * What a plan's steps take of the lean codec's memory (MiB, without `baseMiB`): the isolate's one memory, which
 * later conversions reuse and which never shrinks. Every codec is in the lean codec.
 */
export function estimateLeanMiB(plan: ConversionPlan): number {
  const m = MEMORY_MODEL
  const inMP = (plan.header.width * plan.header.height) / 1e6
  const outMP = (plan.width * plan.height) / 1e6
  const { format, lossless, hasAlpha, frames } = plan.header
  const progressive = progressiveMiB(plan.header)
  if (plan.route === 'rows') return rowsLeanMiB(plan, progressive)
  if (plan.route === 'frames') return framesLeanMiB(plan)
  const held = format === 'webp' ? m.webpInputMiB + (lossless || hasAlpha !== false || frames > 1 ? m.webpHeldPerMP * inMP : 0) : 0
  if (plan.route !== 'pixels') {
    const turned = plan.route === 'jpeg-to-jpeg' && plan.header.orientation > 1
    return m.transcode.baseMiB + progressive + held + m.transcode.perMP[turned ? 'jpeg-to-jpeg-turned' : plan.route] * inMP
  }
  const pngFile = format === 'png' ? m.pngFile.baseMiB + m.pngFile.perFileMiB * (plan.header.fileBytes !== undefined ? plan.header.fileBytes / 2 ** 20 : m.pngFile.assumedMiBPerMP * inMP) : 0
  const decode = (m.decodePerMP[format] ?? m.rows.sourcePerMP.rgba) * (plan.decodedPixels / 1e6) + progressive + held + pngFile
  const resize = plan.resized ? m.resize.baseMiB + m.resize.inputPerMP * (plan.cropPixels / 1e6) * (plan.decodedPixels / (plan.header.width * plan.header.height)) + m.resize.outputPerMP * outMP + plan.ringMiB : 0
  const encoder = plan.turbo ? m.turboJpegEncode : plan.format === 'webp' && plan.lossless ? m.webpLosslessEncode : encoderTerm(plan)
  // Every input is decoded and encoded by the lean codec, in the conversion's lean memory (wasm/session.ts).
  const touchedInJs = plan.padded || (format !== 'jpeg' && plan.header.orientation > 1) || (plan.format === 'jpeg' && plan.header.hasAlpha !== false)
  // Lossless WebP's term was fitted on pixels handed over already.
  const handedOver = !touchedInJs && !(plan.format === 'webp' && plan.lossless)
  const encode = encoder.baseMiB + encoder.perMP * outMP - (handedOver ? m.copyInPerMP[plan.format === 'jpeg' ? 'jpeg' : 'webp'] * outMP : 0)
  // (the filters read the resampled pixels as rows into a new image: its copy, and their windows)
  const filters = plan.filterMiB > 0 ? plan.filterMiB + 4 * outMP : 0
  return decode + resize + encode + filters
}

/** A progressive JPEG's coefficients until its last scan (`progressiveJpeg`), 0 for any other input. */
function progressiveMiB({ format, progressive, width, height, fileBytes }: ImageHeader): number {
  if (format !== 'jpeg' || !progressive) return 0
  const p = MEMORY_MODEL.progressiveJpeg
  const inMP = (width * height) / 1e6
  if (fileBytes === undefined) return p.assumedPerMP * inMP
  return Math.min(p.perFileMiB * (fileBytes / 2 ** 20) + p.perMP * inMP, p.mostPerMP * inMP) + p.perKpxWide * (width / 1000)
}

/** An encoder's term: `encode[format]`, or for a lossy AVIF grid `avifGrid` (by chroma, and alpha when the input may have it). */
function encoderTerm(plan: ConversionPlan): { baseMiB: number; perMP: number } {
  const m = MEMORY_MODEL
  const pixels = plan.width * plan.height
  if (plan.format !== 'avif' || plan.lossless || pixels <= AVIF_WHOLE_PIXELS) return m.encode[plan.format]
  const g = m.avifGrid
  const odd = plan.width % 2 === 1 || plan.height % 2 === 1
  const alpha = plan.header.hasAlpha !== false
  return {
    baseMiB: g.baseMiB + (alpha ? g.alpha.baseMiB : 0),
    perMP: g.perMP[odd ? '444' : '420'] + (alpha ? g.alpha.perMP : 0),
  }
}

/**
 * Bytes a GIF holds per pixel of all its frames under which it is taken as flat colour (line art, a cartoon, a screen
 * recording: what GIF's LZW is good at). Measured: such GIFs 0.007-0.03, photographic ones 0.2-0.6 (an optimised video
 * GIF reuses pixels across frames: 0.2).
 */
export const FLAT_GIF_BYTES_PER_PIXEL = 0.1

/** A GIF of flat colour by its bytes a pixel (FLAT_GIF_BYTES_PER_PIXEL): its lossless WebP is about its own size or smaller. */
export const isFlatGif = (header: ImageHeader): boolean =>
  header.format === 'gif' && header.fileBytes !== undefined && header.fileBytes < FLAT_GIF_BYTES_PER_PIXEL * header.frames * header.width * header.height

/** estimateLeanMiB for an animation (MEMORY_MODEL.frames). */
function framesLeanMiB(plan: ConversionPlan): number {
  const f = MEMORY_MODEL.frames
  const { header } = plan
  const inMP = (header.width * header.height) / 1e6
  const outMP = (plan.width * plan.height) / 1e6
  const fileMiB = (header.fileBytes ?? 0) / 2 ** 20
  const source = header.format === 'gif' ? f.gif : f.webp
  // A lossless answer's size: a flat GIF's is about the GIF's (0.53-0.80x measured), a photographic one's by its pixels.
  const answerMiB = isFlatGif(header) ? Math.min(fileMiB, f.losslessFileMiBPerMP * outMP * header.frames) : f.losslessFileMiBPerMP * outMP * header.frames
  const encoder = plan.lossless ? f.losslessPerMP * outMP + f.losslessAnswerCopies * answerMiB : f.lossyPerMP * outMP
  const colour = header.colour === 'srgb' ? 0 : MEMORY_MODEL.rows.colourMiB
  return f.baseMiB + source.filePerMiB * fileMiB + source.perMP * inMP + colour + (plan.resized ? plan.ringMiB : 0) + plan.filterMiB + encoder
}

/** estimateLeanMiB for the row pipeline (MEMORY_MODEL.rows). */
function rowsLeanMiB(plan: ConversionPlan, progressive: number): number {
  const m = MEMORY_MODEL
  const r = m.rows
  const { header } = plan
  const outMP = (plan.width * plan.height) / 1e6
  const fileMiB = header.fileBytes !== undefined ? header.fileBytes / 2 ** 20 : (r.assumedFileMiBPerMP[header.format] ?? 1) * ((header.width * header.height) / 1e6)
  const avif = plan.format === 'avif' ? encoderTerm(plan) : undefined
  const sink =
    avif ? { baseMiB: r.sink.avifBand.baseMiB + avif.baseMiB, perMP: r.sink.avifBand.perMP + avif.perMP }
    : plan.format === 'webp' && plan.lossless ? (plan.streamedLossless ? r.sink.webpLossless : m.webpLosslessEncode)
    : plan.format === 'jpeg' && !plan.turbo ? (plan.trellisPasses ? r.sink.mozjpegPasses : r.sink.mozjpeg)
    : plan.format === 'jpeg' && !plan.bufferedJpeg ? r.sink.jpegBaseline
    : plan.format === 'webp' && plan.lowMemoryWebp ? r.sink.webpLowMemory
    : r.sink[plan.format as 'jpeg' | 'webp' | 'png']
  const answer = mayAnswerWithInput(plan) ? r.answerPerFileMiB * fileMiB : 0
  const palette = plan.format === 'png' && !plan.lossless ? r.paletteMiB : 0
  const passes = plan.format === 'png' ? (plan.autoQuality ? r.pngPassesMiB.search : 0) + (plan.fitTo ? r.pngPassesMiB.fit : 0) : 0
  // The AVIF sink closes the source before libaom allocates its state, which takes what a progressive JPEG's store gave
  // back. (The body buffer it gives back then, src/pipeline/convert.ts, is not counted: photo PNGs to AVIF measured
  // 5-20 MiB lower after it, not their file's size less; a 36 MP one to 2048 px 98.2-115.2 against 117.5-120.8.)
  const reused = avif ? Math.min(progressive, avif.baseMiB + avif.perMP * outMP) : 0
  const kept = keptMiB(plan)
  return rowsSourceMiB(plan, progressive) - reused + kept + answer + palette + passes + sink.baseMiB + sink.perMP * outMP
}

/** The row pipeline's source, its colours and transforms (rowsLeanMiB without the sink; quality=auto's check builds them again). */
function rowsSourceMiB(plan: ConversionPlan, progressive: number): number {
  const m = MEMORY_MODEL
  const r = m.rows
  const { header } = plan
  const inMP = (header.width * header.height) / 1e6
  const decodedMP = plan.decodedPixels / 1e6
  const fileMiB = header.fileBytes !== undefined ? header.fileBytes / 2 ** 20 : (r.assumedFileMiBPerMP[header.format] ?? 1) * inMP
  const file = header.streamed ? r.streamedFileMiB : ((r.filePerMiB[header.format] ?? 3) + (header.format === 'png' && plan.format === 'jpeg' ? r.pngToJpegPerFileMiB : 0)) * fileMiB
  let source: number
  if (header.format === 'png') {
    source = m.pngFile.baseMiB + (header.progressive ? r.sourcePerMP.rgba * inMP : 0)
  } else if (header.format === 'gif') {
    source = r.gifMiB + (header.progressive ? r.sourcePerMP.gifInterlaced * inMP : 0)
  } else if (header.format === 'avif') {
    const sample = header.bitDepth > 8 ? 2 : 1
    const planes = (r.avif.planes[header.chroma ?? '444'] + (header.hasAlpha !== false ? 1 : 0)) * sample
    const encoder = encoderTerm(plan)
    const reusePerMP = r.avif.reusedByAvifSinkPerMP[encoder === m.encode.avif ? 'frame' : 'grid']
    const reused = plan.format === 'avif' ? Math.min(reusePerMP * inMP, encoder.baseMiB + encoder.perMP * ((plan.width * plan.height) / 1e6)) : 0
    source = r.avif.baseMiB + (r.avif.statePerMP + planes) * inMP - reused
  } else if (header.format === 'webp') {
    const yuv = !header.lossless && plan.scale === 8
    const planes = yuv ? (header.hasAlpha !== false ? r.sourcePerMP.webpYuvAlpha : r.sourcePerMP.webpYuv) : r.sourcePerMP.rgba
    source = m.webpInputMiB + planes * decodedMP + (header.lossless ? r.webpLosslessPerMP * inMP : 0)
  } else {
    source = r.sourcePerMP.jpeg * decodedMP + progressive
  }
  const turned = header.orientation > 1 ? r.turnedPerMP * decodedMP : 0
  const resize = plan.resized ? plan.ringMiB : 0
  const colour = header.colour === 'srgb' ? 0 : r.colourMiB
  return r.baseMiB + file + source + turned + resize + plan.filterMiB + colour
}

/**
 * Whether the answer may be the input itself (the never-bigger rule): the same format, and the same pixels
 * (no turn, crop, resize or padding; every frame of an animation).
 *
 * @example
 * if (mayAnswerWithInput(plan) && byteLength(output) >= bytes.length) output = bytes
 */
export const mayAnswerWithInput = ({ format, header, resized, padded, filterMiB, cropPixels, route }: ConversionPlan): boolean =>
  format === header.format && header.orientation === 1 && !resized && !padded && filterMiB === 0 && cropPixels === header.width * header.height &&
  // an animation is the same pixels only when every frame is converted
  (header.frames === 1 || route === 'frames')

/**
 * Estimated peak memory growth, in MiB, of one conversion (see MEMORY_MODEL), over an isolate whose
 * lean memory already holds `leanResidentMiB` from earlier conversions: the lean steps reuse it, so
 * they cost the larger of the two, not the sum.
 */
export function estimateMiB(plan: ConversionPlan, leanResidentMiB = 0): number {
  return outsideLeanMiB(plan) + Math.max(estimateLeanMiB(plan) + searchMiB(plan), checkMiB(plan), leanResidentMiB)
}

/** What a request holds outside the lean memory: its base, gravity=auto's preview where its pass runs, and gravity=face's detector. */
const outsideLeanMiB = (plan: ConversionPlan): number =>
  MEMORY_MODEL.baseMiB + (plan.preview ? MEMORY_MODEL.previewMiB : 0) + (plan.preview === 'face' ? MEMORY_MODEL.facesMiB : 0)

/**
 * quality=auto's check of the whole answer (src/pipeline/rows.ts, scoreRows): the answer as a row source beside the
 * input's (its decoder's state and planes), or decoded whole first, where it needs the input's decoder; then the row
 * source and transforms built again, and the score's rows. Charged on top of the conversion's own lean memory, not
 * within it (npm run memory, 2026-11-26, the check run whatever the budget: a 12 MP JPEG to WebP, the answer read as
 * rows, grew 84.4 MiB, the conversion alone 72.6; to JPEG, the answer decoded whole, 116.5 against 71.1): a source
 * read as rows again takes what the conversion's gave back, a whole image does not.
 */
function checkMiB(plan: ConversionPlan): number {
  if (!plan.checkWhole) return 0
  const c = MEMORY_MODEL.rows.check
  const { header, format } = plan
  const outMP = (plan.width * plan.height) / 1e6
  const progressive = progressiveMiB(header)
  // (an answer with transparency, the input's or contain's padding, is read with its alpha and scored over two backgrounds)
  const transparent = CODECS[format].alpha && (header.hasAlpha !== false || plan.padded)
  const streams = answerStreams(header.format, format)
  const answer = streams ? c.streamed[transparent && format === 'webp' ? 'webpAlpha' : transparent && format === 'avif' ? 'avifAlpha' : format] : c.whole[format]
  const source = streams ? 0 : rowsSourceMiB(plan, progressive)
  return estimateLeanMiB(plan) + source + answer.baseMiB + answer.perMP * outMP + c.scorePerKpxWide * (plan.width / 1000) * (transparent ? 2 : 1)
}

/**
 * Whether quality=auto's check reads the answer as rows beside the input's: a JPEG row source keeps a decompressor of
 * its own, so two JPEGs can be read together; the WebP and AVIF decoders are one at a time, and PNG and GIF both read
 * through the instance's one input, so an answer that needs the input's decoder is decoded whole first.
 */
export const answerStreams = (input: FormatId, output: OutputFormat): boolean => (input !== output || output === 'jpeg') && !(input === 'gif' && output === 'png')

/** quality=auto: what scoring the sample adds (MEMORY_MODEL.rows.scorePerMP over the largest tile, scored one at a time). */
function searchMiB(plan: ConversionPlan): number {
  if (!plan.autoQuality) return 0
  const { columns, rows } = sampleSpansOf(plan)
  const longest = (spans: readonly Span[]) => Math.max(...spans.map(([, length]) => length))
  return (MEMORY_MODEL.rows.scorePerMP * longest(columns) * longest(rows)) / 1e6
}

/**
 * Step 5b, once the pixels are decoded: a lossy WebP of an image with transparency also needs libwebp's
 * alpha plane (`MEMORY_MODEL.webpAlpha`), which the header alone cannot tell (an RGBA file may be
 * opaque). Refuses with 422 before encoding when that no longer fits; returns the estimate with it.
 *
 * @example
 * estimate = checkAlphaPlane(plan, settings, hasTransparency(image), estimate, limits)
 */
export function checkAlphaPlane(plan: ConversionPlan, settings: EncodeSettings, transparent: boolean, estimate: number, limits: Limits): number {
  if (plan.format !== 'webp' || settings.lossless || !transparent) return estimate
  const m = MEMORY_MODEL
  const outMP = (plan.width * plan.height) / 1e6
  const alpha = m.webpAlpha.baseMiB + m.webpAlpha.perMP * outMP
  // In the lean codec a resize frees the decoded pixels before the encoder starts, so the alpha plane
  // shares the encoder's moment with the resized pixels only; a whole-image decoder's memory may still
  // be resident (dropped, not yet collected), so then it counts too.
  const encodeStep = m.baseMiB + m.resize.outputPerMP * outMP + m.encode.webp.baseMiB + m.encode.webp.perMP * outMP + alpha
  // In the row pipeline the alpha plane is lean memory too: it adds to the conversion's own lean part, which the
  // isolate's resident lean memory (already in `estimate`) covers when that is larger.
  const withAlpha =
    plan.route === 'rows' ? Math.max(estimate, outsideLeanMiB(plan) + estimateLeanMiB(plan) + alpha)
    : plan.resized ? Math.max(estimate, encodeStep)
    : estimate + alpha
  if (withAlpha > limits.memoryBudgetMiB) {
    throw new ApiError(
      'operation_too_large',
      `This image has transparency: a ${plan.width}x${plan.height} lossy WebP with an alpha plane needs an estimated ${Math.round(withAlpha)} MiB; ` +
        `the memory budget (MEMORY_BUDGET_MIB) is ${limits.memoryBudgetMiB} MiB. A smaller width/height or format=png may fit.`,
      { limit: limits.memoryBudgetMiB, estimateMiB: Math.round(withAlpha) },
    )
  }
  return withAlpha
}

const mp = (pixels: number) => `${(pixels / 1e6).toFixed(1)} MP`

/**
 * The largest width or height each encoder can write: WebP stores each dimension in 14 bits, libjpeg
 * refuses more than 65500. Without this check a 16384x1 WebP or a 65501x8 JPEG output failed inside
 * the encoder, as a 500.
 */
export const MAX_OUTPUT_DIMENSION: Readonly<Partial<Record<OutputFormat, number>>> = { webp: 16383, jpeg: 65500, avif: 65536 }

/**
 * Step 3: refuse, from header data alone, an input whose dimensions are over the configured limit.
 * Runs before any pixel is decoded.
 *
 * @example
 * checkInput(header, limits) // throws ApiError('image_too_large', ...) for a 50000x50000 header
 */
export function checkInput(header: ImageHeader, limits: Limits): void {
  const pixels = header.width * header.height
  if (pixels > limits.maxInputPixels) {
    // The largest image of the same aspect ratio within the limit, for the client to send instead.
    const shrink = Math.sqrt(limits.maxInputPixels / pixels)
    const fits = { width: Math.floor(header.width * shrink), height: Math.floor(header.height * shrink) }
    throw new ApiError(
      'image_too_large',
      `The image is ${header.width}x${header.height} (${mp(pixels)}); the limit is ${mp(limits.maxInputPixels)} (MAX_INPUT_PIXELS). ` +
        `What fits: the image downscaled to at most ${fits.width}x${fits.height} before it is sent.`,
      { limit: limits.maxInputPixels, width: header.width, height: header.height, fits },
    )
  }
}

/**
 * Step 3, for the plan: the output size against its limit, and the whole conversion against the
 * isolate's memory budget, so an operation that would not fit is refused (422) instead of killing the
 * isolate, and every request sharing it, mid-way. Returns the estimate, in MiB.
 *
 * @example
 * const estimate = checkPlan(planConversion(header, 'webp', geometry, settings, limits), limits)
 */
export function checkPlan(plan: ConversionPlan, limits: Limits, leanResidentMiB = 0): number {
  const { width, height, format } = plan
  const pixels = width * height
  if (pixels > limits.maxOutputPixels) {
    throw new ApiError(
      'image_too_large',
      `The output would be ${width}x${height} (${mp(pixels)}); the limit is ${mp(limits.maxOutputPixels)}.`,
      { limit: limits.maxOutputPixels, width, height },
    )
  }
  const maxDimension = MAX_OUTPUT_DIMENSION[format]
  if (maxDimension !== undefined && (width > maxDimension || height > maxDimension)) {
    throw new ApiError(
      'image_too_large',
      `The output would be ${width}x${height}; ${format} output can be at most ${maxDimension} pixels wide and high. A smaller width/height or another format fits.`,
      { maxDimension, width, height },
    )
  }
  if (plan.route === 'frames') checkAnimation(plan, limits)
  const estimate = estimateMiB(plan, leanResidentMiB)
  if (estimate > limits.memoryBudgetMiB) {
    const inMP = mp(plan.header.width * plan.header.height)
    throw new ApiError(
      'operation_too_large',
      `Converting this ${inMP} ${plan.header.format} to a ${width}x${height} ${format} needs an estimated ${Math.round(estimate)} MiB; ` +
        `the memory budget (MEMORY_BUDGET_MIB) is ${limits.memoryBudgetMiB} MiB.`,
      { limit: limits.memoryBudgetMiB, estimateMiB: Math.round(estimate) },
    )
  }
  return estimate
}

/**
 * Step 3, for an animation that keeps every frame: its frame count and its pixels in all (frames x the larger of the
 * canvas and the output) against their limits, and (a GIF) every frame on its screen, from the header alone.
 */
function checkAnimation({ header, width, height }: ConversionPlan, limits: Limits): void {
  const keepFirst = 'animated=false converts the first frame only'
  if (header.frames > limits.maxAnimationFrames) {
    throw new ApiError(
      'image_too_large',
      `The animation has ${header.frames} frames; the limit is ${limits.maxAnimationFrames} (MAX_ANIMATION_FRAMES). ${keepFirst}.`,
      { limit: limits.maxAnimationFrames, frames: header.frames },
    )
  }
  const pixels = header.frames * Math.max(header.width * header.height, width * height)
  if (pixels > limits.maxAnimationPixels) {
    throw new ApiError(
      'image_too_large',
      `The animation is ${header.frames} frames of ${Math.max(header.width, width)}x${Math.max(header.height, height)} (${mp(pixels)} in all); the limit is ${mp(limits.maxAnimationPixels)} (MAX_ANIMATION_PIXELS). ${keepFirst[0]!.toUpperCase()}${keepFirst.slice(1)}.`,
      { limit: limits.maxAnimationPixels, frames: header.frames },
    )
  }
  if (header.frameOutside) throw new ApiError('corrupt_image', 'A frame of the GIF lies outside its logical screen.')
}
