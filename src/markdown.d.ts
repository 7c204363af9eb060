/** A Markdown file bundled as text (wrangler.toml [[rules]] Text): docs/memory-matrix.md for /api/formats. */
declare module '*.md' {
  const text: string
  export default text
}
