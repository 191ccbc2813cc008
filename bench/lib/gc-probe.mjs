// Preloaded into a bench daemon with --expose-gc (`--import`): on SIGUSR2 it runs full
// collections, then prints one JSON line with what the process holds after them.
process.on("SIGUSR2", () => {
  globalThis.gc?.();
  globalThis.gc?.();
  const m = process.memoryUsage();
  process.stdout.write(
    `${JSON.stringify({ msg: "bench gc", rss: m.rss, heapUsed: m.heapUsed, heapTotal: m.heapTotal, external: m.external })}\n`,
  );
});
