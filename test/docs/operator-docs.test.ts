/**
 * The operator's guides (docs/operations) stand on their own: a link into docs/internals is only
 * ever offered "for how it works", what they point at with "delivery guarantees" is a link (to the
 * operator's page on them), and every link of theirs reaches a file and, when it names one, a
 * heading of that file. Each warning and error the webhook code logs is named, as it is logged,
 * in running.md or the webhooks guide.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { repoRoot } from "../support/cli.ts";

const OPERATIONS = path.join(repoRoot, "docs/operations");
const guides = readdirSync(OPERATIONS)
  .filter((f) => f.endsWith(".md"))
  .sort();

/** A file's lines outside code blocks, numbered from 1. */
function prose(file: string): { line: number; text: string }[] {
  let inCode = false;
  const out: { line: number; text: string }[] = [];
  for (const [i, text] of readFileSync(file, "utf8").split("\n").entries()) {
    if (/^\s*```/.test(text)) inCode = !inCode;
    else if (!inCode) out.push({ line: i + 1, text });
  }
  return out;
}

/** The anchors of a Markdown file's headings, as GitHub makes them. */
function anchors(file: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const { text } of prose(file)) {
    const heading = /^#{1,6}\s+(.*)$/.exec(text)?.[1];
    if (heading === undefined) continue;
    const slug = heading
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{N} _-]/gu, "")
      .replace(/ /g, "-");
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    out.add(n === 0 ? slug : `${slug}-${n}`);
  }
  return out;
}

/** Each inline link of a guide: where it is, the text before it (from the line above on), its target. */
function links(guide: string) {
  const lines = prose(path.join(OPERATIONS, guide));
  return lines.flatMap(({ line, text }, i) =>
    [...text.matchAll(/\[([^\]]*)\]\(([^)\s]+)\)/g)].map((m) => ({
      at: `docs/operations/${guide}:${line}`,
      before: `${lines[i - 1]?.text ?? ""} ${text.slice(0, m.index)}`,
      label: m[1]!,
      target: m[2]!,
    })),
  );
}

describe("the operator's guides", () => {
  it("link into the internals only for how it works", () => {
    const bare = guides
      .flatMap(links)
      .filter((l) => l.target.includes("internals/") && !/for how it works[^.]*$/i.test(l.before))
      .map((l) => `${l.at}: ${l.target}`);
    expect(bare).toEqual([]);
  });

  it("name the delivery guarantees with a link to the operator's page", () => {
    const unlinked = guides.flatMap((guide) =>
      prose(path.join(OPERATIONS, guide))
        .filter(({ text }) => !/^#/.test(text))
        .filter(({ text }) => /delivery guarantees/i.test(text.replace(/\[[^\]]*\]\([^)]*\)/g, "")))
        .map(({ line }) => `docs/operations/${guide}:${line}`),
    );
    expect(unlinked).toEqual([]);
    const named = guides.flatMap(links).filter((l) => /delivery guarantees/i.test(l.label));
    expect(named.filter((l) => !/^(delivery\.md|\.\.\/internals\/delivery\.md)(#|$)/.test(l.target))).toEqual(
      [],
    );
  });

  it("link to files and headings that exist", () => {
    const broken = guides.flatMap((guide) =>
      links(guide)
        .filter((l) => !/^[a-z]+:/.test(l.target))
        .filter((l) => {
          const [file, anchor] = l.target.split("#") as [string, string | undefined];
          const target = file === "" ? path.join(OPERATIONS, guide) : path.resolve(OPERATIONS, file);
          if (!existsSync(target)) return true;
          return anchor !== undefined && target.endsWith(".md") && !anchors(target).has(anchor);
        })
        .map((l) => `${l.at}: ${l.target}`),
    );
    expect(broken).toEqual([]);
  });

  it("name each warning and error line of the webhook code as it is logged", () => {
    const dir = path.join(repoRoot, "src/webhook");
    const logged = new Set<string>();
    for (const file of readdirSync(dir).filter((f) => f.endsWith(".ts"))) {
      const code = readFileSync(path.join(dir, file), "utf8");
      for (const call of code.matchAll(/\b\w*log\.(?:error|warn)\(([^;]*?)\);/gs)) {
        for (const literal of (call[1] ?? "").matchAll(/"([^"\\]{8,})"/g)) logged.add(literal[1] ?? "");
      }
    }
    expect(logged.size).toBeGreaterThan(5);
    const docs = ["docs/operations/running.md", "docs/guide/webhooks.md"]
      .map((f) => readFileSync(path.join(repoRoot, f), "utf8"))
      .join("\n")
      .replace(/\s+/g, " ");
    expect([...logged].filter((msg) => !docs.includes(`\`${msg}`))).toEqual([]);
  });
});
