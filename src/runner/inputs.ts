import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { INPUT_FILES, INPUT_MANIFEST_VERSION, inputDigest } from '../api/run-pod.js';
import { LorenzError, errorMessage } from '../workflow/errors.js';

/**
 * The inputs volume: files the controller rendered (prompt per slot, hooks, issue, the
 * WORKFLOW.md text) plus manifest.json with the sha256 of each. Everything is verified
 * before the first hook runs, so a Pod never acts on inputs other than the ones the
 * controller rendered and recorded.
 */
const MANIFEST_FILE = INPUT_FILES.manifest;

export interface VerifiedInputs {
  files: Record<string, string>;
}

const mismatch = (message: string, file?: string): LorenzError =>
  new LorenzError(
    'input_digest_mismatch',
    `input_digest_mismatch: ${message}`,
    file ? { file } : undefined,
  );

/**
 * Reads and checks the inputs. With `expectedDigestFile` (the digest recorded on the Pod,
 * through the downward API) the manifest must also be the one recorded: inputs under the
 * same name that are not this Pod's (another IssueRun's of the same name, not yet taken by
 * the garbage collector) are consistent in themselves, and would otherwise pass.
 */
export async function readVerifiedInputs(
  dir: string,
  expectedDigestFile?: string,
): Promise<VerifiedInputs> {
  let manifestText: string;
  try {
    manifestText = await readFile(join(dir, MANIFEST_FILE), 'utf8');
  } catch (error) {
    throw mismatch(`cannot read ${MANIFEST_FILE}: ${errorMessage(error)}`, MANIFEST_FILE);
  }
  if (expectedDigestFile !== undefined) {
    const expected = await readExpectedDigest(expectedDigestFile);
    const actual = inputDigest(manifestText);
    if (expected !== actual) {
      throw mismatch(
        `the inputs mounted (${MANIFEST_FILE} ${actual}) are not the ones recorded for this Pod (${expected})`,
        MANIFEST_FILE,
      );
    }
  }
  let listed: Record<string, unknown>;
  try {
    const manifest = JSON.parse(manifestText) as { version?: unknown; files?: unknown };
    if (
      manifest.version !== INPUT_MANIFEST_VERSION ||
      typeof manifest.files !== 'object' ||
      manifest.files === null
    ) {
      throw new Error('unsupported manifest');
    }
    listed = manifest.files as Record<string, unknown>;
  } catch (error) {
    throw mismatch(
      `${MANIFEST_FILE} is not a valid manifest: ${errorMessage(error)}`,
      MANIFEST_FILE,
    );
  }
  const files: Record<string, string> = {};
  for (const [name, digest] of Object.entries(listed)) {
    if (name.includes('/') || name.startsWith('.'))
      throw mismatch(`unsafe file name ${name}`, name);
    let text: string;
    try {
      text = await readFile(join(dir, name), 'utf8');
    } catch (error) {
      throw mismatch(`${name} is missing: ${errorMessage(error)}`, name);
    }
    const actual = inputDigest(text);
    if (actual !== digest) {
      throw mismatch(`${name} has digest ${actual}, the manifest says ${String(digest)}`, name);
    }
    files[name] = text;
  }
  return { files };
}

async function readExpectedDigest(file: string): Promise<string> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw mismatch(`cannot read the recorded inputs digest: ${errorMessage(error)}`);
  }
  const digest = text.trim();
  if (!digest) throw mismatch(`the recorded inputs digest in ${file} is empty`);
  return digest;
}

export function requireInput(inputs: VerifiedInputs, name: string): string {
  const text = inputs.files[name];
  if (text === undefined) throw mismatch(`${name} is not in the manifest`, name);
  return text;
}
