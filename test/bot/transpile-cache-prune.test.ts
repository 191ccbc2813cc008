/**
 * The transpile cache forgets what no load uses: at the first transform a process makes that was
 * not cached, entries unused for 30 days, temporary files left by a killed writer and the emptied
 * folders of other jiti versions are removed; an entry a load uses is kept however old it was,
 * because the load marks it used.
 */
import { mkdir, mkdtemp, readdir, rm, stat, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { cachedTransform, UNUSED_FOR_MS } from "../../src/bot/transpile-cache.ts";

const made: string[] = [];
afterEach(async () => {
  await Promise.all(made.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

/** A cache laid out as `transpileCacheDir` makes it: `<base>/jiti-<version>/`. */
async function cacheOf(versions: string[]): Promise<string[]> {
  const base = await mkdtemp(path.join(tmpdir(), "bothost-prune-"));
  made.push(base);
  const dirs = versions.map((version) => path.join(base, `jiti-${version}`));
  for (const dir of dirs) await mkdir(dir);
  return dirs;
}

async function entry(dir: string, name: string, ageMs: number): Promise<string> {
  const file = path.join(dir, name);
  await writeFile(file, "module.exports = 1;");
  const at = (Date.now() - ageMs) / 1000;
  await utimes(file, at, at);
  return file;
}

const transform = (source: string) => ({ code: `/* made */ ${source}` });
const DAY = 24 * 60 * 60 * 1000;

describe("the transpile cache's pruning", () => {
  it("removes old entries, torn temporary files and other versions' emptied folders at a miss", async () => {
    const [current, older, busy] = await cacheOf(["2.6.1", "2.4.0", "2.5.0"]);
    const stale = await entry(current!, "a.js", UNUSED_FOR_MS + DAY);
    const fresh = await entry(current!, "b.js", 2 * DAY);
    const torn = await entry(current!, "c.js.123-abcd.tmp", 2 * 60 * 60 * 1000);
    const writing = await entry(current!, "d.js.124-abcd.tmp", 1000);
    await entry(older!, "e.js", UNUSED_FOR_MS + DAY);
    const usedElsewhere = await entry(busy!, "f.js", DAY);
    await entry(busy!, "g.js", UNUSED_FOR_MS + DAY);

    const result = cachedTransform(current!, { source: "const x = 1;", filename: "/bot.ts" }, () =>
      transform("const x = 1;"),
    );

    expect(result.code).toBe("/* made */ const x = 1;");
    const left = (await readdir(current!)).sort();
    expect(left).toContain(path.basename(fresh));
    expect(left).toContain(path.basename(writing));
    expect(left).not.toContain(path.basename(stale));
    expect(left).not.toContain(path.basename(torn));
    expect(left.filter((name) => name.endsWith(".js"))).toHaveLength(2);
    const base = path.dirname(current!);
    expect((await readdir(base)).sort()).toEqual(["jiti-2.5.0", "jiti-2.6.1"]);
    expect(await readdir(busy!)).toEqual([path.basename(usedElsewhere)]);
  });

  it("marks an entry used when a load hits it, so pruning keeps it", async () => {
    const [dir] = await cacheOf(["2.6.1"]);
    const options = { source: "export const y = 2;", filename: "/other.ts" };
    let calls = 0;
    cachedTransform(dir!, options, () => {
      calls++;
      return transform(options.source);
    });
    const [name] = await readdir(dir!);
    const file = path.join(dir!, name!);
    const old = (Date.now() - (UNUSED_FOR_MS - DAY)) / 1000;
    await utimes(file, old, old);

    const hit = cachedTransform(dir!, options, () => {
      calls++;
      return transform(options.source);
    });

    expect(hit.code).toBe("/* made */ export const y = 2;");
    expect(calls).toBe(1);
    expect(Date.now() - (await stat(file)).mtimeMs).toBeLessThan(DAY);
  });
});
