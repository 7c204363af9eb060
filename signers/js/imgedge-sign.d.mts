/** Options of a /img URL: names and values of POST /api/compress's options, `preset`, or a ready `name=value,...` string. */
export type ImageOptions = Record<string, string | number | boolean> | string

export function requestedPath(path: string): string
export function signPath(path: string, secret: string, exp?: number): Promise<string>
export function signatureMatches(path: string, exp: number | undefined, sig: string, secret: string): Promise<boolean>
export function imagePath(options: ImageOptions, source: string): string
export function imageUrl(base: string, options: ImageOptions, source: string, signing?: { secret?: string; exp?: number; expiresIn?: number }): Promise<string>
