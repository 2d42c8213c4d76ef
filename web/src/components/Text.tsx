// Untrusted text on the page: always a text node (Preact escapes it), escapes stripped and
// control characters made visible; long text clipped so that a 1 MB line does not freeze
// the tab, with a button to show more.
import type { ComponentChildren } from 'preact';
import { useMemo, useState } from 'preact/hooks';
import { onLinkClick } from '../router.js';
import { displayText, safeHref } from '../text.js';

const STEP = 20_000;

export function Clipped({ text, block = false }: { text: string; block?: boolean }) {
  const [limit, setLimit] = useState(STEP);
  const shown = useMemo(
    () => displayText(text.length > limit ? text.slice(0, limit) : text),
    [text, limit],
  );
  const rest = text.length - limit;
  const body = block ? <pre class="text">{shown}</pre> : <span class="text">{shown}</span>;
  if (rest <= 0) return body;
  return (
    <>
      {body}
      <button
        type="button"
        class="more"
        aria-label={`Show ${Math.min(rest, STEP * 5)} more of ${text.length} characters`}
        onClick={() => setLimit(limit + STEP * 5)}
      >
        … {rest} more characters: show more
      </button>
    </>
  );
}

/** A link within the app. */
export function Link({
  href,
  children,
  label,
}: {
  href: string;
  children: ComponentChildren;
  label?: string;
}) {
  return (
    <a href={href} onClick={onLinkClick} aria-label={label}>
      {children}
    </a>
  );
}

/** A link out (to the tracker), only when the URL is http(s); otherwise plain text. */
export function ExternalLink({ url, children }: { url?: string; children: ComponentChildren }) {
  const href = safeHref(url);
  if (!href) return <span>{children}</span>;
  return (
    <a href={href} target="_blank" rel="noopener noreferrer">
      {children}
    </a>
  );
}

export function Phase({ phase }: { phase: string }) {
  const known = ['Pending', 'Running', 'Succeeded', 'Failed'].includes(phase);
  return (
    <span class={`phase phase-${known ? phase.toLowerCase() : 'other'}`}>{displayText(phase)}</span>
  );
}
