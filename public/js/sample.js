// A test picture drawn in the browser, so the tester works without an image at hand (and without
// shipping a photo with the page). Smooth gradients plus fine texture, like a photo, as a lossless PNG.

/** @returns {Promise<File>} a 960x600 PNG */
export async function samplePicture() {
  const canvas = document.createElement('canvas')
  canvas.width = 960
  canvas.height = 600
  const g = canvas.getContext('2d')

  const sky = g.createLinearGradient(0, 0, 0, 360)
  sky.addColorStop(0, '#1d4e89')
  sky.addColorStop(1, '#f4a261')
  g.fillStyle = sky
  g.fillRect(0, 0, 960, 600)

  g.fillStyle = '#ffe8a3'
  g.beginPath()
  g.arc(700, 250, 60, 0, Math.PI * 2)
  g.fill()

  const hills = [
    ['#2a6f4e', 330, 0.011],
    ['#1f5a3f', 400, 0.017],
    ['#14412d', 470, 0.023],
  ]
  for (const [colour, base, freq] of hills) {
    g.fillStyle = colour
    g.beginPath()
    g.moveTo(0, 600)
    for (let x = 0; x <= 960; x += 8) g.lineTo(x, base + Math.sin(x * freq) * 30 + Math.sin(x * freq * 3.7) * 9)
    g.lineTo(960, 600)
    g.fill()
  }

  // Grain: a fixed pseudo-random sequence, so every run draws the same picture.
  const pixels = g.getImageData(0, 0, 960, 600)
  let seed = 7
  for (let i = 0; i < pixels.data.length; i += 4) {
    seed = (Math.imul(seed, 1103515245) + 12345) & 0x7fffffff
    const noise = (seed % 17) - 8
    pixels.data[i] += noise
    pixels.data[i + 1] += noise
    pixels.data[i + 2] += noise
  }
  g.putImageData(pixels, 0, 0)

  const blob = await new Promise((resolve) => canvas.toBlob(resolve, 'image/png'))
  return new File([blob], 'imgedge-sample.png', { type: 'image/png' })
}
