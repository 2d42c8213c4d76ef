import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

// Three tiers. Unit tests use real bash, files and symlinks and run two files at a time, one
// per core (vitest's default is one fewer worker than cores: one file at a time here, the
// machine at load ≈ 0.6; two took the tier from 341 s to 182 s, 6 December).
// Integration tests start real kube-apiservers and etcds, and a file spends most of its time
// waiting (on Pods, polls, timers), so files overlap well. On 2 cores (6 December): one at a
// time took the tier 29 min; two, 11 min 36 s (each file about as long as alone, the cores 43%
// busy). Three took 8 min 21 s, but in one CI run of three chaos.test's apiserver-restart
// scenario left 5 of its 12 runs unfinished: two it is, leaving the timing checks headroom.
// The integration files that take minutes, longest first (seconds on 6 December): they start
// first. Vitest starts the files it has timings for longest first, but a clean clone (CI) has
// none, and then it goes by file size: chaos.test.ts, the smallest file and the longest, ran
// last and alone on one core while the other sat idle for three minutes.
const LONGEST_FIRST = [
  'test/integration/chaos.test.ts', // 199
  'test/integration/operator-pods.test.ts', // 108
  'test/integration/operator-archive.test.ts', // 105
  'test/integration/operator-review.test.ts', // 72
  'test/integration/operator-kueue.test.ts', // 61
];

/** Vitest's order, but within a project the files of LONGEST_FIRST lead, in its order. */
class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (spec: TestSpecification): number => {
      const at = LONGEST_FIRST.findIndex((file) => spec.moduleId.endsWith(`/${file}`));
      return at < 0 ? LONGEST_FIRST.length : at;
    };
    const place = new Map(sorted.map((spec, index) => [spec, index]));
    const order = (spec: TestSpecification): number => place.get(spec) ?? 0;
    // Projects stay in vitest's order (they are contiguous in it); only files within one move.
    return [...sorted].sort((a, b) =>
      a.project === b.project && rank(a) !== rank(b) ? rank(a) - rank(b) : order(a) - order(b),
    );
  }
}

export default defineConfig({
  test: {
    sequence: { sequencer: LongestFirst },
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
