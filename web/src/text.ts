// Text from agents, hooks and trackers is hostile until shown otherwise: it is rendered as
// text nodes only (never as markup), and these functions make what it hides visible. Pure
// functions, so the unit tests run them without a browser.

// CSI (ESC [ … final), OSC (ESC ] … BEL or ESC \), and the two-byte escapes (ESC + one of
// @–_). The 8-bit CSI (U+009B) too: terminals honour it.
const ANSI =
  // eslint-disable-next-line no-control-regex
  /\u001b\[[0-?]*[ -/]*[@-~]|\u009b[0-?]*[ -/]*[@-~]|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)?|\u001b[@-Z\\-_]/g;

/** The text without terminal escape sequences (colours, cursor moves, titles). */
function stripAnsi(text: string): string {
  return text.replace(ANSI, '');
}

// C0 controls but tab and newline, DEL, C1 controls, and the bidirectional overrides and
// isolates that can make text read differently from what it is (CVE-2021-42574).
// eslint-disable-next-line no-control-regex
const HIDDEN = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

function visible(ch: string): string {
  const code = ch.charCodeAt(0);
  if (code < 0x20) return String.fromCharCode(0x2400 + code); // ␀ … ␟
  if (code === 0x7f) return '\u2421'; // ␡
  return `<U+${code.toString(16).toUpperCase().padStart(4, '0')}>`;
}

/** Control characters shown as visible symbols instead of acting on the page. */
function showControls(text: string): string {
  return text.replace(HIDDEN, visible);
}

/** What the page shows for a piece of untrusted text. */
export function displayText(text: string): string {
  return showControls(stripAnsi(text));
}

/** The URL if it is an absolute http(s) URL, else undefined: no javascript:, data:, ... */
export function safeHref(url: string | undefined): string | undefined {
  if (!url) return undefined;
  try {
    const parsed = new URL(url);
    return parsed.protocol === 'http:' || parsed.protocol === 'https:' ? parsed.href : undefined;
  } catch {
    return undefined;
  }
}

/** A duration in milliseconds, short: 850 ms, 4.2 s, 3 m 05 s, 2 h 10 m. */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return '–';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = ms / 1000;
  if (s < 60) return `${s.toFixed(1)} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} m ${String(Math.floor(s % 60)).padStart(2, '0')} s`;
  return `${Math.floor(m / 60)} h ${String(m % 60).padStart(2, '0')} m`;
}

/** A time as the page shows it: UTC, to the second. */
export function formatTime(iso: string | undefined): string {
  if (!iso) return '–';
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return displayText(iso);
  return new Date(t)
    .toISOString()
    .replace('T', ' ')
    .replace(/\.\d+Z$/, 'Z');
}

export function formatCount(n: number): string {
  if (n >= 1e9) return `${(n / 1e9).toFixed(1)} G`;
  if (n >= 1e6) return `${(n / 1e6).toFixed(1)} M`;
  if (n >= 1e4) return `${(n / 1e3).toFixed(1)} k`;
  return String(n);
}
