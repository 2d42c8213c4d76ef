import type { Server } from 'node:http';

/**
 * Resolves once `server` listens on host:port; rejects with the bind error (EADDRINUSE,
 * EACCES) instead of leaving it to crash the process as an unhandled 'error' event. Here, the
 * lowest layer with a server (the tool gateway), so the controller's servers and the archive's
 * read API use the same.
 */
export function listening(server: Server, port: number, host: string | undefined): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}
