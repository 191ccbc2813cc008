/**
 * Fault injection for tests of client resilience: canned failures, delays, dropped connections,
 * 429s and polls that never answer. Each applies to the next matching requests only.
 */

/** Which requests a fault applies to: API paths like "/events" (a prefix of segments) or a RegExp. */
export type PathFilter = (string | RegExp)[] | undefined;

export interface FailOptions {
  status: number;
  /**
   * JSON body to send; by default the real server's for the status: its proxy's HTML page for 502,
   * 503 and 504, `{"result":"error","msg":"Internal server error"}` (no code) for 500, else an error
   * with code BAD_REQUEST.
   */
  body?: unknown;
  /** Send an HTML body instead, like a proxy's 502 page. */
  nonJson?: true;
  /** Cut the connection instead of answering (`status` is then only logged). */
  reset?: true;
  /**
   * Fail after acting: the request is carried out (a message is stored, its events go out),
   * then the answer is replaced by the failure, as when a proxy times out after the server
   * committed. Default: fail before acting (nothing happens on the server).
   */
  after?: true;
  paths?: (string | RegExp)[];
  /** Only requests of these methods ("POST", "GET"…); default every method. */
  methods?: string[];
}

interface Counted<T> {
  remaining: number;
  spec: T;
}

/** Use up one turn of the first entry with turns left whose spec `matches`. */
function take<T>(list: Counted<T>[], matches: (spec: T) => boolean = () => true): T | undefined {
  const hit = list.find((c) => c.remaining > 0 && matches(c.spec));
  if (hit && --hit.remaining === 0) list.splice(list.indexOf(hit), 1);
  return hit?.spec;
}

export function pathMatches(filter: PathFilter, apiPath: string): boolean {
  if (!filter || filter.length === 0) return true;
  return filter.some((p) =>
    typeof p === "string"
      ? apiPath === p || apiPath.startsWith(p.endsWith("/") ? p : `${p}/`)
      : p.test(apiPath),
  );
}

export class Faults {
  private fails: Counted<FailOptions>[] = [];
  private delays: { ms: number; paths: PathFilter; methods: string[] | undefined; after: boolean }[] = [];
  private resets: Counted<true>[] = [];
  private limits: Counted<number>[] = [];
  private hangs: Counted<true>[] = [];
  /** Requests held by a delay now: each one's release (its timer cleared). */
  private readonly held = new Set<() => void>();
  /** Called when a poll is hung (the server records it and signals a state change). */
  onHang: () => void = () => {};
  /** Called when a request starts or stops being held by a delay (a state change). */
  onHold: () => void = () => {};

  failNext(n: number, spec: FailOptions): void {
    this.fails.push({ remaining: n, spec });
  }

  /**
   * Delay every matching request by `ms` until `delay(0)` clears all delays; the clear also
   * lets the requests held at that moment go on at once. `after`: the request is carried out
   * first and its answer held, as when the server committed and the answer is slow to come back.
   */
  delay(ms: number, paths?: PathFilter, methods?: string[], after = false): void {
    if (ms > 0) {
      this.delays.push({ ms, paths, methods, after });
      return;
    }
    this.delays = [];
    for (const release of [...this.held]) release();
  }

  /** How many requests a delay holds now. */
  get delayed(): number {
    return this.held.size;
  }

  /** Resolves after `ms`, or at once when `delay(0)` clears the delays meanwhile. */
  hold(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const release = () => {
        clearTimeout(timer);
        this.held.delete(release);
        this.onHold();
        resolve();
      };
      const timer = setTimeout(release, ms);
      this.held.add(release);
      this.onHold();
    });
  }

  resetConnections(n: number): void {
    this.resets.push({ remaining: n, spec: true });
  }

  rateLimitNext(n: number, retryAfter: number): void {
    this.limits.push({ remaining: n, spec: retryAfter });
  }

  hangNextPoll(): void {
    this.hangs.push({ remaining: 1, spec: true });
  }

  takeReset(): boolean {
    return take(this.resets) ?? false;
  }

  /** The delay of a matching request before it is served, or (`after`) of its answer. */
  delayFor(apiPath: string, method: string, after = false): number {
    return this.delays
      .filter(
        (d) => d.after === after && pathMatches(d.paths, apiPath) && (d.methods?.includes(method) ?? true),
      )
      .reduce((sum, d) => sum + d.ms, 0);
  }

  takeFailure(apiPath: string, method: string): FailOptions | undefined {
    return take(
      this.fails,
      (spec) => pathMatches(spec.paths, apiPath) && (spec.methods?.includes(method) ?? true),
    );
  }

  takeRateLimit(): number | undefined {
    return take(this.limits);
  }

  takeHang(): boolean {
    return take(this.hangs) ?? false;
  }
}
