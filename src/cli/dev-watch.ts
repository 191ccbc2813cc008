/**
 * What `bothost dev` watches: the config file, the sandbox's org file, each bot's module and the
 * local files the module imports (the files a reload fingerprints, `moduleSources`). One watcher per folder, reporting
 * only the files wanted there; the set is worked out again after each reload, so a file a bot
 * starts importing is watched from then on and one it stops importing is not.
 */
import { type FSWatcher, watch } from "node:fs";
import path from "node:path";
import { moduleSources } from "../bot/load-bots.ts";
import { botModuleFile } from "../bot/load-module.ts";
import type { Config } from "../config/schema.ts";
import { untilStopped } from "./args.ts";

/** The files whose edit reloads: the config file, then each bot's sources (absolute paths). */
export async function devSources(configPath: string, config: Config): Promise<string[]> {
  const configFile = path.resolve(configPath);
  const files = new Set([configFile]);
  for (const [name, bot] of Object.entries(config.bots)) {
    const entry = await botModuleFile(bot.module, {
      configDir: path.dirname(configFile),
      botName: name,
    }).catch(() => undefined);
    // A module that cannot be found: its folder is still watched, for the file to appear.
    if (entry === undefined) {
      files.add(path.resolve(path.dirname(configFile), bot.module));
      continue;
    }
    for (const file of (await moduleSources(entry)).files) files.add(file);
  }
  for (const org of orgFiles(config)) files.add(org);
  return [...files];
}

/** The org files of the embedded sandbox (absolute): read once, when the sandbox starts. */
export function orgFiles(config: Config): Set<string> {
  const orgs = Object.values(config.bots).map((b) => b.server.sandbox?.org);
  return new Set(orgs.filter((o): o is string => o !== undefined).map((o) => path.resolve(o)));
}

export class SourceWatch {
  readonly #folders = new Map<string, { watcher: FSWatcher; names: Set<string> }>();
  #closed = false;

  constructor(
    /** Called with the absolute path of the file that changed. */
    private readonly onChange: (file: string) => void,
    /** A folder that cannot be watched (gone, or no permission): edits in it do not reload. */
    private readonly onUnwatchable: (folder: string) => void,
  ) {}

  /**
   * Watch exactly `files` (absolute paths) from now on. After `close` it does nothing: a set
   * worked out while dev was stopping must not open watchers that keep the process alive.
   */
  set(files: Iterable<string>): void {
    if (this.#closed) return;
    const wanted = new Map<string, Set<string>>();
    for (const file of files) {
      const folder = path.dirname(file);
      const names = wanted.get(folder) ?? new Set<string>();
      wanted.set(folder, names.add(path.basename(file)));
    }
    for (const [folder, watched] of this.#folders) {
      if (wanted.has(folder)) continue;
      watched.watcher.close();
      this.#folders.delete(folder);
    }
    for (const [folder, names] of wanted) {
      const watched = this.#folders.get(folder);
      if (watched) {
        watched.names = names;
        continue;
      }
      try {
        const entry = { names, watcher: undefined as unknown as FSWatcher };
        entry.watcher = watch(folder, (_event, name) => {
          if (name !== null && entry.names.has(String(name))) this.onChange(path.join(folder, String(name)));
        });
        this.#folders.set(folder, entry);
      } catch {
        this.onUnwatchable(folder);
      }
    }
  }

  close(): void {
    this.#closed = true;
    for (const { watcher } of this.#folders.values()) watcher.close();
    this.#folders.clear();
  }
}

/**
 * Resolves true once one of `files` (absolute paths) changed and its events settled for
 * `settleMs`; false at Ctrl-C (SIGINT or SIGTERM) first. Nothing is watched once it resolves.
 */
export function nextEdit(files: readonly string[], settleMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const done = new AbortController();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const end = (edited: boolean) => {
      clearTimeout(timer);
      watching.close();
      if (!done.signal.aborted) done.abort();
      resolve(edited);
    };
    const watching = new SourceWatch(
      () => {
        clearTimeout(timer);
        timer = setTimeout(() => end(true), settleMs);
      },
      (folder) =>
        process.stderr.write(`bothost dev: cannot watch ${folder}: edits to the files in it are not seen\n`),
    );
    watching.set(files);
    // Aborting it (after an edit) removes its signal listeners; resolving twice changes nothing.
    void untilStopped(done.signal).then(() => end(false));
  });
}
