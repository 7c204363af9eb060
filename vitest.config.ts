import { cloudflareTest } from '@cloudflare/vitest-plugin'
import { defineConfig } from 'vitest/config'

export default defineConfig({
  plugins: [cloudflareTest({ wrangler: { configPath: './wrangler.toml' } })],
  // Fixtures are imported as bytes (`?bytes` would need a loader): serve them as assets.
  assetsInclude: ['**/*.jpg', '**/*.png', '**/*.webp', '**/*.avif', '**/*.gif', '**/*.svg'],
  test: {
    include: ['test/unit/**/*.test.ts', 'test/integration/**/*.test.ts'],
    testTimeout: 60_000,
  },
})
