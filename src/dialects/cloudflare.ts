import colorString from 'color-string'
import { decodePart } from '../delivery/url'
import { ApiError } from '../errors'
import type { CompressOptions } from '../pipeline/options'

/** imgedge's /img options, as the text a /img path carries (`name=value`), that Cloudflare's options map onto. */
export type ImgFields = Partial<Record<keyof CompressOptions | 'onerror', string>>

/** How imgedge takes one of Cloudflare's options: mapped (onto the /img options named), not mapped yet, or refused for good. */
export type Mapping =
  | { status: 'mapped'; imgedge: string; note: string; map: (value: string, into: ImgFields) => void }
  | { status: 'not mapped yet'; imgedge: string; note: string }
  | { status: 'refused'; note: string }

/** The named qualities, as fixed qualities on imgedge's 1-100 scale (Cloudflare's useful range is 50-90, 85 its default). */
export const NAMED_QUALITY: Readonly<Record<string, number>> = { high: 90, 'medium-high': 80, 'medium-low': 65, low: 50 }

/** Cloudflare's fit values: imgedge's fit, and whether it may enlarge (Cloudflare's contain enlarges and never pads; pad does). */
const FIT: Readonly<Record<string, { fit: string; enlarge: boolean }>> = {
  'scale-down': { fit: 'inside', enlarge: false },
  contain: { fit: 'inside', enlarge: true },
  cover: { fit: 'cover', enlarge: true },
  crop: { fit: 'crop', enlarge: false },
  'aspect-crop': { fit: 'cover', enlarge: false },
  pad: { fit: 'contain', enlarge: true },
  squeeze: { fit: 'fill', enlarge: true },
}

/** Effort 1: libjpeg-turbo (baseline), libwebp method 1, libaom speed 9; baseline-jpeg asks for at most 2 (libjpeg-turbo, baseline). */
const FAST_EFFORT = 1
const BASELINE_EFFORT = 2

const refuse = (option: string, message: string) => new ApiError('invalid_option', `${option}: ${message}`, { option })

const oneOf = (option: string, value: string, values: readonly string[]): string => {
  if (!values.includes(value)) throw refuse(option, `expected one of ${values.join(', ')}, got "${value}"`)
  return value
}

/** A CSS colour (a name, #rgb, #rrggbb, #rrggbbaa, rgb(), rgba()) as imgedge's opaque hex. */
function hexColour(value: string): string {
  const rgba = colorString.get.rgb(value)
  if (rgba === null) throw refuse('background', `"${value}" is not a CSS colour imgedge reads (a name, #rgb, #rrggbb, rgb() or rgba())`)
  const [r = 0, g = 0, b = 0, a = 1] = rgba
  if (a < 1) throw refuse('background', 'imgedge\'s background is opaque: a colour with alpha below 1 is not mapped')
  return [r, g, b].map((channel) => channel.toString(16).padStart(2, '0')).join('')
}

const mapped = (imgedge: string, note: string, map: (value: string, into: ImgFields) => void): Mapping => ({ status: 'mapped', imgedge, note, map })
/** Mapped onto the imgedge option of the same meaning, the value as it is (/img's schema checks it). */
const same = (imgedge: keyof ImgFields, note: string): Mapping => mapped(imgedge, note, (value, into) => (into[imgedge] = value))
const notYet = (imgedge: string, note = 'the transformations are being added under this name'): Mapping => ({ status: 'not mapped yet', imgedge, note })
const refused = (note: string): Mapping => ({ status: 'refused', note })

/**
 * Cloudflare's URL options (`/cdn-cgi/image/<options>/<source>`), one line each: what imgedge does with it. A name not
 * here is refused as unknown; `ALIASES` gives the short names. A transformation that lands in imgedge under the name
 * its line names is mapped by changing that line, e.g. `gravity: same('gravity', 'as it is')`.
 */
export const CLOUDFLARE_OPTIONS: Readonly<Record<string, Mapping>> = {
  width: same('width', 'pixels'),
  height: same('height', 'pixels'),
  fit: mapped('fit, enlarge', 'scale-down: inside; contain: inside, enlarge; cover: cover, enlarge; crop: crop (cover, never enlarged, a side smaller than the box kept whole); aspect-crop: cover (never enlarged, cropped to the box\'s aspect ratio); pad: contain, enlarge; squeeze: fill, enlarge', (value, into) => {
    const fit = FIT[oneOf('fit', value, Object.keys(FIT))]!
    into.fit = fit.fit
    into.enlarge = String(fit.enlarge)
  }),
  quality: mapped('quality', `1-100 as it is; ${Object.entries(NAMED_QUALITY).map(([name, quality]) => `${name} ${quality}`).join(', ')}; with format=webp, 100 is lossless`, (value, into) => {
    into.quality = String(NAMED_QUALITY[value] ?? value)
  }),
  format: mapped('format, effort', 'auto, avif, webp, jpeg (progressive), png as they are; png-force: png; baseline-jpeg: jpeg at effort 2 or less (libjpeg-turbo, baseline); json: the image\'s facts instead of an image', (value, into) => {
    const format = oneOf('format', value, ['auto', 'avif', 'webp', 'jpeg', 'baseline-jpeg', 'png', 'png-force', 'json'])
    into.format = format === 'baseline-jpeg' ? 'jpeg' : format === 'png-force' ? 'png' : format
    if (format === 'baseline-jpeg') into.effort = String(Math.min(Number(into.effort ?? BASELINE_EFFORT), BASELINE_EFFORT))
  }),
  background: mapped('background', 'CSS colours (names, #rgb, #rrggbb, rgb(), rgba() with alpha 1) as hex', (value, into) => (into.background = hexColour(value))),
  metadata: mapped('metadata', 'keep, copyright, none as they are (imgedge\'s default is none; Cloudflare\'s copyright for JPEG)', (value, into) => {
    into.metadata = oneOf('metadata', value, ['keep', 'copyright', 'none'])
  }),
  anim: mapped('animated', 'true or false', (value, into) => (into.animated = oneOf('anim', value, ['true', 'false', '1', '0']))),
  onerror: mapped('onerror', 'redirect: a 302 to the source (origin sources) when it cannot be converted', (value, into) => (into.onerror = oneOf('onerror', value, ['redirect']))),
  compression: mapped('effort', `fast: effort ${FAST_EFFORT} (the format is kept)`, (value, into) => {
    oneOf('compression', value, ['fast'])
    into.effort = String(Math.min(Number(into.effort ?? FAST_EFFORT), FAST_EFFORT))
  }),
  upscale: mapped('(none)', 'interpolate: imgedge\'s one resampler (Lanczos3); generate (AI upscaling) is refused', (value) => {
    oneOf('upscale', value, ['interpolate'])
  }),
  gravity: same('gravity', 'auto, face, the sides, center and a focal point XxY as they are'),
  zoom: mapped('(none)', '0 (the default: gravity=face frames the faces in the crop fit=cover takes); a closer crop (above 0) is refused', (value) => {
    if (!/^(0(\.\d*)?|1(\.0*)?|\.\d+)$/.test(value)) throw refuse('zoom', 'must be a number from 0 to 1')
    if (Number(value) > 0) throw new ApiError('unsupported_option', `zoom=${value}: not supported: gravity=face centres the crop fit=cover takes on the faces, and does not crop closer (zoom=0 only).`, { option: 'zoom', mapping: 'refused' })
  }),
  dpr: same('dpr', '1-4 as it is'),
  rotate: same('rotate', '0, 90, 180, 270 as they are'),
  flip: same('flip', 'h, v, hv as they are'),
  trim: same('trim', 'top;right;bottom;left in pixels, or border, as they are'),
  'trim.width': notYet('trim', 'imgedge trims by edges (trim=top;right;bottom;left), which needs no image size'),
  'trim.height': notYet('trim', 'imgedge trims by edges (trim=top;right;bottom;left), which needs no image size'),
  'trim.left': notYet('trim', 'imgedge trims by edges (trim=top;right;bottom;left), which needs no image size'),
  'trim.top': notYet('trim', 'imgedge trims by edges (trim=top;right;bottom;left), which needs no image size'),
  sharpen: same('sharpen', '0-10 as it is'),
  blur: same('blur', '1-250 as it is'),
  brightness: same('brightness', 'a factor as it is (1 unchanged)'),
  contrast: same('contrast', 'a factor as it is (1 unchanged)'),
  gamma: same('gamma', 'a factor as it is (1 unchanged)'),
  saturation: same('saturation', 'a factor as it is (1 unchanged)'),
  'slow-connection-quality': refused('needs client hints (RTT, ECT, Save-Data); use quality'),
  segment: refused('background removal needs a segmentation model imgedge does not have'),
  border: refused('not in imgedge (Cloudflare takes it from Workers only)'),
  'origin-auth': refused('imgedge never passes the request\'s credentials to a source'),
}

/** Cloudflare's short names. */
export const ALIASES: Readonly<Record<string, string>> = { w: 'width', h: 'height', q: 'quality', f: 'format', g: 'gravity', scq: 'slow-connection-quality' }

/**
 * Cloudflare's options text (`width=800,fit=cover,f=auto`) as imgedge's /img options text, every option mapped or
 * refused: 400 `invalid_option` for an unknown name, a bad value or one given twice, 400 `unsupported_option` for one
 * imgedge does not do (yet). Commas inside parentheses (`background=rgb(0,0,255)`) belong to the value. Values imgedge takes as they are (numbers) are checked by /img's own schema.
 *
 * @example
 * cloudflareToImg('w=800,fit=contain,q=high,f=webp') // 'width=800,fit=inside,enlarge=true,quality=90,format=webp'
 */
export function cloudflareToImg(optionsText: string): string {
  const into: ImgFields = {}
  const seen = new Set<string>()
  for (const pair of optionsText.split(/,(?![^(]*\))/).filter(Boolean)) {
    const at = pair.indexOf('=')
    const [given, value] = at > 0 ? [decodePart(pair.slice(0, at)), decodePart(pair.slice(at + 1))] : [decodePart(pair), '']
    const name = ALIASES[given] ?? given
    const mapping = Object.hasOwn(CLOUDFLARE_OPTIONS, name) ? CLOUDFLARE_OPTIONS[name] : undefined
    if (mapping === undefined) throw refuse(given, `unknown option (Cloudflare's options: ${Object.keys(CLOUDFLARE_OPTIONS).join(', ')})`)
    if (seen.has(name)) throw refuse(given, 'given more than once')
    seen.add(name)
    if (mapping.status !== 'mapped') {
      const why = mapping.status === 'not mapped yet' ? `not mapped yet (imgedge's ${mapping.imgedge})` : `not supported: ${mapping.note}`
      throw new ApiError('unsupported_option', `${given}: ${why}.`, { option: given, mapping: mapping.status })
    }
    if (at <= 0) throw refuse(given, 'is not name=value')
    mapping.map(value, into)
  }
  if (into.format === 'webp' && into.quality === '100') {
    delete into.quality
    into.lossless = 'true'
  }
  const text = Object.entries(into).map(([name, value]) => `${name}=${encodeURIComponent(value)}`).join(',')
  return text === '' ? '_' : text
}

/**
 * The table as /api/formats publishes it: each Cloudflare option with its short names, whether it is mapped, and onto what.
 *
 * @example
 * cloudflareTable().find((row) => row.option === 'fit') // { option: 'fit', aliases: [], status: 'mapped', imgedge: 'fit, enlarge', note: '...' }
 */
export const cloudflareTable = () =>
  Object.entries(CLOUDFLARE_OPTIONS).map(([option, mapping]) => ({
    option,
    aliases: Object.keys(ALIASES).filter((alias) => ALIASES[alias] === option),
    status: mapping.status,
    ...(mapping.status === 'refused' ? {} : { imgedge: mapping.imgedge }),
    note: mapping.note,
  }))
