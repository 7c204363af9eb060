/**
 * The shape of test/conformance/expected.json, shared by the workerd conformance test and the HTTP run
 * over the whole corpus (test/http/corpus.ts). No imports: Node's type stripping reads it too.
 */

/** One row of test/conformance/expected.json. */
export interface Expected {
  /** Path relative to the corpus root, e.g. "pngsuite/xc1n0g08.png". */
  file: string
  status: number
  /** The problem `code` for a 4xx. */
  code?: string
  /** `detected` of a 415 unsupported_format, when the API names the format. */
  detected?: string
  /** Output format and size (upright: EXIF/irot applied) for a 200. */
  format?: string
  width?: number
  height?: number
  /** Also copied into test/fixtures/corpus/<file>, so the workerd tests check it without the corpus. */
  fixture?: boolean
  /** Why this outcome is the right one, where the corpus README suggests something else or leaves a choice. */
  note?: string
}

export interface ExpectedTable {
  /** What is sent for every file, in words. */
  request: string
  /** The query string every file is sent with (no leading "?"). */
  query: string
  files: Expected[]
}
