/**
 * `--data FILE`: the sandbox state as JSON, loaded at start and written atomically (temp file +
 * rename) shortly after each change and on stop. Queues are not persisted (clients re-register).
 */
import { existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { BothostError } from "../errors/bothost-error.ts";
import type { SandboxData } from "./state/data.ts";

export class SandboxDataError extends BothostError<"SANDBOX_DATA_INVALID"> {
  constructor(file: string, reason: string) {
    super(
      "SANDBOX_DATA_INVALID",
      `Cannot load sandbox data from ${file}: ${reason}. Delete the file to start fresh.`,
    );
    this.name = "SandboxDataError";
  }
}

export function loadData(file: string): SandboxData | undefined {
  if (!existsSync(file)) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, "utf8"));
  } catch (err) {
    throw new SandboxDataError(file, (err as Error).message);
  }
  const data = parsed as Partial<SandboxData>;
  if (data.version !== 1 || !Array.isArray(data.users) || !Array.isArray(data.messages)) {
    throw new SandboxDataError(file, "not a sandbox data file (version 1)");
  }
  return parsed as SandboxData;
}

export function saveData(file: string, data: SandboxData): void {
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify(data), { mode: 0o600 });
  renameSync(tmp, file);
}

/** Save at most every `ms` while changes keep coming; `flush()` writes now. */
export class DebouncedSaver {
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly file: string,
    private readonly getData: () => SandboxData,
    private readonly ms = 200,
  ) {}

  schedule(): void {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      saveData(this.file, this.getData());
    }, this.ms);
    this.timer.unref?.();
  }

  flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    saveData(this.file, this.getData());
  }
}
