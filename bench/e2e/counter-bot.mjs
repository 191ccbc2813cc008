// The bot of the end-to-end bench: a handler that only counts message events. Once it has seen
// BENCH_EVENTS of them it says so on stdout and ends the process: the round is timed from
// spawning `bothost run` to here; the process's CPU time so far (µs) is printed with it.
const total = Number(process.env.BENCH_EVENTS);

export default {
  events: ["message"],
  setup(bot) {
    let seen = 0;
    bot.on("message", () => {
      seen++;
      if (seen === total) {
        const cpu = process.cpuUsage();
        process.stdout.write(`cpu ${cpu.user + cpu.system}\ndone ${seen}\n`);
        process.exit(0);
      }
    });
  },
};
