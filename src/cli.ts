// The `lorenz` command. Subcommands are wired in as the layers below them land.
const [command] = process.argv.slice(2);
if (command === '--version') {
  process.stdout.write('lorenz 0.1.0\n');
} else {
  process.stderr.write('usage: lorenz <workflow|prompt|hook|run|runner|controller> ...\n');
  process.exitCode = 2;
}
