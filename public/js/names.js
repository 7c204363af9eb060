// The file name the page's snippets and its download link give an answer.

/**
 * The source's stem, `.imgedge`, and the answer's extension: never the name of the file that was sent, so running a
 * copied snippet (or saving the download beside the original) cannot overwrite the original.
 * @example
 * outputName('photo.jpg', 'photo.jpg') // 'photo.imgedge.jpg'
 * outputName('photos/cat.jpg', 'cat.webp') // 'cat.imgedge.webp'
 * outputName(undefined, 'image.avif') // 'image.imgedge.avif'
 */
export function outputName(source, answered = '') {
  const extension = /\.[^./]+$/.exec(answered)?.[0] ?? ''
  const base = String(source ?? '').split('/').filter(Boolean).pop() ?? ''
  const stem = base.replace(/\.[^.]*$/, '') || 'image'
  return `${stem}.imgedge${extension}`
}
