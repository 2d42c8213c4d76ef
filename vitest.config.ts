import { defineConfig } from 'vitest/config';

// Three tiers. Unit tests use real bash, files and symlinks and run two files at a time, one
// per core (vitest's default is one fewer worker than cores: one file at a time here, the
// machine at load ≈ 0.6; two took the tier from 341 s to 182 s, 6 December).
// Integration tests start real kube-apiservers and etcds: two files at a time, one per core.
// A file spends most of its time waiting (on Pods, polls, timers), so two overlap well: on
// 2 cores shared with other runs, each file took about as long two at a time as alone, and the
// tier 12 min instead of 29 (6 December). More than one file per core would starve them.
export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
          testTimeout: 30_000,
          maxWorkers: 2,
          globalSetup: ['test/unit/global-setup.ts'],
        },
      },
      {
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          testTimeout: 120_000,
          hookTimeout: 600_000,
          maxWorkers: 2,
          // Its own group: a run of every project may not mix worker counts in one group.
          sequence: { groupOrder: 1 },
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
