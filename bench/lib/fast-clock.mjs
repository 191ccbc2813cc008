// Preloaded (`--import`) into the busy-organization bench's processes, the sandbox's and the
// daemon's alike: time runs BENCH_CLOCK_SPEED times faster from BENCH_CLOCK_T0 (ms since the
// epoch, the same in every process), so an hour of traffic takes a fraction of one. Date.now
// and the global timers are scaled; performance.now and the Date constructor are not.
const speed = Number(process.env.BENCH_CLOCK_SPEED ?? "1");
const t0 = Number(process.env.BENCH_CLOCK_T0 ?? "0");
if (speed > 0 && speed !== 1 && t0 > 0) {
  const realNow = Date.now.bind(Date);
  Date.now = () => Math.floor(t0 + (realNow() - t0) * speed);
  const { setTimeout: realTimeout, setInterval: realInterval } = globalThis;
  const scaled = (ms) => Math.max(0, (Number(ms) || 0) / speed);
  globalThis.setTimeout = Object.assign(
    (fn, ms, ...args) => realTimeout(fn, scaled(ms), ...args),
    realTimeout,
  );
  globalThis.setInterval = Object.assign(
    (fn, ms, ...args) => realInterval(fn, Math.max(1, scaled(ms)), ...args),
    realInterval,
  );
}
