// One controller replica of the chaos suite, run as its own process (bundled by env.ts) so
// that it can be killed with SIGKILL. argv: a JSON ReplicaArgs. It logs to stdout (the
// suite's log file), as `lorenz controller` does, with `LORENZ_FAILPOINTS` from its env.
import { startController } from '../../src/controller/main.js';
import { createLogger } from '../../src/controller/runtime/logger.js';
import { entryArgs, type EntryArgs } from './entry-args.js';

export interface ReplicaArgs extends EntryArgs {
  namespace: string;
  identity: string;
  leaderElect: boolean;
}

const { args, kubeConfig } = entryArgs<ReplicaArgs>();
const running = await startController({
  kubeConfig,
  namespace: args.namespace,
  identity: args.identity,
  leaderElect: args.leaderElect,
  logger: createLogger({ level: 'info', base: { identity: args.identity } }),
});
await running.done;
