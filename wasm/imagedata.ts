/**
 * workerd has no `ImageData`, but the codecs construct and accept it. This is the minimal shape they
 * use: an RGBA byte array with its dimensions. Installed once, globally, before any codec runs.
 */
class ImageDataPolyfill implements ImageData {
  readonly data: Uint8ClampedArray
  readonly width: number
  readonly height: number
  readonly colorSpace = 'srgb' as const

  constructor(dataOrWidth: Uint8ClampedArray | number, widthOrHeight: number, height?: number) {
    if (typeof dataOrWidth === 'number') {
      this.width = dataOrWidth
      this.height = widthOrHeight
      this.data = new Uint8ClampedArray(this.width * this.height * 4)
    } else {
      this.data = dataOrWidth
      this.width = widthOrHeight
      this.height = height ?? dataOrWidth.length / 4 / widthOrHeight
    }
    if (this.data.length !== this.width * this.height * 4) {
      throw new RangeError(`ImageData: ${this.data.length} bytes do not match ${this.width}x${this.height}`)
    }
  }
}

declare global {
  // The DOM's ImageData, as far as the codecs and our pipeline use it.
  interface ImageData {
    readonly data: Uint8ClampedArray
    readonly width: number
    readonly height: number
    readonly colorSpace: 'srgb'
  }
  // eslint-disable-next-line no-var
  var ImageData: {
    prototype: ImageData
    new (data: Uint8ClampedArray, width: number, height?: number): ImageData
    new (width: number, height: number): ImageData
  }
}

if (typeof globalThis.ImageData === 'undefined') {
  Object.defineProperty(globalThis, 'ImageData', { value: ImageDataPolyfill, writable: true, configurable: true })
}
export {}
