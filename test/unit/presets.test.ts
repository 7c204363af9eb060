/** PRESETS' grammar (src/delivery/presets.ts): what parses, and each mistake refused with its part named. */
import { expect, it } from 'vitest'
import { parsePresets } from '../../src/delivery/presets'

it('reads name=option:value,... parts separated by ; with whitespace and newlines around them', () => {
  expect(parsePresets('thumb=width:256,height:256,fit:cover;hero=width:1920')).toEqual({
    thumb: { width: '256', height: '256', fit: 'cover' },
    hero: { width: '1920' },
  })
  expect(parsePresets('\n  thumb = width: 64 , background:#fff ;\n  plain= ;\n')).toEqual({ thumb: { width: '64', background: '#fff' }, plain: {} })
  expect(parsePresets('')).toEqual({})
})

it('refuses a part without a name, an option without a value, a repeated name or option, and preset inside a preset', () => {
  expect(() => parsePresets('width:256')).toThrow('PRESETS: "width:256" is not name=option:value,...')
  expect(() => parsePresets('thumb=width')).toThrow('"width" in thumb is not option:value')
  expect(() => parsePresets('a=width:1;a=width:2')).toThrow('"a" is defined twice')
  expect(() => parsePresets('a=width:1,width:2')).toThrow('"width:2" in a')
  expect(() => parsePresets('a=preset:b')).toThrow('"preset:b" in a')
})
