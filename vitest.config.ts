import { defineConfig } from 'vitest/config';

// Three tiers. Unit tests use real bash, files and symlinks and run in parallel.
// Integration tests start real kube-apiservers and etcds: on a 2-core machine they run
// one file at a time so that control planes do not starve each other.
export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
          testTimeout: 30_000,
          globalSetup: ['test/unit/global-setup.ts'],
        },
      },
      {
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          testTimeout: 120_000,
          hookTimeout: 600_000,
          fileParallelism: false,
          globalSetup: ['test/integration/global-setup.ts'],
        },
      },
      {
        // Real images on a real container runtime (Docker): hack/images.sh builds them in
        // the global setup (cached by input digest); skipped, saying why, with no engine.
        test: {
          name: 'containers',
          include: ['test/containers/**/*.test.ts'],
          testTimeout: 120_000,
          fileParallelism: false,
          globalSetup: ['test/containers/global-setup.ts'],
        },
      },
    ],
  },
});
