import type { Executor } from '../executor/types.js';
import { continuationPrompt, steeringBlock } from '../template/prompt.js';
import type { WorkflowConfig } from '../workflow/config.js';
import { isLorenzError } from '../workflow/errors.js';
import type { TokenUsage } from '../workflow/events.js';
import type { AgentStep, AgentStepContext, AgentStepResult } from '../workspace/agent-step.js';
import { bridgeEnvironment } from './environment.js';
import { AgentFailure, cancelledByCaller, type AgentFailureCode } from './failures.js';
import { startSession, type AgentEmit, type Session } from './session.js';
import type { acp } from './client.js';
import type { AgentInbox } from './inbox.js';

export type McpServer = acp.McpServer;
import { runTurn, type TurnLimits } from './turn.js';
import { addTurnUsage } from './usage.js';
import type { ActiveTurn } from './session.js';
import type { RunBudget } from '../workflow/budget.js';
import { createBudgetGuard, type BudgetGuard } from './budget-guard.js';
import type { BudgetCrossing } from './budget-meter.js';

/** The parts of WORKFLOW.md the agent runtime reads. */
export type AgentRuntimeConfig = {
  agent: Pick<WorkflowConfig['agent'], 'kind' | 'maxTurns'>;
  agents: WorkflowConfig['agents'];
  tracker: Pick<WorkflowConfig['tracker'], 'apiKey'>;
};

export interface AcpAgentStepOptions {
  config: AgentRuntimeConfig;
  /** The rendered first-turn prompt for this slot. */
  renderPrompt: (context: AgentStepContext) => string;
  /** Whether the issue is still in an active state (asked before each continuation turn). */
  isIssueActive: () => Promise<boolean>;
  /** The environment the bridge's is derived from; process.env by default. */
  env?: NodeJS.ProcessEnv;
  executor: Executor;
  /** Variable names the Workflow keeps for the controller: never given to the agent. */
  controllerOnlyEnv?: readonly string[];
  /** How long a cancelled turn may take to answer before the bridge is killed (3000). */
  cancelGraceMs?: number;
  /** SIGTERM → SIGKILL grace when the bridge's process group is ended (3000). */
  killGraceMs?: number;
  /** MCP servers for session/new (the tools gateway, with its Authorization header). */
  mcpServers?: readonly McpServer[];
  /**
   * agent.approvals: decides permission requests, asks people, and hands over `/steer`
   * comments before each continuation turn. Absent: approve what can be, fail on questions.
   */
  inbox?: AgentInbox | undefined;
  /** The attempt's limits and prices (docs/budgets.md); absent: usage is counted, never stopped. */
  budget?: RunBudget | undefined;
}

const DEFAULT_CANCEL_GRACE_MS = 3000;
const DEFAULT_KILL_GRACE_MS = 3000;

/**
 * The agent step: one ACP session per slot run. Turn 1 gets the rendered prompt; while the
 * issue stays active and turns < agent.max_turns, the next turn gets the fixed continuation
 * prompt on the same session. The bridge's whole process group is ended on every path.
 */
export function createAcpAgentStep(options: AcpAgentStepOptions): AgentStep {
  return async (context) => {
    const emit: AgentEmit = (type, message) => context.emit({ type, message, slot: context.slot });
    const { config } = options;
    const bridgeConfig = config.agents.bridges[config.agent.kind];
    if (!bridgeConfig) {
      return failed(
        new AgentFailure(
          'agent_bridge_missing',
          `no bridge command for agent kind ${JSON.stringify(config.agent.kind)}`,
        ),
        0,
      );
    }
    let prompt: string;
    try {
      prompt = options.renderPrompt(context);
    } catch (error) {
      if (!isLorenzError(error)) throw error;
      return { ok: false, code: error.code, message: error.message, turns: 0 };
    }
    if (context.signal.aborted) return failed(cancelledByCaller(), 0);
    const budget: BudgetState = {
      guard: options.budget ? createBudgetGuard(options.budget, emit) : undefined,
      crossed: undefined,
      turn: undefined,
    };
    // Spent by earlier attempts or runs: no bridge is started to spend more.
    budget.crossed = budget.guard?.atStart();
    if (budget.crossed) return failed(budgetFailure(budget.crossed), 0);
    prompt += budget.guard?.takeNotice() ?? '';

    const session = startSession({
      executor: options.executor,
      command: bridgeConfig.bridgeCommand,
      cwd: context.workspace,
      ...(context.pathFirst ? { pathFirst: context.pathFirst } : {}),
      env: bridgeEnvironment({
        base: options.env ?? process.env,
        trackerApiKey: config.tracker.apiKey,
        controllerOnly: options.controllerOnlyEnv ?? [],
        bridgeEnv: bridgeConfig.env,
      }),
      responseTimeoutMs: config.agents.responseTimeoutMs,
      signal: context.signal,
      emit,
      mcpServers: options.mcpServers,
      inbox: options.inbox,
      onUsageUpdate: (update) => {
        if (!update.cost || !budget.guard) return;
        const crossed = budget.guard.costReported(update.cost);
        if (!crossed || budget.crossed) return;
        // Live: the turn in progress is cancelled now, not at its end.
        budget.crossed = crossed;
        budget.turn?.interrupt(budgetFailure(crossed));
      },
    });
    try {
      return await runTurns(session, prompt, options, context, emit, budget);
    } finally {
      await session.close(options.killGraceMs ?? DEFAULT_KILL_GRACE_MS);
    }
  };
}

async function runTurns(
  session: Session,
  firstPrompt: string,
  options: AcpAgentStepOptions,
  context: AgentStepContext,
  emit: AgentEmit,
  budget: BudgetState,
): Promise<AgentStepResult> {
  const { maxTurns } = options.config.agent;
  const limits: TurnLimits = {
    turnTimeoutMs: options.config.agents.turnTimeoutMs,
    stallTimeoutMs: options.config.agents.stallTimeoutMs,
    cancelGraceMs: options.cancelGraceMs ?? DEFAULT_CANCEL_GRACE_MS,
  };
  let usage: TokenUsage | undefined;
  let turns = 0;
  let sessionId: string;
  try {
    sessionId = await session.open();
  } catch (error) {
    if (error instanceof AgentFailure) return failed(error, 0);
    throw error;
  }

  let text = firstPrompt;
  for (;;) {
    const number = turns + 1;
    // A cost reported between turns crossed a limit: no new turn.
    if (budget.crossed) return failed(budgetFailure(budget.crossed), turns, usage);
    emit('turn_started', { turn: number, sessionId });
    const result = await runTurn({
      connection: session.connection,
      bridge: session.bridge,
      sessionId,
      number,
      text,
      limits,
      signal: context.signal,
      onStart: (turn) => session.setTurn((budget.turn = turn)),
    });
    session.setTurn((budget.turn = undefined));
    session.flushUpdates();
    turns = number;
    usage = meterTurn(budget, session.model(), usage, result.usage);
    if (!result.ok) {
      const { code, message } = result.failure;
      emit(failureEventType(code), {
        turn: number,
        code,
        message,
        ...(usage ? { usage } : {}),
      });
      return failed(result.failure, turns, usage);
    }
    emit('turn_completed', {
      turn: number,
      stopReason: result.stopReason,
      ...(usage ? { usage } : {}),
    });
    // The turn's own tokens crossed a limit: it ended, but no next turn starts.
    if (budget.crossed) return failed(budgetFailure(budget.crossed), turns, usage);
    if (turns >= maxTurns) break;
    if (context.signal.aborted) return failed(cancelledByCaller(), turns, usage);
    let active: boolean;
    try {
      active = await options.isIssueActive();
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      return failed(
        new AgentFailure(
          'issue_state_unavailable',
          `could not read the issue state before turn ${number + 1}: ${reason}`,
        ),
        turns,
        usage,
      );
    }
    if (!active) break;
    text = await nextPrompt(session, options, number + 1, emit, budget);
  }
  return { ok: true, turns, ...(usage ? { usage } : {}) };
}

/**
 * A continuation turn's prompt: the fixed continuation text, then what people said since
 * (steers taken from the inbox, the reasons of denied requests, a budget's warning). A steer rides on a turn the
 * loop would take anyway: it adds none beyond max_turns, nor to an issue no longer active.
 */
async function nextPrompt(
  session: Session,
  options: AcpAgentStepOptions,
  number: number,
  emit: AgentEmit,
  budget: BudgetState,
): Promise<string> {
  // takeSteers never throws by contract; a steer lost is still better than a failed run.
  const steers = options.inbox ? await options.inbox.takeSteers().catch(() => []) : [];
  const denials = session.takeDenials();
  if (steers.length > 0) {
    const by = [...new Set(steers.flatMap((steer) => (steer.by ? [steer.by] : [])))];
    emit('steer_delivered', { turn: number, count: steers.length, by });
  }
  return (
    continuationPrompt(number, options.config.agent.maxTurns) +
    steeringBlock(steers, denials) +
    (budget.guard?.takeNotice() ?? '')
  );
}

/** The event a failed turn is reported as. No default: a new agent code must be placed here. */
function failureEventType(code: AgentFailureCode): 'turn_cancelled' | 'turn_failed' {
  switch (code) {
    case 'turn_cancelled':
      return 'turn_cancelled';
    case 'budget_exceeded':
    case 'agent_bridge_missing':
    case 'agent_bridge_exited':
    case 'agent_protocol_error':
    case 'agent_response_timeout':
    case 'acp_turn_failed':
    case 'turn_timeout':
    case 'turn_stalled':
    case 'turn_input_required':
    case 'approval_required':
    case 'issue_state_unavailable':
      return 'turn_failed';
  }
}

/** The budget side of one attempt's session: the guard, the limit crossed, the live turn. */
interface BudgetState {
  guard: BudgetGuard | undefined;
  crossed: BudgetCrossing | undefined;
  turn: ActiveTurn | undefined;
}

function budgetFailure(crossed: BudgetCrossing): AgentFailure {
  return new AgentFailure(
    'budget_exceeded',
    `budget_exceeded: ${crossed.message}; the agent was stopped`,
  );
}

/**
 * A turn's usage added to the attempt's and metered (a limit its tokens crossed is kept in
 * `budget.crossed`); the sum comes back as records carry it: with its cost and the model.
 */
function meterTurn(
  budget: BudgetState,
  model: string | undefined,
  total: TokenUsage | undefined,
  turn: acp.Usage | null | undefined,
): TokenUsage | undefined {
  const usage = addTurnUsage(total, turn);
  const crossed = budget.guard?.turnEnded(turn, model);
  budget.crossed ??= crossed;
  if (budget.guard) return budget.guard.withCost(usage, model);
  return usage && model ? { ...usage, model } : usage;
}

function failed(failure: AgentFailure, turns: number, usage?: TokenUsage): AgentStepResult {
  return {
    ok: false,
    code: failure.code,
    message: failure.message,
    turns,
    ...(usage ? { usage } : {}),
  };
}
