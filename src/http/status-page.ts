/**
 * The `/status` page: server-rendered HTML, no scripts or front-end build, refreshing itself every
 * few seconds, laid out in cards that stack on a phone. Every value is escaped.
 */
import { type BotStatus, type DaemonStatus, redisLine, storeLine, webhookCounts } from "./daemon-status.ts";

/** Seconds between the page's own refreshes. */
export const STATUS_REFRESH_SECONDS = 5;

const STYLE = `
:root { color-scheme: light dark; --ok: #1a7f37; --warn: #9a6700; --bad: #cf222e; --muted: #6e7781; }
* { box-sizing: border-box; }
body { font: 15px/1.45 system-ui, sans-serif; margin: 0; padding: 1rem; max-width: 72rem; margin-inline: auto; }
h1 { font-size: 1.3rem; margin: 0 0 .25rem; }
h2 { font-size: 1.05rem; margin: 1.5rem 0 .5rem; }
.meta, .muted { color: var(--muted); font-size: .9rem; }
.bots { display: grid; gap: .75rem; grid-template-columns: repeat(auto-fill, minmax(17rem, 1fr)); }
.bot { border: 1px solid #8884; border-radius: .5rem; padding: .75rem; }
.bot h3 { margin: 0 0 .35rem; font-size: 1rem; display: flex; justify-content: space-between; gap: .5rem; }
.state { font-size: .8rem; font-weight: 600; padding: .05rem .45rem; border-radius: 1rem; border: 1px solid; }
.running, .webhook, .standby { color: var(--ok); } .starting, .retrying, .reloading { color: var(--warn); }
.failed, .stopped { color: var(--bad); }
dl { display: grid; grid-template-columns: auto 1fr; gap: .1rem .75rem; margin: 0; font-size: .9rem; }
dt { color: var(--muted); } dd { margin: 0; overflow-wrap: anywhere; }
table { border-collapse: collapse; width: 100%; font-size: .9rem; }
th, td { text-align: left; padding: .3rem .5rem; border-bottom: 1px solid #8883; vertical-align: top; }
td.error { overflow-wrap: anywhere; }
ol.dialogs { margin: .4rem 0 0; padding-left: 1.2rem; font-size: .85rem; }
ol.dialogs li { overflow-wrap: anywhere; }
`;

/** The most dialogs a bot's card lists (the status holds more; `bothost dialogs` lists them all). */
const PAGE_DIALOGS = 10;

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

export function renderStatusPage(status: DaemonStatus): string {
  const e = escapeHtml;
  // A bot stopped by a lost lease runs nowhere known (`bothost status` exits 1): counted as failing.
  const failing = status.bots.filter(
    (b) => b.state === "failed" || b.state === "retrying" || (b.state === "stopped" && b.leaseLost),
  ).length;
  const failures = status.deadLettersUnread
    ? `<p class="error">Dead letters not shown: ${e(status.deadLettersUnread)}.</p>`
    : status.recentFailures.length === 0
      ? `<p class="muted">No dead letters.</p>`
      : `<table><thead><tr><th>Id</th><th>Bot</th><th>Last failed</th><th>Error</th></tr></thead><tbody>${status.recentFailures
          .map(
            (f) =>
              `<tr><td>${e(f.id)}</td><td>${e(f.bot)}</td><td>${e(f.at)}</td><td class="error">${e(f.error)}</td></tr>`,
          )
          .join("")}</tbody></table>`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="refresh" content="${STATUS_REFRESH_SECONDS}">
<title>${failing > 0 ? `(${failing}) ` : ""}bothost status</title>
<style>${STYLE}</style>
</head>
<body>
<h1>bothost</h1>
<p class="meta">version ${e(status.version)} · pid ${status.pid} · up ${e(duration(status.uptimeSeconds))} · refreshes every ${STATUS_REFRESH_SECONDS} s</p>
${status.redis ? `<p class="meta">${e(redisLine(status.redis))}</p>` : ""}
<h2>Bots (${status.bots.length})</h2>
<div class="bots">${status.bots.map(botCard).join("")}</div>
<h2>Recent failures</h2>
${failures}
</body>
</html>
`;
}

function botCard(b: BotStatus): string {
  const e = escapeHtml;
  const rows: [string, string | undefined][] = [
    ["why", b.reason],
    [
      "queue",
      b.queueId === null
        ? undefined
        : `${b.queueId}${b.queueAgeSeconds === undefined ? "" : ` (${duration(b.queueAgeSeconds)} old)`}`,
    ],
    ["last event", b.lastEventAt],
    ["handled", String(b.handled)],
    ["failed for good", String(b.failed)],
    ["dead letters", String(b.deadLetters)],
    ["state store", b.store ? storeLine(b.store) : undefined],
    ["dialogs", b.dialogs.waiting > 0 ? `${b.dialogs.waiting} open` : undefined],
    [
      "end notes",
      b.dialogs.notes?.length ? `${b.dialogs.notes.length} not said yet (bothost dialogs)` : undefined,
    ],
    ["next", b.nextRuns.length > 0 ? b.nextRuns.map((r) => `${r.name} at ${r.at}`).join(", ") : undefined],
    ["dry run", b.dryRun ? `${b.dryRun.captured} write(s) captured, not made` : undefined],
    ...Object.entries(b.webhooks ?? {}).map(([n, w]): [string, string] => [`webhook ${n}`, webhookCounts(w)]),
    ["lease", b.leaseHolder],
    ["server", b.server ? `${b.server.version} (feature level ${b.server.featureLevel})` : undefined],
  ];
  const dl = rows
    .filter((r): r is [string, string] => r[1] !== undefined)
    .map(([k, v]) => `<dt>${e(k)}</dt><dd>${e(v)}</dd>`)
    .join("");
  const captured = b.dryRun?.recent.length
    ? `<ol class="captured">${b.dryRun.recent
        .slice()
        .reverse()
        .map((c) => `<li><time>${e(c.at)}</time> ${e(c.does)}</li>`)
        .join("")}</ol>`
    : "";
  return `<section class="bot" data-bot="${e(b.name)}"><h3><span>${e(b.name)}</span><span class="state ${e(b.state)}">${e(b.state)}</span></h3><dl>${dl}</dl>${dialogList(b.dialogs)}${captured}</section>`;
}

/** "Bob, direct message, step 2, since …, deadline …": the oldest open dialogs of a bot. */
function dialogList(d: BotStatus["dialogs"]): string {
  const e = escapeHtml;
  const time = (iso: string) => `<time datetime="${e(iso)}">${e(iso.replace(/\.\d+Z$/, "Z"))}</time>`;
  if (d.list.length === 0) return "";
  const items = d.list
    .slice(0, PAGE_DIALOGS)
    .map(
      (x) =>
        `<li data-dialog="${e(x.id)}">${e(x.userName)}${x.awaiting ? ` (awaits ${e(x.awaiting)})` : ""}, ${e(x.where)}${x.outsideNarrow ? ` (outside narrow ${e(x.outsideNarrow)})` : ""}, step ${x.step}, since ${time(x.since)}${
          x.ending
            ? ", ending"
            : x.deadline
              ? `, deadline ${time(x.deadline)}`
              : x.nextStart
                ? ", answer or deadline recorded: runs at the next start"
                : ", being handled"
        }</li>`,
    );
  const more = d.waiting - items.length;
  if (more > 0) items.push(`<li class="muted">and ${more} more (bothost dialogs)</li>`);
  return `<ol class="dialogs">${items.join("")}</ol>`;
}

/** 93784 → "1d 2h 3m". */
export function duration(seconds: number): string {
  const s = Math.max(0, Math.floor(seconds));
  const parts: [number, string][] = [
    [Math.floor(s / 86_400), "d"],
    [Math.floor((s % 86_400) / 3_600), "h"],
    [Math.floor((s % 3_600) / 60), "m"],
  ];
  const shown = parts.filter(([n]) => n > 0).map(([n, u]) => `${n}${u}`);
  return shown.length > 0 ? shown.join(" ") : `${s}s`;
}
