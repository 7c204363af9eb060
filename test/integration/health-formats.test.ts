/** GET /api/health (shallow and deep) and GET /api/formats, the service's self-description. */
import { env } from 'cloudflare:test'
import { describe, expect, it } from 'vitest'
import pkg from '../../package.json'
import { get } from '../helpers/api'

const vars = env as unknown as Record<string, string>

interface FormatInfo {
  id: string
  mime: string
  extensions: string[]
  decode: boolean
  encode: boolean
  lossy: boolean
  lossless: boolean
  alpha: boolean
  options: Record<string, { type: string; min?: number; max?: number; default: number | boolean }>
}

const EXPECTED = {
  jpeg: { mime: 'image/jpeg', extensions: ['jpg', 'jpeg'], encode: true, options: ['quality', 'effort'] },
  png: { mime: 'image/png', extensions: ['png'], encode: true, options: ['quality', 'effort'] },
  webp: { mime: 'image/webp', extensions: ['webp'], encode: true, options: ['quality', 'lossless', 'effort'] },
  avif: { mime: 'image/avif', extensions: ['avif'], encode: true, options: ['quality', 'lossless', 'effort'] },
  gif: { mime: 'image/gif', extensions: ['gif'], encode: false, options: [] },
} as const

describe('health', () => {
  it('answers 200 with status, version and codecs', async () => {
    const res = await get('/api/health')
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toMatch(/^application\/json/)
    expect(res.headers.get('cache-control')).toBe('no-store')
    const body = (await res.json()) as { status: string; version: string; codecs: Record<string, { decode: boolean; encode: boolean }> }
    expect(body.status).toBe('ok')
    expect(body.version).toBe(pkg.version)
    for (const [id, expected] of Object.entries(EXPECTED)) {
      expect(body.codecs[id], id).toEqual({ decode: true, encode: expected.encode })
    }
  })

  it('round-trips every codec with ?deep=1', async () => {
    const res = await get('/api/health?deep=1')
    const body = (await res.json()) as { status: string; checks: Record<string, { ok: boolean; ms: number; error?: string }> }
    expect(res.status, JSON.stringify(body)).toBe(200)
    expect(body.status).toBe('ok')
    expect(Object.keys(body.checks).sort()).toEqual(Object.keys(EXPECTED).sort())
    for (const [id, check] of Object.entries(body.checks)) {
      expect(check.ok, `${id}: ${check.error}`).toBe(true)
      expect(check.ms).toBeGreaterThanOrEqual(0)
    }
  })

  it('accepts ?deep=true as deep', async () => {
    const body = (await (await get('/api/health?deep=true')).json()) as { checks?: unknown }
    expect(body.checks).toBeDefined()
  })

  it('stays shallow for ?deep=0', async () => {
    const body = (await (await get('/api/health?deep=0')).json()) as { checks?: unknown }
    expect(body.checks).toBeUndefined()
  })
})

describe('formats', () => {
  it('lists jpeg, png, webp, avif and gif with mime, extensions and decode/encode flags', async () => {
    const res = await get('/api/formats')
    expect(res.status).toBe(200)
    const { formats } = (await res.json()) as { formats: FormatInfo[] }
    expect(formats.map((f) => f.id)).toEqual(Object.keys(EXPECTED))
    for (const format of formats) {
      const expected = EXPECTED[format.id as keyof typeof EXPECTED]
      expect(format, format.id).toMatchObject({ mime: expected.mime, extensions: expected.extensions, decode: true, encode: expected.encode })
      expect(Object.keys(format.options).sort(), format.id).toEqual([...expected.options].sort())
    }
  })

  it('describes each encoder option with its range and default', async () => {
    const { formats } = (await (await get('/api/formats')).json()) as { formats: FormatInfo[] }
    const byId = Object.fromEntries(formats.map((f) => [f.id, f]))
    for (const id of ['jpeg', 'webp', 'avif']) {
      expect(byId[id]!.options.quality, id).toMatchObject({ type: 'integer', min: 1, max: 100 })
      const fallback = byId[id]!.options.quality!.default as number
      expect(fallback).toBeGreaterThanOrEqual(1)
      expect(fallback).toBeLessThanOrEqual(100)
    }
    expect(byId.jpeg!.options.quality!.default).toBe(80)
    expect(byId.webp!.options.quality!.default).toBe(80)
    expect(byId.avif!.options.quality!.default).toBe(50)
    for (const id of ['jpeg', 'png', 'webp', 'avif']) {
      expect(byId[id]!.options.effort, id).toEqual(expect.objectContaining({ type: 'integer', min: 0, max: 9, default: 4 }))
    }
    for (const id of ['webp', 'avif']) {
      expect(byId[id]!.options.lossless, id).toEqual(expect.objectContaining({ type: 'boolean', default: false }))
    }
    expect(byId.jpeg).toMatchObject({ lossy: true, lossless: false, alpha: false })
    expect(byId.png).toMatchObject({ lossy: false, lossless: true, alpha: true })
  })

  it('says what happens to colours: sRGB out, what each input format has converted', async () => {
    const { colour } = (await (await get('/api/formats')).json()) as { colour: { output: string; converted: Record<string, string> } }
    expect(colour.output).toMatch(/sRGB/)
    expect(Object.keys(colour.converted).sort()).toEqual(['avif', 'jpeg', 'png', 'webp'])
    expect(colour.converted.jpeg).toMatch(/CMYK/)
  })

  it('lists the request options', async () => {
    const { options } = (await (await get('/api/formats')).json()) as { options: string[] }
    expect([...options].sort()).toEqual(
      [
        'animated', 'background', 'blur', 'brightness', 'colors', 'contrast', 'dpr', 'effort', 'enlarge', 'fit', 'flip', 'format', 'gamma', 'gravity', 'height',
        'lossless', 'max_bytes', 'metadata', 'quality', 'response', 'rotate', 'saturation', 'sharpen', 'target', 'trim', 'width',
      ].sort(),
    )
  })

  it('publishes the configured limits', async () => {
    const { limits } = (await (await get('/api/formats')).json()) as { limits: Record<string, unknown> }
    expect(limits).toMatchObject({
      maxInputBytes: Number(vars.MAX_INPUT_BYTES),
      maxInputPixels: Number(vars.MAX_INPUT_PIXELS),
      maxOutputPixels: Number(vars.MAX_OUTPUT_PIXELS),
    })
    // vitest.config.ts lowers the body limit for tests; the pixel limits are wrangler.toml's.
    expect(limits.maxInputBytes).toBe(1024 * 1024)
    expect(limits.maxInputPixels).toBe(50_000_000)
    expect(limits.maxOutputPixels).toBe(25_000_000)
    expect([limits.maxAnimationFrames, limits.maxAnimationPixels]).toEqual([Number(vars.MAX_ANIMATION_FRAMES), Number(vars.MAX_ANIMATION_PIXELS)])
    expect(limits.memoryBudgetMiB).toBe(120)
    expect(limits.memoryModel).toMatchObject({ baseMiB: expect.any(Number), encode: { webp: { perMP: expect.any(Number) } } })
  })
})
