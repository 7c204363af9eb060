import { cloudflareTest } from '@cloudflare/vitest-plugin'
import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    projects: [
      {
        // Unit and integration tests run inside workerd, through the worker's own fetch handler.
        plugins: [cloudflareTest({ wrangler: { configPath: './wrangler.toml' } })],
        assetsInclude: ['**/*.jpg', '**/*.png', '**/*.webp', '**/*.avif', '**/*.gif', '**/*.svg'],
        test: {
          name: 'workerd',
          include: ['test/unit/**/*.test.ts', 'test/integration/**/*.test.ts'],
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
    ],
  },
})
