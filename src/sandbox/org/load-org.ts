/**
 * Reading an org file: YAML → zod → cross-reference checks. Every problem of a stage is reported
 * at once, each with its field path and (for files) line:column; the references are checked once
 * the shapes are right (they are read from the parsed org).
 */
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { isMap, isSeq, LineCounter, parseDocument } from "yaml";
import type { z } from "zod";
import { ConfigSource, displayPath } from "../../config/config-source.ts";
import { issuesToProblems } from "../../config/zod-problems.ts";
import { BothostError } from "../../errors/bothost-error.ts";
import { suggest } from "../../errors/did-you-mean.ts";
import { keysAt } from "../../errors/schema-keys.ts";
import { SYSTEM_GROUPS } from "./build-state.ts";
import { defaultOrg } from "./default-org.ts";
import { CHANNEL_SETTINGS, Org, type OrgInput } from "./schema.ts";

/** The org file (or object) given to the sandbox is invalid; `issues` lists every problem. */
export class SandboxOrgError extends BothostError<"SANDBOX_ORG_INVALID"> {
  readonly issues: string[];
  constructor(source: string, issues: string[]) {
    super("SANDBOX_ORG_INVALID", `Invalid sandbox org ${source}:\n  - ${issues.join("\n  - ")}`);
    this.name = "SandboxOrgError";
    this.issues = issues;
  }
}

interface Issue {
  path: (string | number)[];
  message: string;
}

type Locate = (path: (string | number)[]) => string;

const formatPath = (path: (string | number)[]): string =>
  path.reduce<string>((acc, p) => (typeof p === "number" ? `${acc}[${p}]` : acc ? `${acc}.${p}` : p), "") ||
  "(root)";

/**
 * Load and validate an org: a path to a YAML file, an object, or nothing (the default org).
 *
 * @example
 * ```ts
 * const org = loadOrg("org.yaml"); // throws SandboxOrgError listing every problem
 * ```
 */
export function loadOrg(org?: string | OrgInput): Org {
  if (org === undefined) return validate(defaultOrg(), "(default)", () => "");
  if (typeof org !== "string") return validate(org, "(object)", () => "");
  // Named as the config's problems name their file: from the working folder when it is below it.
  const shown = displayPath(resolve(org), process.cwd());
  let text: string;
  try {
    text = readFileSync(org, "utf8");
  } catch (err) {
    throw new SandboxOrgError(shown, [`cannot read the file: ${(err as Error).message}`]);
  }
  return parseOrgText(text, shown);
}

/** Parse YAML text as an org; `source` names it in error messages. */
export function parseOrgText(text: string, source: string): Org {
  const lineCounter = new LineCounter();
  const at = (offset: number) => {
    const pos = lineCounter.linePos(offset);
    return `${source}:${pos.line}:${pos.col}`;
  };
  const doc = parseDocument(text, { lineCounter, prettyErrors: false });
  if (doc.errors.length > 0) {
    throw new SandboxOrgError(
      source,
      doc.errors.map((e) => `${at(e.pos[0])} ${e.message.split("\n")[0]}`),
    );
  }
  const locate: Locate = (path) => {
    // A field name: point at the key itself rather than its value.
    const last = path[path.length - 1];
    const parent = path.length > 0 ? doc.getIn(path.slice(0, -1), true) : doc.contents;
    if (typeof last === "string" && isMap(parent)) {
      const pair = parent.items.find((p) => (p.key as { value?: unknown } | null)?.value === last);
      const start = (pair?.key as { range?: [number, number, number] } | null)?.range?.[0];
      if (start !== undefined) return at(start);
    }
    for (let cut = path.length; cut >= 0; cut--) {
      const node = doc.getIn(path.slice(0, cut), true) as { range?: [number, number, number] } | undefined;
      if (node && (isMap(node) || isSeq(node) || node.range)) {
        const start = node.range?.[0];
        if (start !== undefined) return at(start);
      }
    }
    return `${source}:`;
  };
  return validate(doc.toJS() ?? {}, source, locate);
}

function validate(input: unknown, source: string, locate: Locate): Org {
  const parsed = Org.safeParse(input);
  if (!parsed.success) {
    throw new SandboxOrgError(
      source,
      parsed.error.issues.flatMap((i) => zodIssues(i, input).map((x) => render(x, locate))),
    );
  }
  const issues = crossCheck(parsed.data);
  if (issues.length > 0)
    throw new SandboxOrgError(
      source,
      issues.map((i) => render(i, locate)),
    );
  return parsed.data;
}

/** A zod issue in the config's own words (what is wrong and how to fix it), at its field. */
function zodIssues(issue: z.core.$ZodIssue, input: unknown): Issue[] {
  const path = issue.path.filter((p): p is string | number => typeof p !== "symbol");
  if (issue.code === "unrecognized_keys") {
    const known = keysAt(Org, path);
    return issue.keys.map((k) => {
      const close = suggest(k, known);
      const hint = close === undefined ? "remove it or check its spelling" : `did you mean "${close}"?`;
      return { path: [...path, k], message: `unknown field; ${hint}` };
    });
  }
  return issuesToProblems([issue], input, Org, WORDING).map((p) => ({ path, message: p.message }));
}

/** Only the wording of the config's problems is taken: the org file locates them itself. */
const WORDING = new ConfigSource("org.yaml", { cwd: "/" });

/** `file:line:column path: message`, as the config's problems are written. */
function render(issue: Issue, locate: Locate): string {
  const where = locate(issue.path);
  return `${where}${where ? " " : ""}${formatPath(issue.path)}: ${issue.message}`;
}

/** References between sections: owners, subscribers, folders, subgroups, duplicates. */
function crossCheck(org: Org): Issue[] {
  const issues: Issue[] = [];
  const emails = new Map<string, string>();
  const note = (path: (string | number)[], message: string) => issues.push({ path, message });
  const people = [
    ...org.users.map((u, i) => ({ u, path: ["users", i] as (string | number)[] })),
    ...org.bots.map((u, i) => ({ u, path: ["bots", i] as (string | number)[] })),
  ];
  for (const { u, path } of people) {
    const key = u.email.toLowerCase();
    if (emails.has(key))
      note([...path, "email"], `duplicate email "${u.email}" (also at ${emails.get(key)})`);
    else emails.set(key, formatPath(path));
  }
  const knownEmail = (e: string) => emails.has(e.toLowerCase());
  const humans = new Set(org.users.map((u) => u.email.toLowerCase()));
  org.bots.forEach((b, i) => {
    if (b.owner && !humans.has(b.owner.toLowerCase()))
      note(["bots", i, "owner"], `no user with email "${b.owner}" is declared under users`);
    if (b.outgoing && b.type !== "outgoing" && b.type !== "embedded")
      note(["bots", i, "outgoing"], `only bots of type outgoing or embedded take an outgoing webhook`);
  });
  const folders = new Set(org.channel_folders.map((f) => f.name));
  const groups = new Set(org.user_groups.map((g) => g.name));
  const unknownName = (n: string) =>
    !knownEmail(n) && !groups.has(n) && !SYSTEM_GROUPS.some((sg) => sg.name === n);
  const channelNames = new Set<string>();
  org.channels.forEach((c, i) => {
    if (channelNames.has(c.name.toLowerCase()))
      note(["channels", i, "name"], `duplicate channel "${c.name}"`);
    channelNames.add(c.name.toLowerCase());
    c.subscribers.forEach((s, j) => {
      if (!knownEmail(s)) note(["channels", i, "subscribers", j], `no user or bot with email "${s}"`);
    });
    if (c.folder !== undefined && !folders.has(c.folder))
      note(["channels", i, "folder"], `no channel folder named "${c.folder}" under channel_folders`);
    for (const key of CHANNEL_SETTINGS) {
      c[key]?.forEach((n, j) => {
        if (unknownName(n)) note(["channels", i, key, j], `no user, bot or user group "${n}"`);
      });
    }
  });
  const mod = org.realm.moderation_request_channel;
  if (mod !== null && !channelNames.has(mod.toLowerCase()))
    note(["realm", "moderation_request_channel"], `no channel named "${mod}" under channels`);
  org.user_groups.forEach((g, i) => {
    g.members.forEach((m, j) => {
      if (!knownEmail(m)) note(["user_groups", i, "members", j], `no user or bot with email "${m}"`);
    });
    g.subgroups.forEach((s, j) => {
      if (!groups.has(s)) note(["user_groups", i, "subgroups", j], `no user group named "${s}"`);
    });
    for (const key of ["can_manage_group", "can_add_members_group", "can_remove_members_group"] as const) {
      g[key].forEach((n, j) => {
        if (unknownName(n)) note(["user_groups", i, key, j], `no user, bot or user group "${n}"`);
      });
    }
  });
  const fields = new Map(org.custom_profile_fields.map((f) => [f.name, f]));
  org.users.forEach((u, i) => {
    for (const [name, value] of Object.entries(u.profile_data)) {
      const field = fields.get(name);
      if (!field) note(["users", i, "profile_data", name], `no custom profile field named "${name}"`);
      else if (field.type === "user" && !Array.isArray(value))
        note(["users", i, "profile_data", name], `a user field takes a list of emails`);
    }
  });
  return issues;
}
