import { cloudflareTest } from '@cloudflare/vitest-plugin'
import { defineConfig } from 'vitest/config'

/**
 * The workerd tests run the worker with a 1 MiB body limit instead of wrangler.toml's 25 MiB, so the
 * 413 tests send about 1 MB instead of 26 MB. Every fixture is far under it (the largest, photo.png,
 * is 245 KB). Anonymous rate limiting is off here, because the codec tests make hundreds of calls
 * from one client; the rate-limit tests turn it on per request with their own vars (helpers/worker.ts).
 * The other [vars] keep their wrangler.toml values; tests read them from `env` (cloudflare:test). The
 * http project runs wrangler dev with wrangler.toml as it is.
 */
const TEST_MAX_INPUT_BYTES = 1024 * 1024

/**
 * Files that count in the isolate's conversion queue or the rate limiter's objects across many requests (admission,
 * Retry-After, exact counts): each runs in a fresh workerd, as every file did before, so nothing an earlier file left
 * in the isolate (queued work, the queue's learnt cost) moves their counts. In a shared workerd, "10 of 40 concurrent
 * calls" once saw 9 and once 5 pass, late in full runs.
 */
const FRESH_ISOLATE = [
  'test/integration/rate-limit.test.ts',
  'test/integration/rate-limiter-object.test.ts',
  'test/integration/api-keys.test.ts',
  'test/integration/img-burst.test.ts',
]

/** The worker in workerd with the test configuration: the [vars] of wrangler.toml under `bindings`. */
const workerd = (bindings: Record<string, string> = {}) => [
  cloudflareTest({
    wrangler: { configPath: './wrangler.toml' },
    miniflare: { bindings: { MAX_INPUT_BYTES: String(TEST_MAX_INPUT_BYTES), RATE_LIMIT_ANON_PER_MINUTE: '0', ...bindings } },
  }),
]
const ASSETS = ['**/*.jpg', '**/*.png', '**/*.webp', '**/*.avif', '**/*.gif', '**/*.svg']

export default defineConfig({
  test: {
    // Two files at a time on CI's two cores (vitest's default is one fewer than the cores: one file at a time).
    maxWorkers: 2,
    projects: [
      {
        // Unit and integration tests run inside workerd, through the worker's own fetch handler.
        plugins: workerd(),
        assetsInclude: ASSETS,
        test: {
          name: 'workerd',
          include: ['test/unit/**/*.test.ts', 'test/integration/**/*.test.ts'],
          exclude: FRESH_ISOLATE,
          // One workerd (Miniflare) per vitest worker runs its files one after another, with the worker's modules and
          // lean.wasm loaded once, as one isolate serves request after request: a fresh workerd per file cost about
          // 4 s each (most of the suite's time). So storage (R2, the Cache API, the rate limiter's objects) and the
          // isolate's state (its lean memory, the queue's learnt cost) carry over from file to file: files use bucket
          // keys of their own and a fresh client address each (freshIp); FRESH_ISOLATE's files get a workerd each.
          isolate: false,
          // A real origin on loopback for GET /img (test/origin/server.ts), its URL given as inject('originUrl').
          globalSetup: ['./test/origin/server.ts'],
          // A guard against hangs, not a speed check: the longest test (1000 failed PNG decodes, 19 s alone at load 9)
          // took 88 s beside another file at load 11.
          testTimeout: 180_000,
        },
      },
      {
        // The same, a fresh workerd for each file (FRESH_ISOLATE).
        plugins: workerd(),
        assetsInclude: ASSETS,
        test: {
          name: 'workerd-fresh',
          include: FRESH_ISOLATE,
          globalSetup: ['./test/origin/server.ts'],
          testTimeout: 60_000,
        },
      },
      {
        // The conversion queue under concurrent requests, each a real request to the worker (SELF) in a request
        // context of its own, with a short queue timeout so waiting and timing out take about a second.
        plugins: workerd({ QUEUE_TIMEOUT_MS: '1500' }),
        assetsInclude: ASSETS,
        test: {
          name: 'queue',
          include: ['test/queue/**/*.test.ts'],
          globalSetup: ['./test/origin/server.ts'],
          testTimeout: 60_000,
        },
      },
      {
        // These start a real `wrangler dev` and talk to it over HTTP, from Node.
        test: {
          name: 'http',
          include: ['test/http/**/*.test.ts'],
          environment: 'node',
          testTimeout: 60_000,
          hookTimeout: 120_000,
        },
      },
      {
        // The lock file as committed, read from Node: every platform's binaries, npm ci accepts it.
        test: {
          name: 'install',
          include: ['test/install/**/*.test.ts'],
          environment: 'node',
        },
      },
    ],
  },
})
