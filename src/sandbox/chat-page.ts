/**
 * The local chat page (`bothost dev`): served by the sandbox under `/chat/` when started with
 * `chatPage: true`. The page talks to the sandbox's real API as the person picked on it
 * (register, long-poll GET /events, POST /messages), so it exercises the sandbox like any client;
 * edits (a bot's progress message), moves and deletions show as their events arrive, and
 * reactions as the web app groups and shows them (who reacted, or how many), a press adding or
 * taking off the person's own;
 * each message shows as the server renders it, rebuilt through an allow-list of elements (its
 * HTML never goes into the page as it is: chat-page-script.ts), as in the web app: a spoiler closed
 * until its header is clicked, a /me message after its sender's name, a time in the reader's zone. Two page-only routes: the people to
 * pick from, and the picked person's API key (the sandbox's own fake credential, for a page on
 * this machine; never printed or logged).
 */
import type { ServerResponse } from "node:http";
import { CHAT_SCRIPT } from "./chat-page-script.ts";
import type { SandboxCore } from "./core.ts";

const CHAT_PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>bothost dev chat</title>
<style>
:root { color-scheme: light dark; --muted: #6e7781; --line: #d0d7de55; }
* { box-sizing: border-box; }
body { font: 15px/1.45 system-ui, sans-serif; margin: 0; display: grid; grid-template-rows: auto 1fr auto; height: 100vh; }
header, form { display: flex; gap: .5rem; align-items: center; padding: .6rem 1rem; border-bottom: 1px solid var(--line); flex-wrap: wrap; }
form { border-top: 1px solid var(--line); border-bottom: 0; }
h1 { font-size: 1rem; margin: 0 1rem 0 0; }
#log { overflow-y: auto; padding: .5rem 1rem; margin: 0; list-style: none; }
#log > li { padding: .25rem 0; border-bottom: 1px solid var(--line); }
.where { color: var(--muted); font-size: .85rem; margin-right: .5rem; }
.sender { font-weight: 600; margin-right: .35rem; }
.content { display: block; overflow-wrap: anywhere; }
.content p, .content ul, .content ol, .content blockquote, .content table, .content h1, .content h2, .content h3 { margin: .15rem 0; }
.content ul, .content ol { padding-left: 1.4rem; }
.content pre { white-space: pre-wrap; background: #8881; padding: .3rem .5rem; margin: .2rem 0; }
.codehilite[data-code-language]::before { content: attr(data-code-language); display: block; text-align: right; font-size: .75rem; color: var(--muted); }
.content code { background: #8881; padding: 0 .2rem; border-radius: 3px; }
.content blockquote { border-left: 3px solid var(--line); padding-left: .6rem; color: var(--muted); }
.content table { border-collapse: collapse; }
.content th, .content td { border: 1px solid var(--line); padding: .1rem .5rem; }
.content h1, .content h2, .content h3 { font-size: 1.05rem; }
.spoiler-block { border: 1px solid var(--line); border-radius: 4px; padding: 0 .5rem; margin: .2rem 0; }
.spoiler-header { cursor: pointer; }
.spoiler-header::before { content: "▸ "; color: var(--muted); float: left; margin-right: .3rem; }
.spoiler-block.open > .spoiler-header::before { content: "▾ "; }
.spoiler-content { display: none; }
.spoiler-block.open > .spoiler-content { display: block; border-top: 1px solid var(--line); }
.content.me-message, .content.me-message > p { display: inline; font-style: italic; }
.content time { background: #8881; border-radius: 3px; padding: 0 .2rem; white-space: nowrap; }
.content a.stream, .content a.stream-topic, .content a.message-link { color: LinkText; }
.user-mention, .user-group-mention, .topic-mention { background: #8882; border-radius: 3px; padding: 0 .15rem; }
.marker { color: var(--muted); font-size: .75rem; margin-left: .4rem; text-transform: uppercase; }
.reactions { display: flex; gap: .3rem; flex-wrap: wrap; margin-top: .2rem; }
.reactions:empty { display: none; }
.reaction { font: inherit; font-size: .85rem; border: 1px solid var(--line); border-radius: .8rem; padding: 0 .45rem; background: none; cursor: pointer; }
.reaction[aria-pressed=true] { border-color: #1e88e5; background: #1e88e522; }
.actions { float: right; display: flex; gap: .25rem; }
.actions button { font-size: .75rem; }
input[name=content] { flex: 1; min-width: 12rem; }
#status { color: var(--muted); font-size: .85rem; }
</style>
</head>
<body>
<header>
  <h1>bothost dev</h1>
  <label>You are <select id="me"></select></label>
  <span id="status">pick a person</span>
</header>
<ul id="log" aria-live="polite"></ul>
<form id="compose">
  <select id="to" aria-label="where"></select>
  <input id="topic" aria-label="topic" placeholder="topic" value="hello">
  <input name="content" id="content" aria-label="message" placeholder="Write a message" autocomplete="off">
  <button type="submit">Send</button>
</form>
<script type="module">
${CHAT_SCRIPT}
</script>
</body>
</html>
`;

/** Answers a `/chat…` request; false when the path is not one of the page's. */
export function serveChat(core: SandboxCore, url: URL, res: ServerResponse): boolean {
  const users = () => core.data.users.filter((u) => u.is_active);
  const json = (status: number, body: unknown) => {
    res.writeHead(status, { "Content-Type": "application/json", "Cache-Control": "no-store" });
    res.end(JSON.stringify(body));
  };
  switch (url.pathname) {
    case "/chat":
    case "/chat/":
      res.writeHead(200, { "Content-Type": "text/html; charset=utf-8", "Cache-Control": "no-store" });
      res.end(CHAT_PAGE);
      return true;
    case "/chat/users":
      json(
        200,
        users().map((u) => ({
          user_id: u.user_id,
          email: u.delivery_email,
          full_name: u.full_name,
          is_bot: u.is_bot,
          is_admin: u.role <= 200,
        })),
      );
      return true;
    case "/chat/session": {
      const email = (url.searchParams.get("email") ?? "").toLowerCase();
      const user = users().find((u) => u.delivery_email.toLowerCase() === email && !u.is_bot);
      if (!user) json(404, { msg: "no such person in the sandbox" });
      else json(200, { email: user.delivery_email, user_id: user.user_id, api_key: user.api_key });
      return true;
    }
    default:
      return false;
  }
}
