/**
 * The child side of bench/lib/child.ts: answer each `{ id, op, ...args }` request from the parent
 * with `{ id, result }` or `{ id, error }`, then say `{ type: "ready", ...ready }`.
 */
// biome-ignore lint/suspicious/noExplicitAny: each op reads its own arguments from the request.
type Op = (args: any) => Promise<unknown>;

export function serveOps(ops: Record<string, Op>, ready: Record<string, unknown>): void {
  process.on("message", async (raw) => {
    const msg = raw as { id: number; op: string } & Record<string, unknown>;
    try {
      const op = ops[msg.op];
      if (!op) throw new Error(`unknown op ${msg.op}`);
      process.send?.({ id: msg.id, result: await op(msg) });
    } catch (err) {
      process.send?.({ id: msg.id, error: (err as Error).message });
    }
  });
  process.send?.({ type: "ready", ...ready });
  process.on("disconnect", () => process.exit(0));
}
