/**
 * The local chat page (`bothost dev`): served by the sandbox under `/chat/` when started with
 * `chatPage: true`. The page itself talks to the sandbox's real API as the user picked on it
 * (register, long-poll GET /events, POST /messages), so it exercises the sandbox like any client.
 * Two page-only routes: the people to pick from, and the picked person's API key (the sandbox's
 * own fake credential, for a page on this machine; never printed or logged).
 */
import type { ServerResponse } from "node:http";
import type { SandboxCore } from "../core.ts";
import { CHAT_PAGE } from "./page.ts";

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
