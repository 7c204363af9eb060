// Answers at once and leaves the request body unread: GET 200 (the dev server's readiness check), anything else 400.
export default {
  fetch: (request) => new Response('{}', { status: request.method === 'GET' ? 200 : 400, headers: { 'content-type': 'application/json' } }),
}
