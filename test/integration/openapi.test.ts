/** GET /api/openapi.json: generated from the schemas and lists the worker runs on, so it cannot drift. */
import { describe, expect, it } from 'vitest'
import errorsGuide from '../../docs/guide/limits-errors.md?raw'
import { ERRORS } from '../../src/errors'
import { CompressOptionsSchema } from '../../src/pipeline/options'
import { compress, expectProblem, get } from '../helpers/api'
import { fixture } from '../helpers/fixtures'
import { compressTiny, freshIp } from '../helpers/worker'

interface Parameter {
  name: string
  in: string
  description: string
  schema: { type: string; enum?: string[]; minimum?: number; maximum?: number; default?: unknown }
}
interface Operation {
  summary: string
  description: string
  parameters?: Parameter[]
  responses: Record<string, { description: string; headers?: Record<string, { description: string }>; content?: Record<string, unknown> }>
}
interface Document {
  openapi: string
  info: { title: string; version: string }
  paths: Record<string, Record<string, Operation>>
  components: { schemas: Record<string, { properties: Record<string, { enum?: string[] }>; required?: string[] }> }
  'x-error-codes': { code: string; status: number; title: string; when: string }[]
}

const doc = async (): Promise<Document> => {
  const res = await get('/api/openapi.json')
  expect(res.status).toBe(200)
  expect(res.headers.get('content-type')).toMatch(/^application\/json/)
  return (await res.json()) as Document
}

describe('openapi.json', () => {
  it('is an OpenAPI 3.1 document describing exactly the five endpoints', async () => {
    const d = await doc()
    expect(d.openapi).toBe('3.1.0')
    expect(d.info.title).toBe('imgedge')
    expect(Object.keys(d.paths).sort()).toEqual(['/api/compress', '/api/formats', '/api/health', '/cdn-cgi/image/{options}/{source}', '/img/{options}/{source}'])
    for (const [path, methods] of Object.entries(d.paths)) {
      for (const op of Object.values(methods)) {
        expect(op.summary, path).toBeTruthy()
        expect(op.description, path).toBeTruthy()
      }
    }
  })

  it('names every operation, and declares the API-key schemes the counted operations take', async () => {
    const d = (await doc()) as unknown as {
      paths: Record<string, Record<string, { operationId?: string; security?: Array<Record<string, string[]>> }>>
      components: { securitySchemes: Record<string, { type: string; scheme?: string; in?: string; name?: string }> }
    }
    const ids = Object.values(d.paths).flatMap((methods) => Object.values(methods).map((op) => op.operationId))
    expect(ids.sort()).toEqual(['compressImage', 'deliverCloudflareImage', 'deliverImage', 'getFormats', 'getHealth'])
    expect(d.components.securitySchemes.bearerKey).toMatchObject({ type: 'http', scheme: 'bearer' })
    expect(d.components.securitySchemes.apiKeyHeader).toMatchObject({ type: 'apiKey', in: 'header', name: 'X-API-Key' })
    for (const path of ['/api/compress', '/img/{options}/{source}', '/cdn-cgi/image/{options}/{source}']) {
      const security = Object.values(d.paths[path]!)[0]!.security!
      expect(security).toEqual([{}, { bearerKey: [] }, { apiKeyHeader: [] }])
      for (const requirement of security) for (const scheme of Object.keys(requirement)) expect(d.components.securitySchemes[scheme], scheme).toBeDefined()
    }
  })

  it('documents every compress option from the validating schema, with ranges and enums', async () => {
    const params = (await doc()).paths['/api/compress']!.post!.parameters!
    expect(params.map((p) => p.name).sort()).toEqual(Object.keys(CompressOptionsSchema.shape).sort())
    for (const p of params) {
      expect(p.in).toBe('query')
      expect(p.description.length, p.name).toBeGreaterThan(5)
    }
    const byName = Object.fromEntries(params.map((p) => [p.name, p.schema]))
    // a number 1-100 or `auto`
    expect((byName.quality as { anyOf?: unknown[] }).anyOf).toEqual(expect.arrayContaining([expect.objectContaining({ enum: ['auto'] }), expect.objectContaining({ type: 'integer', minimum: 1, maximum: 100 })]))
    expect(byName.target).toMatchObject({ type: 'number', minimum: 10, maximum: 95 })
    expect(byName.effort).toMatchObject({ type: 'integer', minimum: 0, maximum: 9 })
    expect(byName.format!.enum).toEqual(expect.arrayContaining(['jpeg', 'png', 'webp', 'avif', 'auto']))
    expect(byName.fit).toMatchObject({ enum: ['inside', 'cover', 'contain', 'fill', 'crop'], default: 'inside' })
  })

  it('documents every error code with its status, and the errors guide lists each one', async () => {
    const d = await doc()
    expect(d['x-error-codes'].map((e) => e.code)).toEqual(Object.keys(ERRORS))
    for (const e of d['x-error-codes']) {
      expect(e.status).toBe(ERRORS[e.code as keyof typeof ERRORS].status)
      expect(e.when.length).toBeGreaterThan(5)
      expect(errorsGuide, `docs/guide/limits-errors.md error table lacks ${e.code}`).toMatch(new RegExp(`\\| \`${e.code}\` \\| ${e.status} \\|`))
    }
    expect(d.components.schemas.Problem!.properties.code!.enum).toEqual(Object.keys(ERRORS))
  })

  it('documents every header a real compress answer carries', async () => {
    const documented = Object.keys((await doc()).paths['/api/compress']!.post!.responses['200']!.headers!).map((h) => h.toLowerCase())
    const res = await compressTiny(freshIp(), { RATE_LIMIT_ANON_PER_MINUTE: '10' }, {}, '?format=webp')
    expect(res.status).toBe(200)
    // everything but the generic security (secureHeaders), CORS and entity headers
    const generic = /^(x-(content-type|frame|xss|dns-prefetch|download|permitted-cross-domain)-|content-(type|length)$|strict-transport|cross-origin|origin-agent|referrer-policy|access-control-)/
    const sent = [...res.headers.keys()].filter((h) => !generic.test(h))
    expect(sent.length).toBeGreaterThan(10)
    for (const h of sent) expect(documented, h).toContain(h)
  })

  it('describes the JSON answer with the fields a real one has', async () => {
    const schema = (await doc()).components.schemas.CompressAnswer!
    const res = await compress(fixture('photo.jpg'), { format: 'webp', width: 64, response: 'json' })
    const body = (await res.json()) as Record<string, unknown>
    expect(schema.required?.sort()).toEqual(Object.keys(body).sort())
    // The optional fields: quality with quality=auto or max_bytes, score with quality=auto, palette for a lossy PNG, crop with
    // gravity=auto; a lossy PNG of quality=auto that max_bytes did not have to lower, cropped at gravity=auto, has all four.
    expect(Object.keys(schema.properties).filter((key) => !schema.required?.includes(key)).sort()).toEqual(['crop', 'palette', 'quality', 'score'])
    const fitted = (await (await compress(fixture('photo.jpg'), { format: 'png', quality: 'auto', width: 64, height: 64, fit: 'cover', gravity: 'auto', response: 'json', max_bytes: 100_000, effort: 0 })).json()) as Record<string, unknown>
    expect(Object.keys(fitted).sort()).toEqual(Object.keys(schema.properties).sort())
  })

  it('lists the status of a real error answer among the compress responses', async () => {
    const responses = (await doc()).paths['/api/compress']!.post!.responses
    await expectProblem(await compress(fixture('photo.jpg'), { quality: 101 }), 'invalid_option', 400)
    expect(responses['400']!.description).toContain('invalid_option')
    expect(responses['429']!.description).toContain('rate_limited')
  })

  it('answers 405 to POST', async () => {
    const { SELF } = await import('cloudflare:test')
    const res = await SELF.fetch('https://imgedge.test/api/openapi.json', { method: 'POST' })
    await expectProblem(res, 'method_not_allowed', 405)
    expect(res.headers.get('allow')).toBe('GET, HEAD')
  })
})
