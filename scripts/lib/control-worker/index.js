// Does no image work. GET: 200 (the dev server's readiness check). POST with control_bytes (and control_status) in the
// query: reads the body to its end, keeping none of it, and answers that many bytes with that status, as imgedge
// answered the same request (npm run memory:steady -- --rounds). Any other POST: 400 at once, the body left unread.
export default {
  async fetch(request) {
    if (request.method === 'GET') return new Response('{}', { status: 200, headers: { 'content-type': 'application/json' } })
    const query = new URL(request.url).searchParams
    if (!query.has('control_bytes')) return new Response('{}', { status: 400, headers: { 'content-type': 'application/json' } })
    const reader = request.body?.getReader()
    if (reader) while (!(await reader.read()).done);
    return new Response(new Uint8Array(Number(query.get('control_bytes'))), { status: Number(query.get('control_status') ?? 200) })
  },
}
