// Playwright drives Debian's Chromium (never a downloaded browser) against a
// real Patchbay server that scripts/e2e starts and names in PATCHBAY_URL.
import { defineConfig } from '@playwright/test';

if (!process.env.PATCHBAY_URL) {
  throw new Error('PATCHBAY_URL is not set: run the e2e tests with scripts/e2e');
}

export default defineConfig({
  testDir: '.',
  testMatch: '*.spec.mjs',
  timeout: 30_000,
  expect: { timeout: 10_000 },
  workers: 1,
  retries: 0,
  reporter: [['list']],
  outputDir: 'test-results',
  use: {
    baseURL: process.env.PATCHBAY_URL,
    viewport: { width: 1280, height: 720 },
    trace: 'retain-on-failure',
    launchOptions: {
      executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
      args: [
        '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
        '--disable-background-networking', '--disable-component-update', '--disable-sync',
      ],
    },
  },
});
