// A real temporary directory that a test file (or a describe block) owns: made in a before
// hook, removed in the matching after hook, so no test sees another's files and none is left
// behind in the system tmp dir.
import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest';
import { makeTempDir, removeTempDir } from './workspace.js';

/** The directory's path; read it inside a test or a hook, once the before hook has run. */
export type TempDir = () => string;

function ownedTempDir(prefix: string, perTest: boolean): TempDir {
  let path: string | undefined;
  (perTest ? beforeEach : beforeAll)(async () => {
    path = await makeTempDir(prefix);
  });
  (perTest ? afterEach : afterAll)(async () => {
    if (path) await removeTempDir(path);
    path = undefined;
  });
  return () => {
    if (path === undefined) throw new Error(`the ${prefix}* temp dir is read outside a test`);
    return path;
  };
}

/** A fresh directory for each test of the file or describe block that calls it. */
export const tempDirPerTest = (prefix: string): TempDir => ownedTempDir(prefix, true);

/** One directory shared by the tests of the file or describe block that calls it. */
export const tempDirPerSuite = (prefix: string): TempDir => ownedTempDir(prefix, false);
