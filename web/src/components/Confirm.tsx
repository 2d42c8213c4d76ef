// Every action is confirmed in the page (a modal <dialog>), then its result or its error
// (the API's 403 message, say) is shown next to the button that started it.
import { useEffect, useRef, useState } from 'preact/hooks';
import type { ActionResult } from '../../../src/server/view-api.js';
import { errorText, postAction } from '../api.js';

export interface ActionSpec {
  /** The button's text: "Cancel run". */
  label: string;
  /** What the dialog asks. */
  question: string;
  path: string;
  /** What it acts on (namespace/name), for the accessible name where many buttons share a label. */
  target?: string;
  disabled?: boolean;
  onDone?: (result: ActionResult) => void;
}

export function ActionButton({ spec }: { spec: ActionSpec }) {
  const dialog = useRef<HTMLDialogElement>(null);
  const [open, setOpen] = useState(false);
  const [busy, setBusy] = useState(false);
  const [outcome, setOutcome] = useState<{ ok: boolean; text: string }>();

  useEffect(() => {
    const el = dialog.current;
    if (!el) return;
    if (open && !el.open) el.showModal();
    if (!open && el.open) el.close();
  }, [open]);

  const confirm = async (): Promise<void> => {
    setBusy(true);
    try {
      const result = await postAction(spec.path);
      setOutcome({
        ok: true,
        text: `${result.action.replace('_', ' ')}: ${result.namespace}/${result.name}`,
      });
      spec.onDone?.(result);
    } catch (err) {
      setOutcome({ ok: false, text: errorText(err) });
    } finally {
      setBusy(false);
      setOpen(false);
    }
  };

  const name = spec.target ? `${spec.label} ${spec.target}` : spec.label;
  return (
    <span class="action">
      <button
        type="button"
        aria-label={name}
        disabled={spec.disabled}
        onClick={() => setOpen(true)}
      >
        {spec.label}
      </button>
      <dialog ref={dialog} aria-label={name} onClose={() => setOpen(false)}>
        <p>{spec.question}</p>
        <div class="dialog-buttons">
          <button type="button" disabled={busy} onClick={() => void confirm()}>
            Yes, {spec.label.toLowerCase()}
          </button>
          <button type="button" disabled={busy} onClick={() => setOpen(false)}>
            No
          </button>
        </div>
      </dialog>
      {outcome && (
        <span role="status" class={outcome.ok ? 'ok' : 'error'}>
          {outcome.text}
        </span>
      )}
    </span>
  );
}
