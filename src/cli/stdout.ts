/**
 * Standard output whose reader may go away (`lorenz run | head -3`). Node ignores SIGPIPE, so
 * a write to a closed pipe comes back as an EPIPE 'error' event, and with no listener that
 * event crashes the process mid-run: hooks killed with the namespace, the workspace left
 * behind, a stack trace on stderr. Here EPIPE closes the output instead: later writes are
 * dropped and whoever asked (`lorenz run`) is told, so it can cancel the run the way Ctrl-C
 * does, with after_run and the cleanup still running.
 */
type Listener = () => void;

let closed = false;
const listeners = new Set<Listener>();
let installed = false;

function install(): void {
  if (installed) return;
  installed = true;
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') {
      // Not a reader gone away (a full disk behind a redirect, say): say so, once, and stop
      // writing; the command's own exit code still tells how the work went.
      if (!closed) process.stderr.write(`lorenz: cannot write to stdout: ${error.message}\n`);
    }
    if (closed) return;
    closed = true;
    for (const listener of listeners) listener();
  });
}

/** Write to stdout unless its reader has gone. */
export function writeStdout(text: string): void {
  install();
  if (closed || process.stdout.destroyed) return;
  process.stdout.write(text);
}

/** Call `listener` once when stdout's reader goes away; returns the way to stop listening. */
export function onStdoutClosed(listener: Listener): () => void {
  install();
  if (closed) {
    queueMicrotask(listener);
    return () => {};
  }
  listeners.add(listener);
  return () => listeners.delete(listener);
}
