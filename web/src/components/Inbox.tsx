// What the run's agent waits on (status.inbox.pending), with Approve / Approve always / Deny
// (a reason box) for a permission request and an answer box for a question, and the
// decisions made. Every answer is a POST of .../decide: the server reviews "patch issueruns"
// and writes spec.decisions as the signed-in user, as `lorenz approve` does. All text shown
// is the agent's or a commenter's: text nodes only.
import { useState } from 'preact/hooks';
import type {
  DecideRequest,
  InboxDecisionView,
  InboxRequestView,
  InboxView,
} from '../../../src/server/view-api.js';
import { errorText, postJson } from '../api.js';
import { displayText, formatTime } from '../text.js';
import { Clipped } from './Text.js';

const VERDICT_TEXT: Record<InboxDecisionView['verdict'], string> = {
  approve: 'approved',
  approve_always: 'approved always',
  deny: 'denied',
  answer: 'answered',
  timeout: 'timed out',
};

function RequestCard({
  request,
  decidePath,
  live,
  onDone,
}: {
  request: InboxRequestView;
  decidePath: string;
  live: boolean;
  onDone: () => void;
}) {
  const [reason, setReason] = useState('');
  const [answer, setAnswer] = useState('');
  const [busy, setBusy] = useState(false);
  const [outcome, setOutcome] = useState<{ ok: boolean; text: string }>();
  const question = request.kind === 'question';
  const send = async (body: DecideRequest): Promise<void> => {
    setBusy(true);
    try {
      const result = await postJson(decidePath, { ...body, requestId: request.id });
      setOutcome({
        ok: true,
        text: `${VERDICT_TEXT[result.verdict ?? body.verdict]}: ${result.requestId ?? request.id}`,
      });
      onDone();
    } catch (err) {
      setOutcome({ ok: false, text: errorText(err) });
    } finally {
      setBusy(false);
    }
  };
  const disabled = busy || !live || request.answered === true || outcome?.ok === true;
  const reasonId = `reason-${request.id}`;
  const answerId = `answer-${request.id}`;
  return (
    <section class="inbox-request" aria-label={`Request ${request.id}`}>
      <h3>
        {question ? 'Question' : 'Permission request'} {displayText(request.id)}
        {request.toolKind && <span class="muted"> ({displayText(request.toolKind)})</span>}
      </h3>
      <dl class="header">
        <dt>{question ? 'Asks' : 'Title'}</dt>
        <dd>
          <Clipped text={question && request.message ? request.message : request.title} />
        </dd>
        {request.command && (
          <>
            <dt>Command</dt>
            <dd>
              <code>
                <Clipped text={request.command} />
              </code>
            </dd>
          </>
        )}
        {request.paths && (
          <>
            <dt>Paths</dt>
            <dd>{request.paths.map(displayText).join(', ')}</dd>
          </>
        )}
        {request.options.length > 0 && (
          <>
            <dt>Options</dt>
            <dd>
              {request.options
                .map((o) => `${displayText(o.name)} (${displayText(o.kind)})`)
                .join(', ')}
              {request.optionsOmitted ? ` and ${request.optionsOmitted} more` : ''}
            </dd>
          </>
        )}
        {request.ruleReason && (
          <>
            <dt>Rule</dt>
            <dd>
              <Clipped text={request.ruleReason} />
            </dd>
          </>
        )}
        <dt>Slot / attempt / turn</dt>
        <dd>
          {request.slot} / {request.attempt} / {request.turn}
        </dd>
        <dt>Asked / deadline</dt>
        <dd>
          {formatTime(request.askedAt)} / {formatTime(request.deadline)}
        </dd>
      </dl>
      {request.answered && (
        <p class="muted">Answered in spec.decisions; waiting for the controller to take it.</p>
      )}
      <div class="inbox-buttons">
        {question ? (
          <>
            <label for={answerId}>Answer</label>
            <textarea
              id={answerId}
              rows={2}
              value={answer}
              disabled={disabled}
              onInput={(e) => setAnswer(e.currentTarget.value)}
            />
            <button
              type="button"
              disabled={disabled || answer.trim() === ''}
              onClick={() => void send({ verdict: 'answer', answer })}
            >
              Send answer
            </button>
          </>
        ) : (
          <>
            <button
              type="button"
              disabled={disabled}
              onClick={() => void send({ verdict: 'approve' })}
            >
              Approve
            </button>
            <button
              type="button"
              disabled={disabled}
              onClick={() => void send({ verdict: 'approve_always' })}
            >
              Approve always
            </button>
          </>
        )}
        <label for={reasonId}>Deny reason</label>
        <input
          id={reasonId}
          type="text"
          value={reason}
          disabled={disabled}
          onInput={(e) => setReason(e.currentTarget.value)}
        />
        <button
          type="button"
          disabled={disabled}
          onClick={() => void send({ verdict: 'deny', ...(reason ? { reason } : {}) })}
        >
          Deny
        </button>
      </div>
      {outcome && (
        <p role="status" class={outcome.ok ? 'ok' : 'error'}>
          {displayText(outcome.text)}
        </p>
      )}
    </section>
  );
}

export function Inbox({
  inbox,
  decidePath,
  live,
  onDone,
}: {
  inbox: InboxView;
  decidePath: string;
  live: boolean;
  onDone: () => void;
}) {
  return (
    <section aria-label="Waiting requests">
      {inbox.pending.length === 0 ? (
        <p class="muted">Nothing waits for an answer.</p>
      ) : (
        <>
          <p class="muted">Who may answer: {displayText(inbox.answeredBy)}.</p>
          {inbox.pending.map((request) => (
            <RequestCard
              key={request.id}
              request={request}
              decidePath={decidePath}
              live={live}
              onDone={onDone}
            />
          ))}
        </>
      )}
      {inbox.decided.length > 0 && (
        <div class="scroll">
          <table class="events" aria-label="Decisions">
            <thead>
              <tr>
                <th scope="col">Request</th>
                <th scope="col">Verdict</th>
                <th scope="col">By</th>
                <th scope="col">Via</th>
                <th scope="col">Reason / answer</th>
                <th scope="col">At</th>
              </tr>
            </thead>
            <tbody>
              {inbox.decided.map((d, i) => (
                <tr key={`${d.requestId}-${i}`}>
                  <td>{displayText(d.requestId)}</td>
                  <td>{VERDICT_TEXT[d.verdict]}</td>
                  <td>{displayText(d.by ?? '–')}</td>
                  <td>{displayText(d.via)}</td>
                  <td class="clip">
                    <Clipped text={d.reason ?? d.answer ?? ''} />
                  </td>
                  <td>{formatTime(d.at)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
