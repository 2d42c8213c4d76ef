// Finds the control-plane binaries through hack/tools.sh (which builds them on a cold cache),
// so TypeScript callers and the shell share one lookup order and one cache.
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface ToolPaths {
  kubeApiserver: string;
  etcd: string;
  kubectl: string;
  kubeControllerManager: string;
  helm: string;
  /** A directory of symlinks named kubectl, helm, etcd, … to put on PATH. */
  binDir: string;
}

const KEYS: Record<string, keyof ToolPaths> = {
  KUBE_APISERVER: 'kubeApiserver',
  ETCD: 'etcd',
  KUBECTL: 'kubectl',
  KUBE_CONTROLLER_MANAGER: 'kubeControllerManager',
  HELM: 'helm',
  BIN_DIR: 'binDir',
};

/** hack/tools.sh, found relative to this file or (in the esbuild bundle) the working tree. */
export function toolsScriptPath(): string {
  const fromEnv = process.env.LORENZ_TOOLS_SCRIPT;
  if (fromEnv) return fromEnv;
  return join(dirname(fileURLToPath(import.meta.url)), '..', 'tools.sh');
}

/** Parses the NAME=path lines printed by `hack/tools.sh --print-env`. */
export function parseToolsOutput(stdout: string): ToolPaths {
  const found: Partial<ToolPaths> = {};
  for (const line of stdout.split('\n')) {
    const match = /^([A-Z_]+)=(.*)$/.exec(line.trim());
    if (!match) continue;
    const key = KEYS[match[1] ?? ''];
    if (key) found[key] = unquoteShell(match[2] ?? '');
  }
  const missing = Object.values(KEYS).filter((key) => !found[key]);
  if (missing.length > 0) {
    throw new Error(`hack/tools.sh did not report: ${missing.join(', ')}`);
  }
  return found as ToolPaths;
}

// tools.sh prints paths with printf %q: undo the backslash escapes it may add.
function unquoteShell(value: string): string {
  return value.replace(/\\(.)/g, '$1');
}

let pending: Promise<ToolPaths> | undefined;

/**
 * Runs hack/tools.sh once per process. Build progress is forwarded to stderr so that a cold
 * build (minutes) is visibly alive.
 */
export function ensureTools(): Promise<ToolPaths> {
  pending ??= runToolsScript().catch((error: unknown) => {
    pending = undefined;
    throw error;
  });
  return pending;
}

function runToolsScript(): Promise<ToolPaths> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', [toolsScriptPath(), '--print-env'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderrTail = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderrTail = (stderrTail + chunk).slice(-4000);
      // Only our own progress lines: `go: downloading …` would drown everything else.
      for (const line of chunk.split('\n')) {
        if (line.startsWith('[tools]')) process.stderr.write(`${line}\n`);
      }
    });
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) {
        reject(new Error(`hack/tools.sh failed (exit ${code}):\n${stderrTail.trim()}`));
        return;
      }
      try {
        resolve(parseToolsOutput(stdout));
      } catch (error) {
        reject(error instanceof Error ? error : new Error(String(error)));
      }
    });
  });
}
