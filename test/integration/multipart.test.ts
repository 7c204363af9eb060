/**
 * multipart/form-data uploads: field `image` plus options as form fields, equivalent to a raw body
 * with query options.
 */
import { describe, expect, it } from 'vitest'
import { compress, compressForm, expectProblem, okBytes } from '../helpers/api'
import { firstDifference } from '../helpers/bytes'
import { fixture } from '../helpers/fixtures'
import { decode } from '../helpers/image'

function form(fields: Record<string, string>, image: Uint8Array | null = fixture('photo.png'), name = 'photo.png'): FormData {
  const data = new FormData()
  if (image) data.append('image', new File([image], name, { type: 'image/png' }))
  for (const [key, value] of Object.entries(fields)) data.append(key, value)
  return data
}

describe('multipart', () => {
  it('gives the same answer as a raw body with the options in the query', async () => {
    const options = { format: 'webp', quality: '60', width: '240' }
    const raw = await compress(fixture('photo.png'), options, { contentType: 'image/png' })
    const multi = await compressForm(form(options))
    const rawBytes = await okBytes(raw)
    const multiBytes = await okBytes(multi)
    expect(firstDifference(multiBytes, rawBytes)).toBe(-1)
    expect(multi.headers.get('content-type')).toBe('image/webp')
    for (const name of ['x-input-size', 'x-output-size', 'x-output-width', 'x-output-height', 'x-compression-ratio']) {
      expect(multi.headers.get(name), name).toBe(raw.headers.get(name))
    }
    const out = await decode(multiBytes)
    expect([out.format, out.image.width, out.image.height]).toEqual(['webp', 240, 150])
  })

  it('combines query options with different form field options', async () => {
    const res = await compressForm(form({ width: '240' }), { format: 'jpeg' })
    const out = await decode(await okBytes(res))
    expect([out.format, out.image.width]).toEqual(['jpeg', 240])
  })

  it('validates form field options like query options', async () => {
    const body = await expectProblem(await compressForm(form({ qualty: '80' })), 'invalid_option', 400)
    expect(body.option).toBe('qualty')
  })

  it('refuses an option given both in the query and as a form field with 400', async () => {
    const res = await compressForm(form({ quality: '60', format: 'webp' }), { quality: 60 })
    const body = await expectProblem(res, 'invalid_option', 400)
    expect(body.option).toBe('quality')
  })

  it('refuses an option given twice as form fields with 400', async () => {
    const data = form({ format: 'webp' })
    data.append('format', 'avif')
    const body = await expectProblem(await compressForm(data), 'invalid_option', 400)
    expect(body.option).toBe('format')
  })

  it('answers 400 missing_image without an image field', async () => {
    await expectProblem(await compressForm(form({ format: 'webp' }, null)), 'missing_image', 400)
  })

  it('answers 400 missing_image when the image is sent under another field name', async () => {
    const data = new FormData()
    data.append('file', new File([fixture('photo.png')], 'photo.png', { type: 'image/png' }))
    await expectProblem(await compressForm(data), 'missing_image', 400)
  })

  it('refuses a file in an option field with 400 invalid_option', async () => {
    const data = form({})
    data.append('format', new File([new TextEncoder().encode('webp')], 'format.txt', { type: 'text/plain' }))
    const body = await expectProblem(await compressForm(data), 'invalid_option', 400)
    expect(body.option).toBe('format')
  })

  it('refuses two image fields with 400', async () => {
    const data = form({})
    data.append('image', new File([fixture('photo.jpg')], 'photo.jpg', { type: 'image/jpeg' }))
    await expectProblem(await compressForm(data), 'invalid_request', 400)
  })

  it('refuses a text value in the image field with 415 unsupported_format', async () => {
    const data = new FormData()
    data.append('image', 'not an image')
    await expectProblem(await compressForm(data), 'unsupported_format', 415)
  })

  it('sniffs the format from the bytes, not the part type or file name', async () => {
    const data = new FormData()
    data.append('image', new File([fixture('photo.jpg')], 'photo.png', { type: 'image/png' }))
    const res = await compressForm(data)
    const out = await decode(await okBytes(res))
    expect(out.format).toBe('jpeg')
    expect(res.headers.get('x-input-format')).toBe('jpeg')
    expect(res.headers.get('content-disposition')).toBe('inline; filename="photo.jpg"')
  })
})
