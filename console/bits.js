// Small pieces every panel uses: times, folded texts, outside links.
import { html } from './vendor/preact-htm.js';
import { absolute, relative } from './format.js';
import { fold } from './figures.js';

export function When({ at, now }) {
  if (!Number.isFinite(at)) return html`<span class="muted">—</span>`;
  return html`<span class="when"><span class="rel">${relative(at, now)}</span> <span class="abs">${absolute(at)}</span></span>`;
}

/** A long text as one line that opens to the whole (a cause of merged causes, detector evidence). */
export function Fold({ text, max, cls }) {
  const f = fold(text, max);
  if (!f.folded) return html`<span class=${cls ?? ''}>${text}</span>`;
  return html`<details class=${`fold ${cls ?? ''}`}><summary>${f.short}</summary><div class="full">${text}</div></details>`;
}

/** A link to a page outside the sidecar (YARN's, Flink's): a new tab, no referrer, no opener. */
export function Ext({ href, children, cls, title }) {
  if (!href) return html`<span class=${cls ?? ''}>${children}</span>`;
  return html`<a class=${`ext ${cls ?? ''}`} href=${href} target="_blank" rel="noopener noreferrer" title=${title ?? ''}>${children}</a>`;
}
