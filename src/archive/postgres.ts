// Placeholder until the PostgreSQL store lands (it replaces this file).
import { ArchiveError, type ArchiveStore } from './types.js';

export function openPostgresArchive(url: string): Promise<ArchiveStore> {
  void url;
  return Promise.reject(new ArchiveError('archive_unavailable', 'PostgreSQL store not built yet'));
}
