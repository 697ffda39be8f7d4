// The operation's timeline: each request and each wait as a bar on one time
// axis (waits: planned outline, actual fill), the server's own arrivals as
// ticks, and the visitor's actions as markers. Times are ms since the start.

const STEPS = [100, 200, 500, 1000, 2000, 5000, 10_000, 20_000, 30_000, 60_000];
const WHY = {
  backoff: 'backoff', throttle: 'throttling backoff', 'retry-after': 'Retry-After',
  'rate-limit': 'rate limit', queue: 'queued', offline: 'offline', poll: 'poll interval',
};

/** A status for people: browsers report a redirect not followed as an opaque status 0. */
export const formatStatus = (status) => (status === 0 ? 'redirect, not followed' : `HTTP ${status}`);

export const formatMs = (ms) => (ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)} s`);

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text != null) node.textContent = text;
  return node;
}

export class Timeline {
  #rows = []; // { kind: 'request'|'wait'|'mark', start, end, ... }
  #server = [];
  #t0 = 0;
  #root;

  constructor(root) {
    this.#root = root;
  }

  reset(t0) {
    this.#t0 = t0;
    this.#rows = [];
    this.#server = [];
  }

  #now = () => Date.now() - this.#t0;

  #close(at = this.#now()) {
    const open = this.#rows.findLast((r) => r.kind !== 'mark' && r.end == null);
    if (open) open.end = at;
  }

  /** A new state from the operation; returns nothing. */
  state(s) {
    const at = this.#now();
    if (s.state === 'requesting') {
      this.#close(at);
      this.#rows.push({ kind: 'request', attempt: s.attempt, start: at, end: null });
    } else if (s.state === 'waiting') {
      this.#close(at);
      // An offline wait has no plan: it lasts until the network is back (or the budget ends).
      const planned = s.why === 'offline' ? null : s.waitMs ?? null;
      this.#rows.push({ kind: 'wait', why: s.why, before: s.attempt, planned, start: at, end: null });
    } else if (s.state !== 'idle') {
      this.#close(at);
    }
  }

  /** A visitor's action or a network event, drawn as a marker. */
  mark(label) {
    this.#close();
    const at = this.#now();
    this.#rows.push({ kind: 'mark', label, start: at, end: at });
  }

  /** Labels the last operation's request bars with the report's status or error. */
  report(report) {
    const start = this.#rows.findLastIndex((r) => r.kind === 'mark' && r.label === 'Try now') + 1;
    const bars = this.#rows.slice(start).filter((r) => r.kind === 'request');
    report.attempts.forEach((a, i) => {
      if (!bars[i]) return;
      bars[i].status = a.status ?? (a.error ? undefined : bars[i].status);
      bars[i].error = a.error;
      bars[i].durationMs = a.durationMs;
    });
  }

  /** The server's arrival times (`Date.now()` epoch ms, the same clock). */
  server(starts) {
    this.#server = starts.map((t) => t - this.#t0).filter((t) => t >= -1000);
  }

  render(running) {
    const now = this.#now();
    const ends = this.#rows.map((r) => Math.max(r.end ?? now, r.start + (r.planned ?? 0)));
    const span = Math.max(2000, now * (running ? 1 : 0), ...ends, ...this.#server) * 1.06;
    const x = (t) => `${Math.max(0, Math.min(100, (t / span) * 100)).toFixed(2)}%`;
    const w = (a, b) => `${Math.max(0.4, ((b - a) / span) * 100).toFixed(2)}%`;

    const list = el('ol', 'tl-rows');
    for (const r of this.#rows) list.append(this.#row(r, now, x, w));
    list.append(this.#serverRow(x));

    const axis = el('div', 'tl-axis');
    axis.setAttribute('aria-hidden', 'true');
    const step = STEPS.find((s) => span / s <= 6) ?? STEPS.at(-1);
    for (let t = 0; t <= span && t <= step * 12; t += step) {
      const tick = el('span', 'tl-tick', formatMs(t));
      tick.style.left = x(t);
      axis.append(tick);
    }
    this.#root.replaceChildren(axis, list);
  }

  #row(r, now, x, w) {
    const li = el('li', `tl-row tl-row-${r.kind}`);
    const track = el('span', 'tl-track');
    const end = r.end ?? now;
    let label;
    if (r.kind === 'request') {
      const result = r.status != null ? formatStatus(r.status) : r.error ? r.error.code : r.end == null ? 'in flight' : '';
      label = `Attempt ${r.attempt}${result ? ` · ${result}` : ''} · ${formatMs(r.durationMs ?? end - r.start)}`;
      const bar = el('span', `tl-bar ${r.status >= 200 && r.status < 300 ? 'ok' : r.status != null || r.error ? 'bad' : ''}`);
      bar.style.left = x(r.start);
      bar.style.width = w(r.start, end);
      track.append(bar);
    } else if (r.kind === 'wait') {
      const planned = r.planned == null ? '' : ` · planned ${formatMs(r.planned)}`;
      label = `Wait, ${WHY[r.why] ?? r.why}${planned} · took ${formatMs(end - r.start)}`;
      if (r.planned != null) {
        const plan = el('span', 'tl-plan');
        plan.style.left = x(r.start);
        plan.style.width = w(r.start, r.start + r.planned);
        track.append(plan);
      }
      const bar = el('span', 'tl-bar wait');
      bar.style.left = x(r.start);
      bar.style.width = w(r.start, end);
      track.append(bar);
    } else {
      label = `${r.label} at ${formatMs(r.start)}`;
      const tick = el('span', 'tl-mark');
      tick.style.left = x(r.start);
      track.append(tick);
    }
    li.append(el('span', 'tl-label', label), track);
    return li;
  }

  #serverRow(x) {
    const li = el('li', 'tl-row tl-row-server');
    const n = this.#server.length;
    li.append(el('span', 'tl-label', `Server received ${n} request${n === 1 ? '' : 's'}`));
    const track = el('span', 'tl-track');
    for (const t of this.#server) {
      const tick = el('span', 'tl-hit');
      tick.style.left = x(t);
      track.append(tick);
    }
    li.append(track);
    return li;
  }
}
