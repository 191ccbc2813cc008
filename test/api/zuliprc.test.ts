import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect } from "vitest";
import { createClient } from "../../src/api/create-client.ts";
import { ClientConfigError } from "../../src/api/errors.ts";
import { parseZuliprc, readZuliprc } from "../../src/api/zuliprc.ts";
import { API_KEY, test } from "../support/api/client-fixture.ts";
import * as rec from "../support/api/records.ts";
import { success } from "../support/api/test-server.ts";

const dir = mkdtempSync(join(tmpdir(), "bothost-zuliprc-"));
const write = (name: string, text: string): string => {
  const file = join(dir, name);
  writeFileSync(file, text);
  return file;
};

/** Run `fn`, expect a ClientConfigError, and check the key is nowhere in it. */
function configError(fn: () => unknown): ClientConfigError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ClientConfigError);
    expect((err as ClientConfigError).code).toBe("CLIENT_CONFIG_INVALID");
    expect((err as Error).message).not.toContain(API_KEY);
    return err as ClientConfigError;
  }
  throw new Error("expected a ClientConfigError");
}

describe("zuliprc", () => {
  test("reads [api] email, key, site; comments, `:` separators and other sections are fine", () => {
    const file = write(
      "ok.zuliprc",
      `# downloaded from Settings → Bots\n[api]\nemail = echo-bot@chat.example.org\nkey: ${API_KEY}\n; comment\nsite=https://chat.example.org\n\n[other]\nx=1\n`,
    );
    expect(readZuliprc(file)).toEqual({
      email: "echo-bot@chat.example.org",
      apiKey: API_KEY,
      site: "https://chat.example.org",
      insecure: false,
    });
  });

  test("insecure and cert_bundle (relative to the file)", () => {
    const rc = parseZuliprc(
      `[api]\nemail=a@b.c\nkey=${API_KEY}\nsite=https://x\ninsecure=true\ncert_bundle=certs/ca.pem\n`,
      "/etc/bots/z.rc",
    );
    expect(rc.insecure).toBe(true);
    expect(rc.certBundle).toBe("/etc/bots/certs/ca.pem");
  });

  test("a malformed line: file and line named, the line itself (which may hold the key) not quoted", () => {
    const file = write("bad-line.zuliprc", `[api]\nemail=a@b.c\nkey ${API_KEY}\nsite=https://x\n`);
    const err = configError(() => readZuliprc(file));
    expect(err.message.split("\n")[0]).toBe(
      `${file}:3: expected \`name = value\` or a \`[section]\` header. A zuliprc looks like:`,
    );
  });

  test("no [api] section", () => {
    const file = write("no-api.zuliprc", "[zulip]\nemail=a@b.c\n");
    expect(configError(() => readZuliprc(file)).message).toMatch(
      new RegExp(`^${file}: no \\[api\\] section\\.`),
    );
  });

  test("a setting before any section", () => {
    const file = write("no-header.zuliprc", `key=${API_KEY}\n`);
    expect(configError(() => readZuliprc(file)).message).toContain(
      `${file}:1: a setting comes before any \`[api]\` header.`,
    );
  });

  test.for(["email", "key", "site"])("missing %s", (name) => {
    const lines = { email: "email=a@b.c", key: `key=${API_KEY}`, site: "site=https://x" };
    const text = `[api]\n${Object.entries(lines)
      .filter(([k]) => k !== name)
      .map(([, v]) => v)
      .join("\n")}\n`;
    const file = write(`missing-${name}.zuliprc`, text);
    expect(configError(() => readZuliprc(file)).message).toContain(
      `${file}: the [api] section has no \`${name}\`.`,
    );
  });

  test("insecure that is not a boolean", () => {
    const file = write(
      "insecure.zuliprc",
      `[api]\nemail=a@b.c\nkey=${API_KEY}\nsite=https://x\ninsecure=maybe\n`,
    );
    expect(configError(() => readZuliprc(file)).message).toBe(
      `${file}:5: \`insecure\` must be true or false.`,
    );
  });

  test("a file that does not exist", () => {
    const file = join(dir, "absent.zuliprc");
    expect(configError(() => readZuliprc(file)).message).toBe(
      `Cannot read zuliprc file ${file} (ENOENT). Pass the path of the zuliprc downloaded for the bot.`,
    );
  });

  test("createClient({ zuliprc }) talks to the site with the file's credentials", async ({ server }) => {
    const file = write(
      "client.zuliprc",
      `[api]\nemail=echo-bot@chat.example.org\nkey=${API_KEY}\nsite=${server.url}/api\n`,
    );
    const client = createClient({ zuliprc: file, rateLimit: false });
    expect(client.email).toBe("echo-bot@chat.example.org");
    expect(client.origin).toBe(server.url);
    server.reply(success(rec.ownUser));
    await client.users.me();
    expect(server.requests[0]?.path).toBe("/api/v1/users/me");
    expect(server.requests[0]?.headers.authorization).toBe(
      `Basic ${Buffer.from(`echo-bot@chat.example.org:${API_KEY}`).toString("base64")}`,
    );
  });

  test("createClient({ zuliprc }) with an unreadable cert_bundle names both files", () => {
    const file = write(
      "cert.zuliprc",
      `[api]\nemail=a@b.c\nkey=${API_KEY}\nsite=https://x\ncert_bundle=nope.pem\n`,
    );
    expect(configError(() => createClient({ zuliprc: file })).message).toBe(
      `Cannot read cert_bundle ${join(dir, "nope.pem")} named in ${file}.`,
    );
  });
});
