import type { Executor } from '../executor/types.js';
import type { AgentEventType } from '../workflow/events.js';
import { startBridge, type Bridge, type BridgeExit } from './bridge.js';
import { CLIENT_CAPABILITIES, PROTOCOL_VERSION, connectClient, type acp } from './client.js';
import {
  type AgentFailure,
  bridgeEnded,
  bridgeRefused,
  bridgeSilent,
  cancelledByCaller,
} from './failures.js';
import { startTimer, whenAborted, within } from './timing.js';
import { boundText } from './bounded.js';
import { createUpdateForwarder } from './updates.js';
import type { AgentInbox } from './inbox.js';
import { createInboxHandlers } from './inbox-handlers.js';
import { autoApprove, inputRequired } from './unattended.js';
import { modelOf } from './model.js';

/** After a request fails, how long to wait for the bridge's exit to explain it. */
export const EXIT_SETTLE_MS = 2000;

export type AgentEmit = (type: AgentEventType, message: Record<string, unknown> | string) => void;

/** The turn in progress, as the client handlers see it. */
export interface ActiveTurn {
  readonly number: number;
  /** The turn cannot go on (a permission nobody can grant, a question nobody can answer). */
  interrupt(failure: AgentFailure): void;
  /** The bridge showed a sign of life: restart the stall clock. */
  activity(): void;
  /**
   * Stop the stall and turn clocks while a person is asked; the returned function starts
   * them again. Time stopped does not count toward either timeout.
   */
  pause(): () => void;
}

export interface SessionOptions {
  executor: Executor;
  command: string;
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** Put first on the bridge's PATH after its login profile (the git wrapper). */
  pathFirst?: readonly string[];
  responseTimeoutMs: number;
  signal: AbortSignal;
  emit: AgentEmit;
  /** MCP servers offered in session/new (the Lorenz tools gateway); their headers hold secrets. */
  mcpServers?: readonly acp.McpServer[] | undefined;
  /** agent.approvals: who decides permission requests and answers questions; absent: nobody. */
  inbox?: AgentInbox | undefined;
  /** Each usage_update of the session (context fill and, from some agents, cumulative cost). */
  onUsageUpdate?: ((update: acp.UsageUpdate) => void) | undefined;
}

export interface Session {
  readonly bridge: Bridge;
  readonly connection: acp.ClientConnection;
  /** initialize, then session/new with the workspace as cwd; throws AgentFailure. */
  open(): Promise<string>;
  setTurn(turn: ActiveTurn | undefined): void;
  /** The denials of permission requests since the last call, for the next turn's prompt. */
  takeDenials(): string[];
  /** The model the agent says it uses (its `model` config option); undefined if it does not say. */
  model(): string | undefined;
  /** Flush pending notifications (end of a turn). */
  flushUpdates(): void;
  /** Close the connection and end the bridge's whole process group. */
  close(killGraceMs: number): Promise<BridgeExit | undefined>;
}

/**
 * The servers the agent can take: ACP lets a client offer http and sse servers only to an
 * agent that says it speaks them (stdio ones always). The rest are dropped with a word why,
 * so a run without tools says so instead of failing at session/new.
 */
function offeredServers(
  servers: readonly acp.McpServer[],
  initialized: acp.InitializeResponse,
  emit: AgentEmit,
): acp.McpServer[] {
  const speaks = initialized.agentCapabilities?.mcpCapabilities ?? {};
  const kept = servers.filter((server) => {
    if (!('type' in server)) return true;
    if (server.type === 'http') return speaks.http === true;
    if (server.type === 'sse') return speaks.sse === true;
    return false;
  });
  for (const server of servers.filter((each) => !kept.includes(each))) {
    const type = 'type' in server ? server.type : 'stdio';
    emit(
      'stderr',
      `lorenz: the agent does not take ${type} MCP servers; ${server.name} not offered`,
    );
  }
  return kept;
}

/** Start the bridge and connect to it; `open()` does the handshake. */
// eslint-disable-next-line max-lines-per-function -- one ACP session: spawn, initialize, new session; the handlers share its state
export function startSession(options: SessionOptions): Session {
  const { emit, command } = options;
  let turn: ActiveTurn | undefined;
  let model: string | undefined;
  const forwarder = createUpdateForwarder((message) => emit('session_notification', message));
  // A wait for a person ends when the run is cancelled or the session closes (a bridge that
  // died mid-ask must not leave a long poll keeping the runner alive).
  const waits = new AbortController();
  const endWaits = (): void => waits.abort();
  options.signal.addEventListener('abort', endWaits, { once: true });
  if (options.signal.aborted) endWaits();
  const handlers = options.inbox
    ? createInboxHandlers({
        inbox: options.inbox,
        emit,
        turn: () => turn,
        signal: waits.signal,
      })
    : undefined;

  const bridge = startBridge(
    options.executor,
    command,
    {
      cwd: options.cwd,
      env: options.env,
      ...(options.pathFirst ? { pathFirst: options.pathFirst } : {}),
    },
    {
      onStderrLine(line) {
        turn?.activity();
        emit('stderr', boundText(line));
      },
      onMalformedLine(line) {
        turn?.activity();
        emit('malformed', { line: line.slice(0, 2000) });
      },
    },
  );

  const connection = connectClient(bridge, {
    sessionUpdate(notification) {
      turn?.activity();
      const { update } = notification;
      // Recorded first: a limit crossed by this update stops the turn after it is in the log.
      forwarder.push(turn?.number ?? 0, update);
      if (update.sessionUpdate === 'config_option_update') {
        model = modelOf(update.configOptions) ?? model;
      } else if (update.sessionUpdate === 'usage_update') {
        options.onUsageUpdate?.(update);
      }
    },
    requestPermission: (request) =>
      handlers ? handlers.requestPermission(request) : autoApprove(emit, turn, request),
    requestInput: (request) =>
      handlers ? handlers.requestInput(request) : inputRequired(emit, turn, request),
  });

  /** Await a non-prompt request's answer, bounded by the response timeout. */
  async function answer<T>(method: string, request: Promise<T>): Promise<T> {
    const timer = startTimer(options.responseTimeoutMs);
    type Outcome =
      | { kind: 'value'; value: T }
      | { kind: 'error'; error: unknown }
      | { kind: 'exit'; exit: BridgeExit }
      | { kind: 'timeout' }
      | { kind: 'aborted' };
    const outcome = await Promise.race<Outcome>([
      request.then(
        (value) => ({ kind: 'value', value }),
        (error: unknown) => ({ kind: 'error', error }),
      ),
      bridge.exited.then((exit) => ({ kind: 'exit', exit })),
      timer.elapsed.then(() => ({ kind: 'timeout' })),
      whenAborted(options.signal).then(() => ({ kind: 'aborted' })),
    ]).finally(() => timer.cancel());
    const when = `before answering ${method}`;
    switch (outcome.kind) {
      case 'value':
        return outcome.value;
      case 'exit':
        throw bridgeEnded(command, outcome.exit, bridge.stderrTail(), when);
      case 'timeout':
        throw bridgeSilent(command, method, options.responseTimeoutMs);
      case 'aborted':
        throw cancelledByCaller();
      case 'error': {
        // A closed connection means the bridge is dying: let its exit explain.
        if (connection.signal.aborted) {
          const exit = await within(bridge.exited, EXIT_SETTLE_MS);
          if (exit) throw bridgeEnded(command, exit, bridge.stderrTail(), when);
        }
        throw bridgeRefused(command, method, outcome.error);
      }
    }
  }

  return {
    bridge,
    connection,
    async open() {
      const initialized = await answer(
        'initialize',
        connection.agent.request('initialize', {
          protocolVersion: PROTOCOL_VERSION,
          clientCapabilities: CLIENT_CAPABILITIES,
          clientInfo: { name: 'lorenz', version: '0.1.0' },
        }),
      );
      const mcpServers = offeredServers(options.mcpServers ?? [], initialized, emit);
      const created = await answer(
        'session/new',
        connection.agent.request('session/new', { cwd: options.cwd, mcpServers }),
      );
      model = modelOf(created.configOptions);
      emit('session_started', {
        sessionId: created.sessionId,
        command,
        pid: bridge.pid ?? null,
        agent: initialized.agentInfo ?? null,
        protocolVersion: initialized.protocolVersion,
        // Names only: a server's headers carry its bearer token.
        mcpServers: mcpServers.map((server) => server.name),
        ...(model ? { model } : {}),
      });
      return created.sessionId;
    },
    setTurn(next) {
      turn = next;
    },
    takeDenials: () => handlers?.takeDenials() ?? [],
    model: () => model,
    flushUpdates: () => forwarder.flush(),
    async close(killGraceMs) {
      forwarder.flush();
      endWaits();
      options.signal.removeEventListener('abort', endWaits);
      connection.close();
      await bridge.stop(killGraceMs);
      const exit = bridge.exit();
      emit('process_exit', {
        pid: bridge.pid ?? null,
        exitCode: exit?.exitCode ?? null,
        signal: exit?.signal ?? null,
      });
      return exit;
    },
  };
}
