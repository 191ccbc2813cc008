import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import type { Sandbox } from "../../src/testing.ts";
import { openQueue } from "../support/sandbox/events.ts";
import { fixtureFor, recordingSandbox } from "../support/sandbox/fixture.ts";

interface Received {
  headers: IncomingMessage["headers"];
  body: string;
}

let receiver: Server | undefined;
let sandbox: Sandbox | undefined;

afterEach(async () => {
  await sandbox?.stop();
  await new Promise((r) => (receiver ? receiver.close(r) : r(undefined)));
  receiver = undefined;
  sandbox = undefined;
});

/**
 * A webhook receiver on port 0 answering each request with the next canned reply; a `cut` reply
 * promises more bytes than its body and closes the connection after the body.
 */
async function startReceiver(replies: { status: number; body: string; cut?: boolean }[]) {
  const received: Received[] = [];
  receiver = createServer((req, res) => {
    let body = "";
    req.on("data", (c) => {
      body += String(c);
    });
    req.on("end", () => {
      received.push({ headers: req.headers, body });
      const reply = replies.shift() ?? { status: 200, body: '""' };
      if (reply.cut) {
        res.writeHead(reply.status, { "content-type": "application/json", "content-length": "1000" });
        res.write(reply.body, () => res.socket?.destroy());
        return;
      }
      res.writeHead(reply.status, { "content-type": "application/json" });
      res.end(reply.body);
    });
  });
  await new Promise<void>((r) => receiver!.listen(0, "127.0.0.1", () => r()));
  return { url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`, received };
}

async function sandboxWith(url: string, iface: "zulip" | "slack" = "zulip") {
  sandbox = await recordingSandbox({
    org: {
      users: [
        { email: "olive@x.example", full_name: "Olive", role: "owner" },
        { email: "mel@x.example", full_name: "Mel" },
      ],
      bots: [
        {
          email: "echo-bot@x.example",
          full_name: "Echo",
          type: "outgoing",
          owner: "olive@x.example",
          outgoing: { url, token: "T".repeat(32), interface: iface },
        },
      ],
      channels: [
        { name: "general", subscribers: ["olive@x.example", "mel@x.example", "echo-bot@x.example"] },
      ],
    },
  });
  return sandbox;
}

describe("outgoing webhooks", () => {
  it("a mention posts the Zulip payload; the reply lands in the same topic", async () => {
    const hook = await startReceiver([{ status: 200, body: '{"content":"pong"}' }]);
    const sb = await sandboxWith(hook.url);
    sb.control.sendAs("mel@x.example", {
      type: "stream",
      to: "general",
      topic: "ping",
      content: "@**Echo** ping",
    });
    await sb.control.settleWebhooks();
    expect(hook.received).toHaveLength(1);
    const payload = JSON.parse(hook.received[0]!.body);
    expect(hook.received[0]!.headers["user-agent"]).toMatch(/^ZulipOutgoingWebhook\//);
    expect(payload).toMatchObject({
      data: "@**Echo** ping",
      bot_email: "echo-bot@x.example",
      bot_full_name: "Echo",
      token: "T".repeat(32),
      trigger: "mention",
      message: {
        content: "@**Echo** ping",
        content_type: "text/x-markdown",
        subject: "ping",
        type: "stream",
      },
    });
    expect(payload.message.rendered_content).toContain("user-mention");
    const reply = sb.control.messages().at(-1)!;
    expect(reply).toMatchObject({ content: "pong", topic: "ping", client: "OutgoingWebhookResponse" });
  });

  it("a DM triggers direct_message; bots never trigger; non-2xx posts a failure and tells the owner", async () => {
    const hook = await startReceiver([{ status: 503, body: "{}" }]);
    const sb = await sandboxWith(hook.url);
    const echo = sb.control.users().find((u) => u.email === "echo-bot@x.example")!;
    sb.control.createUser({
      email: "other-bot@x.example",
      full_name: "Other",
      bot: "generic",
      owner: "olive@x.example",
    });
    sb.control.sendAs("other-bot@x.example", { type: "direct", to: [echo.user_id], content: "from a bot" });
    sb.control.sendAs("mel@x.example", { type: "direct", to: [echo.user_id], content: "hello" });
    await sb.control.settleWebhooks();
    expect(hook.received.map((r) => JSON.parse(r.body).trigger)).toEqual(["direct_message"]);
    const contents = sb.control.messages().map((m) => m.content);
    expect(contents).toContain("Failure! Third party responded with 503");
    expect(contents.at(-1)).toContain(
      "triggered an outgoing webhook, which failed: Third party responded with 503",
    );
  });

  it("Slack format is form-encoded and replies from text; DMs are refused", async () => {
    const hook = await startReceiver([{ status: 200, body: '{"text":"slack reply"}' }]);
    const sb = await sandboxWith(hook.url, "slack");
    sb.control.sendAs("mel@x.example", {
      type: "stream",
      to: "general",
      topic: "t",
      content: "@**Echo** hi",
    });
    await sb.control.settleWebhooks();
    const form = new URLSearchParams(hook.received[0]!.body);
    expect(form.get("text")).toBe("@**Echo** hi");
    expect(form.get("channel_name")).toBe("general");
    expect(form.get("trigger_word")).toBe("mention");
    expect(sb.control.messages().at(-1)!.content).toBe("slack reply");
    const echo = sb.control.users().find((u) => u.email === "echo-bot@x.example")!;
    sb.control.sendAs("mel@x.example", { type: "direct", to: [echo.user_id], content: "dm" });
    await sb.control.settleWebhooks();
    expect(sb.control.messages().map((m) => m.content)).toContain(
      "Failure! Slack outgoing webhooks don't support direct messages.",
    );
  });

  it("setOutgoingWebhook points the bot at a new URL, keeping its token, with a realm_bot update", async () => {
    const sb = await sandboxWith("http://127.0.0.1:9/nothing-listens-here");
    const olive = await openQueue(fixtureFor(sb).as("olive@x.example"), { event_types: ["realm_bot"] });
    const hook = await startReceiver([{ status: 200, body: '{"content":"moved"}' }]);
    const echo = sb.control.setOutgoingWebhook("echo-bot@x.example", { url: hook.url });
    expect(echo.outgoing_token).toBe("T".repeat(32));
    expect(await olive.peek()).toMatchObject([
      {
        type: "realm_bot",
        op: "update",
        bot: {
          user_id: echo.user_id,
          services: [{ base_url: hook.url, token: "T".repeat(32), interface: 1 }],
        },
      },
    ]);
    sb.control.sendAs("mel@x.example", { type: "direct", to: [echo.user_id], content: "hi" });
    await sb.control.settleWebhooks();
    expect(hook.received.map((r) => JSON.parse(r.body).token)).toEqual(["T".repeat(32)]);
    expect(sb.control.messages().at(-1)!.content).toBe("moved");

    sb.control.createUser({
      email: "gen-bot@x.example",
      full_name: "Gen",
      bot: "generic",
      owner: "olive@x.example",
    });
    expect(() => sb.control.setOutgoingWebhook("gen-bot@x.example", { url: hook.url })).toThrow(
      '"gen-bot@x.example" is not an outgoing-webhook or embedded bot.',
    );
    expect(() => sb.control.setOutgoingWebhook("echo-bot@x.example", { url: "ftp://x" })).toThrow(
      'The outgoing webhook URL must be an http(s) URL, not "ftp://x".',
    );
  });

  it("a connection closed while the answer comes is retried like a failed connection", async () => {
    const hook = await startReceiver([
      { status: 200, body: '{"content":', cut: true },
      { status: 200, body: '{"content":"pong"}' },
    ]);
    const sb = await sandboxWith(hook.url);
    const echo = sb.control.users().find((u) => u.email === "echo-bot@x.example")!;
    sb.control.sendAs("mel@x.example", { type: "direct", to: [echo.user_id], content: "hi" });
    await sb.control.settleWebhooks();
    expect(hook.received).toHaveLength(2);
    expect(sb.control.messages().at(-1)!.content).toBe("pong");
  });
});
