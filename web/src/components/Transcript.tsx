// The run's transcript: messages, thoughts, tool calls with their results (collapsible),
// plans, turns, hooks (each hook's whole output fetched from the archive when opened) and
// git steps. Every string in it is untrusted and shown through <Clipped>.
import { useState } from 'preact/hooks';
import type { TranscriptEntry } from '../../../src/server/view-api.js';
import { errorText, getText } from '../api.js';
import { displayText } from '../text.js';
import { Clipped } from './Text.js';

type Entry<K extends TranscriptEntry['kind']> = Extract<TranscriptEntry, { kind: K }>;

export function HookOutput({
  path,
  hookName,
  preview,
}: {
  path: string;
  hookName: string;
  preview?: string;
}) {
  const [state, setState] = useState<{ text?: string; error?: string; loading?: boolean }>({});
  return (
    <details
      class="hook-output"
      onToggle={(event) => {
        if (!event.currentTarget.open || state.text !== undefined) return;
        setState({ loading: true });
        getText(path).then(
          (text) => setState({ text }),
          (err: unknown) => setState({ error: errorText(err) }),
        );
      }}
    >
      <summary>Output of hook {displayText(hookName)}</summary>
      {state.loading && <p class="muted">Loading the whole output…</p>}
      {state.error && (
        <p role="alert" class="error">
          {state.error}
          {preview !== undefined && ' — the first part, from status:'}
        </p>
      )}
      {state.error && preview !== undefined && <Clipped text={preview} block />}
      {state.text !== undefined && <Clipped text={state.text} block />}
    </details>
  );
}

export function Transcript({
  entries,
  hookPath,
}: {
  entries: TranscriptEntry[];
  hookPath: (seq: number, slot: number, attempt: number) => string;
}) {
  const results = new Map<string, Entry<'tool_result'>>();
  for (const entry of entries)
    if (entry.kind === 'tool_result') results.set(entry.toolCallId, entry);
  const calls = new Set(entries.flatMap((e) => (e.kind === 'tool_call' ? [e.toolCallId] : [])));
  return (
    <ol class="transcript" aria-label="Transcript">
      {entries.map((entry) => {
        if (entry.kind === 'tool_result' && calls.has(entry.toolCallId)) return null;
        return (
          <li key={entry.seq} class={`entry entry-${entry.kind}`}>
            <EntryView
              entry={entry}
              result={entry.kind === 'tool_call' ? results.get(entry.toolCallId) : undefined}
              hookPath={hookPath}
            />
          </li>
        );
      })}
    </ol>
  );
}

function EntryView({
  entry,
  result,
  hookPath,
}: {
  entry: TranscriptEntry;
  result: Entry<'tool_result'> | undefined;
  hookPath: (seq: number, slot: number, attempt: number) => string;
}) {
  switch (entry.kind) {
    case 'message':
      return <Clipped text={entry.text} block />;
    case 'thought':
      return (
        <details>
          <summary>Thought</summary>
          <Clipped text={entry.text} block />
        </details>
      );
    case 'tool_call':
      return (
        <details>
          <summary>
            Tool call <Clipped text={entry.title} />{' '}
            <span class="muted">{displayText(result?.status ?? entry.status ?? '')}</span>
          </summary>
          {entry.input !== undefined && (
            <>
              <h4>Input</h4>
              <Clipped text={entry.input} block />
            </>
          )}
          {result && (
            <>
              <h4>Result ({displayText(result.status)})</h4>
              <Clipped text={result.text} block />
            </>
          )}
        </details>
      );
    case 'tool_result':
      return (
        <details>
          <summary>Tool result {displayText(entry.status)}</summary>
          <Clipped text={entry.text} block />
        </details>
      );
    case 'plan':
      return (
        <div>
          <strong>Plan</strong>
          <ul class="plan">
            {entry.entries.map((item, i) => (
              <li key={i} class={`plan-${item.status === 'completed' ? 'done' : 'open'}`}>
                [{displayText(item.status)}] <Clipped text={item.content} />
              </li>
            ))}
          </ul>
        </div>
      );
    case 'turn':
      return (
        <div class="turn">
          Turn {entry.turn} {entry.status}
          {entry.detail && (
            <>
              : <Clipped text={entry.detail} />
            </>
          )}
        </div>
      );
    case 'hook':
      return (
        <div>
          Hook <strong>{displayText(entry.hookName)}</strong> {displayText(entry.status)}
          {entry.exitCode !== undefined && ` (exit ${entry.exitCode})`}
          {entry.hookSeq !== undefined && (
            <HookOutput
              path={hookPath(entry.hookSeq, entry.slot, entry.attempt)}
              hookName={entry.hookName}
            />
          )}
        </div>
      );
    case 'hook_output':
      return (
        <details>
          <summary>Output of hook {displayText(entry.hookName)}</summary>
          <Clipped text={entry.text} block />
        </details>
      );
    case 'git':
      return (
        <div>
          git {displayText(entry.step)} {displayText(entry.status)}
          {entry.detail && (
            <>
              : <Clipped text={entry.detail} />
            </>
          )}
        </div>
      );
    case 'stderr':
      return (
        <details>
          <summary>stderr</summary>
          <Clipped text={entry.text} block />
        </details>
      );
    case 'elided':
      return (
        <div class="muted">… {entry.bytes} bytes of the log were dropped by the archive's cap</div>
      );
  }
}
