import { startupSnapshot } from 'node:v8';
import { runRunnerCommand } from '../runner/index.js';
import { markRestoredFromSnapshot } from '../workflow/startup-marks.js';
import { completionCommand } from './completion.js';
import { main, type Command, type CommandTable } from './main.js';
import { runCommand } from './run-command.js';
import { warmUpEngine } from './snapshot-warm-up.js';
import { validateCommand } from './validate-command.js';
import { hookRenderCommand, promptRenderCommand } from './workflow-commands.js';

/**
 * The entry of the V8 startup snapshot (`npm run build`: dist/lorenz.snapshot.blob, see
 * hack/snapshot.mjs). Run once at build time, it loads the engine's commands (the lifecycle,
 * liquidjs, zod, yaml) and warms them; the heap is then saved, and `node --snapshot-blob`
 * starts from it with all of that done, and runs `main` below. The launcher (bin/lorenz)
 * sends only these commands here; the operator's (`poll`, `controller`) start from the plain
 * bundle, so the snapshot never holds the Kubernetes client.
 */
const loaded = (command: Command) => () => Promise.resolve(command);

const notInSnapshot: Command = async (_args, _out, err) => {
  err('lorenz: this command is not in the startup snapshot: run lorenz.js (the plain bundle)\n');
  return 2;
};

const SNAPSHOT_COMMANDS: CommandTable = {
  'workflow validate': loaded(validateCommand),
  'prompt render': loaded(promptRenderCommand),
  'hook render': loaded(hookRenderCommand),
  run: loaded(runCommand),
  runner: loaded((args) => runRunnerCommand(args)),
  poll: loaded(notInSnapshot),
  controller: loaded(notInSnapshot),
  'get runs': loaded(notInSnapshot),
  logs: loaded(notInSnapshot),
  'describe run': loaded(notInSnapshot),
  completion: loaded(completionCommand),
};

warmUpEngine();

startupSnapshot.setDeserializeMainFunction(() => {
  markRestoredFromSnapshot();
  // Restored, argv[1] is the first argument: there is no script path.
  void main(process.argv.slice(1), SNAPSHOT_COMMANDS).then((exitCode) => {
    process.exitCode = exitCode;
  });
});
