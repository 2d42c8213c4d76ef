import { COMMANDS } from './cli/commands.js';
import { main } from './cli/main.js';

// The plain entry (dist/lorenz.js, dist/cli/lorenz.js). src/startup/snapshot-entry.ts is the
// same CLI restored from a V8 startup snapshot.
const exitCode = await main(process.argv.slice(2), COMMANDS);
// Let stdout drain before exiting; the run command has already waited for every child.
process.exitCode = exitCode;
