/**
 * The chat page's script (chat-page.ts serves it inside the page): it signs in as the person
 * picked, registers a queue and long-polls it, shows each message as the server renders it
 * (through an allow-list: see `safe`), its edits, moves, deletions and reactions, and sends,
 * reacts, edits, moves and deletes through the sandbox's real API.
 */
export const CHAT_SCRIPT = `
const $ = (id) => document.getElementById(id);
let auth = "", me = null, canDelete = false, reactorNames = false, people = [], queue = null, lastEventId = -1, generation = 0;
const seen = new Set();
const channelNames = new Map();
// Each message's reactions as the server holds them ({ emoji_name, emoji_code, reaction_type, user_id }).
const reactionsOf = new Map();

async function api(method, path, params = {}) {
  const form = new URLSearchParams(Object.entries(params).map(([k, v]) => [k, typeof v === "string" ? v : JSON.stringify(v)]));
  const query = method === "GET" ? "?" + form : "";
  // Without credentials the browser leaves a 401 to the page: with them, the server's
  // "WWW-Authenticate: Basic" would have it ask for a password (headless: wait for ever), as a
  // sandbox started again with new keys answers the page's old one.
  const res = await fetch("/api/v1" + path + query, {
    method, headers: { Authorization: auth }, body: method === "GET" ? undefined : form, credentials: "omit",
  });
  return res.json();
}

// The server's HTML of a message, rebuilt through an allow-list: these elements only, no attribute
// but a class (mentions, emoji), a title, a table cell's alignment, a code block's language and a
// link's http(s) address; any other element gives its text. Parsed in an inert document: nothing in it runs or loads.
const KEEP = new Set(["P", "BR", "STRONG", "EM", "DEL", "CODE", "PRE", "BLOCKQUOTE", "UL", "OL", "LI", "H1", "H2",
  "H3", "H4", "H5", "H6", "TABLE", "THEAD", "TBODY", "TR", "TH", "TD", "HR", "SPAN", "DIV", "A", "TIME"]);
function safe(html) {
  const copy = (node) => {
    if (node.nodeType === Node.TEXT_NODE) return document.createTextNode(node.data);
    if (node.nodeType !== Node.ELEMENT_NODE) return document.createTextNode("");
    if (node.tagName === "IMG") return document.createTextNode(node.getAttribute("alt") ?? "");
    const kids = [...node.childNodes].map(copy);
    if (!KEEP.has(node.tagName)) { const f = document.createDocumentFragment(); f.append(...kids); return f; }
    const el = document.createElement(node.tagName);
    const cls = node.getAttribute("class");
    if (cls && /^[\\w -]+$/.test(cls)) el.className = cls;
    if (node.hasAttribute("title")) el.title = node.getAttribute("title");
    const align = /^text-align: (left|right|center);$/.exec(node.getAttribute("style") ?? "");
    if (align && (node.tagName === "TH" || node.tagName === "TD")) el.style.textAlign = align[1];
    if (node.tagName === "OL" && /^\\d+$/.test(node.getAttribute("start") ?? "")) el.start = Number(node.getAttribute("start"));
    // A code block's language, shown above it as the web app does (as text: see the style).
    const lang = node.getAttribute("data-code-language");
    if (lang && el.classList.contains("codehilite")) el.dataset.codeLanguage = lang;
    // A time shows in the reader's time zone and language, as the web app shows it.
    const when = node.tagName === "TIME" ? new Date(node.getAttribute("datetime") ?? "") : undefined;
    if (when && !Number.isNaN(when.getTime())) {
      Object.assign(el, { dateTime: when.toISOString(), title: node.textContent });
      el.textContent = when.toLocaleString(undefined, { weekday: "short", year: "numeric", month: "short", day: "numeric", hour: "numeric", minute: "2-digit" });
      return el;
    }
    const href = node.tagName === "A" ? node.getAttribute("href") ?? "" : "";
    if (/^https?:\\/\\//i.test(href)) Object.assign(el, { href, target: "_blank", rel: "noopener noreferrer" });
    // An emoji shows as its glyph, its name kept as the title.
    const code = /(?:^| )emoji-([0-9a-f-]+)(?: |$)/.exec(cls ?? "")?.[1];
    if (code) el.textContent = glyph({ reaction_type: "unicode_emoji", emoji_code: code, emoji_name: node.textContent.slice(1, -1) });
    else el.append(...kids);
    return el;
  };
  const doc = new DOMParser().parseFromString(html, "text/html");
  const out = document.createDocumentFragment();
  out.append(...[...doc.body.childNodes].map(copy));
  // As the web app: a spoiler without a header says "Spoiler"; its content shows once opened.
  for (const header of out.querySelectorAll(".spoiler-block > .spoiler-header")) {
    if (header.textContent.trim() === "") header.replaceChildren(Object.assign(document.createElement("p"), { textContent: "Spoiler" }));
  }
  return out;
}

// A message's HTML in its box; a "/me" message as the web app shows it, its text after the sender's
// name, in place of "/me".
function fill(box, html, meMessage) {
  box.replaceChildren(safe(html));
  box.classList.toggle("me-message", meMessage === true);
  const first = box.firstChild?.firstChild;
  if (meMessage && first?.nodeType === Node.TEXT_NODE) first.data = first.data.replace(/^\\/me /, "");
}

function nameOf(id) { return people.find((p) => p.user_id === id)?.full_name ?? "user " + id; }

function show(m) {
  if (seen.has(m.id)) return;
  seen.add(m.id);
  const li = document.createElement("li");
  li.dataset.id = m.id;
  const where = document.createElement("span");
  where.className = "where";
  if (m.type === "stream") {
    li.dataset.channel = m.display_recipient;
    li.dataset.topic = m.subject;
    where.textContent = "#" + m.display_recipient + " › " + m.subject;
  } else where.textContent = "DM " + m.display_recipient.map((r) => r.full_name).join(", ");
  const sender = document.createElement("span");
  sender.className = "sender";
  sender.textContent = m.sender_full_name;
  const content = document.createElement("span");
  content.className = "content";
  fill(content, m.content, m.is_me_message);
  const marker = document.createElement("span");
  marker.className = "marker";
  const actions = document.createElement("span");
  actions.className = "actions";
  const action = (name) => { const b = document.createElement("button"); b.type = "button"; b.dataset.action = name; b.textContent = name; actions.append(b); };
  action("react");
  if (m.sender_id === me.user_id) action("edit");
  if (m.type === "stream") action("move");
  if (m.sender_id === me.user_id || canDelete) action("delete");
  const reactions = document.createElement("div");
  reactions.className = "reactions";
  li.append(actions, where, sender, content, marker, reactions);
  reactionsOf.set(m.id, (m.reactions ?? []).map((r) => ({ ...r })));
  mark(li, m.last_edit_timestamp !== undefined ? "edited" : m.last_moved_timestamp !== undefined ? "moved" : "");
  renderReactions(m.id, li);
  $("log").append(li);
  li.scrollIntoView({ block: "end" });
}

const itemOf = (id) => document.querySelector('#log li[data-id="' + id + '"]');

// As the web app labels a message: EDITED once its content changed, else MOVED once moved.
function mark(li, label) {
  const marker = li.querySelector(".marker");
  if (label === "moved" && marker.textContent === "edited") return;
  marker.textContent = label;
}

// A unicode emoji's code is its code points in hex, joined by "-"; any other shows as its name.
function glyph(r) {
  if (r.reaction_type !== "unicode_emoji") return ":" + r.emoji_name + ":";
  try { return String.fromCodePoint(...r.emoji_code.split("-").map((h) => parseInt(h, 16))); }
  catch { return ":" + r.emoji_name + ":"; }
}

// One button per emoji (its type and code, as the web app groups them: the name of its first
// reaction shown), with how many reacted; pressed when the person picked is one of them. As the
// web app, with the person's display_emoji_reaction_users on, a message with 3 reactions or
// fewer names who reacted ("You" for the person) in place of the counts.
function renderReactions(id, li = itemOf(id)) {
  const box = li?.querySelector(".reactions");
  if (!box) return;
  const all = reactionsOf.get(id) ?? [];
  const names = reactorNames && all.length <= 3;
  const groups = new Map();
  for (const r of all) {
    const key = r.reaction_type + "," + r.emoji_code;
    if (!groups.has(key)) groups.set(key, { first: r, users: [] });
    groups.get(key).users.push(r.user_id);
  }
  box.replaceChildren(...[...groups.values()].map(({ first, users }) => {
    const b = document.createElement("button");
    b.type = "button";
    b.className = "reaction";
    Object.assign(b.dataset, { emoji: first.emoji_name, code: first.emoji_code, type: first.reaction_type, count: users.length });
    b.setAttribute("aria-pressed", String(users.includes(me.user_id)));
    b.title = ":" + first.emoji_name + ": " + users.map(nameOf).join(", ");
    const emoji = document.createElement("span");
    emoji.className = "emoji";
    emoji.textContent = glyph(first);
    const vote = document.createElement("span");
    vote.className = "vote";
    vote.textContent = names ? users.map((u) => (u === me.user_id ? "You" : nameOf(u))).join(", ") : String(users.length);
    b.append(emoji, " ", vote);
    return b;
  }));
}

function reacted(e) {
  const list = reactionsOf.get(e.message_id);
  if (!list) return;
  const same = (r) => r.emoji_code === e.emoji_code && r.reaction_type === e.reaction_type && r.user_id === e.user_id;
  if (e.op === "add" && !list.some(same)) list.push({ emoji_name: e.emoji_name, emoji_code: e.emoji_code, reaction_type: e.reaction_type, user_id: e.user_id });
  if (e.op === "remove") reactionsOf.set(e.message_id, list.filter((r) => !same(r)));
  renderReactions(e.message_id);
}

// An edit shows its new text (a bot's progress message grows); a move, its new place.
function edited(e) {
  const li = itemOf(e.message_id);
  if (li && typeof e.content === "string") {
    fill(li.querySelector(".content"), e.rendered_content ?? "", e.is_me_message);
    if (!e.rendering_only) mark(li, "edited");
  }
  if (typeof e.subject !== "string" && e.new_stream_id === undefined) return;
  for (const id of e.message_ids ?? [e.message_id]) {
    const moved = itemOf(id);
    if (!moved || moved.dataset.topic === undefined) continue;
    mark(moved, "moved");
    if (e.new_stream_id !== undefined) moved.dataset.channel = channelNames.get(e.new_stream_id) ?? "channel " + e.new_stream_id;
    if (typeof e.subject === "string") moved.dataset.topic = e.subject;
    moved.querySelector(".where").textContent = "#" + moved.dataset.channel + " › " + moved.dataset.topic;
  }
}

async function poll(mine) {
  while (mine === generation) {
    try {
      const r = await api("GET", "/events", { queue_id: queue, last_event_id: lastEventId });
      if (mine !== generation) return;
      // A queue or key the server no longer knows (it started again): sign in anew, after a
      // pause, so that a server refusing every call is not called in a loop.
      if (r.result !== "success") {
        await new Promise((r) => setTimeout(r, 1000));
        if (mine === generation) await start();
        return;
      }
      for (const e of r.events) {
        lastEventId = Math.max(lastEventId, e.id);
        if (e.type === "message") show(e.message);
        else if (e.type === "update_message") edited(e);
        else if (e.type === "reaction") reacted(e);
        else if (e.type === "delete_message") for (const id of e.message_ids ?? [e.message_id]) { itemOf(id)?.remove(); reactionsOf.delete(id); }
      }
    } catch { await new Promise((r) => setTimeout(r, 1000)); }
  }
}

// The people to pick from, read again at each start (a sandbox started again may have others);
// \`email\` stays picked while it is one of them.
async function loadPeople(email) {
  people = await (await fetch("/chat/users")).json();
  $("me").replaceChildren(...people.filter((p) => !p.is_bot).map((p) => new Option(p.full_name + " <" + p.email + ">", p.email)));
  $("me").value = email;
}

async function start() {
  const mine = ++generation;
  const email = $("me").value;
  await loadPeople(email);
  const res = await fetch("/chat/session?email=" + encodeURIComponent(email));
  if (mine !== generation) return;
  if (!res.ok) {
    $("log").replaceChildren();
    $("status").textContent = email + " is not in the sandbox: pick a person";
    return;
  }
  const session = await res.json();
  me = session;
  auth = "Basic " + btoa(session.email + ":" + session.api_key);
  $("log").replaceChildren();
  seen.clear();
  reactionsOf.clear();
  canDelete = people.find((p) => p.user_id === me.user_id)?.is_admin === true;
  const reg = await api("POST", "/register", {
    event_types: ["message", "update_message", "delete_message", "reaction"], fetch_event_types: ["user_settings"], apply_markdown: true,
  });
  queue = reg.queue_id; lastEventId = reg.last_event_id;
  reactorNames = reg.user_settings?.display_emoji_reaction_users === true;
  const subs = await api("GET", "/users/me/subscriptions");
  const to = $("to");
  to.replaceChildren();
  for (const s of subs.subscriptions ?? []) {
    channelNames.set(s.stream_id, s.name);
    to.append(new Option("#" + s.name, "channel:" + s.name));
  }
  for (const p of people) if (p.user_id !== me.user_id) to.append(new Option("DM " + p.full_name + (p.is_bot ? " (bot)" : ""), "dm:" + p.user_id));
  const recent = await api("GET", "/messages", { anchor: "newest", num_before: 50, num_after: 0, apply_markdown: true });
  for (const m of recent.messages ?? []) show(m);
  $("status").textContent = "signed in as " + session.email;
  document.body.dataset.ready = "true";
  poll(mine);
}

$("compose").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const content = $("content").value.trim();
  if (!content || !me) return;
  const [kind, target] = $("to").value.split(/:(.*)/);
  const params = kind === "channel"
    ? { type: "channel", to: target, topic: $("topic").value || "hello", content }
    : { type: "direct", to: [Number(target)], content };
  const r = await api("POST", "/messages", params);
  $("status").textContent = r.result === "success" ? "sent" : "not sent: " + r.msg;
  if (r.result === "success") $("content").value = "";
});
$("me").addEventListener("change", () => start());

// A reaction button adds the person's reaction with that emoji, or takes theirs off; a message's
// own buttons react with an emoji named, edit its text, move it to another topic, or delete it.
// The server's refusal shows.
$("log").addEventListener("click", async (ev) => {
  const spoiler = ev.target.closest(".spoiler-header");
  if (spoiler) return void spoiler.parentElement.classList.toggle("open");
  const button = ev.target.closest("button");
  const li = button?.closest("li");
  if (!button || !li) return;
  const id = li.dataset.id;
  let r;
  if (button.classList.contains("reaction")) {
    const { emoji, code, type } = button.dataset;
    const method = button.getAttribute("aria-pressed") === "true" ? "DELETE" : "POST";
    r = await api(method, "/messages/" + id + "/reactions", { emoji_name: emoji, emoji_code: code, reaction_type: type });
  } else if (button.dataset.action === "delete") r = await api("DELETE", "/messages/" + id);
  else if (button.dataset.action === "react") {
    // The web app's emoji picker, by name: "tada", "+1", "check".
    const name = prompt("Emoji name")?.trim().replace(/^:(.*):$/, "$1");
    if (!name) return;
    r = await api("POST", "/messages/" + id + "/reactions", { emoji_name: name });
  }
  else {
    const topic = button.dataset.action === "move";
    // The text as written (the page shows it rendered).
    const now = topic ? li.dataset.topic : (await api("GET", "/messages/" + id, { apply_markdown: false })).message?.content;
    if (now === undefined) return;
    const next = prompt(topic ? "New topic" : "New text", now);
    if (next === null || next === now) return;
    r = await api("PATCH", "/messages/" + id, topic ? { topic: next, propagate_mode: "change_one" } : { content: next });
  }
  $("status").textContent = r.result === "success" ? "done" : "refused: " + r.msg;
});

await loadPeople("");
if ($("me").options.length > 0) {
  $("me").selectedIndex = 0;
  start();
}
`;
