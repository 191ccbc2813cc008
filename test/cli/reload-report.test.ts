/**
 * What `bothost reload` prints of a reload on an instance of a cluster: a changed bot another
 * instance runs is told apart from one no instance is known to run (its lease free: a bot that
 * failed to start on every instance, reloaded with a fix), which an instance starts next.
 */
import { expect, it } from "vitest";
import { formatReport } from "../../src/cli/reload.ts";
import type { ReloadReport } from "../../src/daemon/reload-plan.ts";

const report = (over: Partial<ReloadReport>): ReloadReport => ({
  add: [],
  remove: [],
  restart: [],
  keep: [],
  needRestart: [],
  failed: [],
  ...over,
});

it("says which changed bots another instance runs and which none is known to run", () => {
  const text = formatReport(
    report({
      restart: ["alpha", "beta", "gamma"],
      notHere: ["alpha", "beta"],
      runsNowhere: ["alpha"],
      runsOn: { beta: "host:12:abc" },
    }),
  );
  expect(text.split("\n")).toEqual([
    "Restarted: gamma",
    "Loaded, not running on this instance (the instance running it keeps its version until reloaded too: SIGHUP that process, or bothost reload where its admin socket is): beta (on instance host:12:abc)",
    "Loaded, run by no instance known now (the next instance to find its lease free starts it): alpha",
    "",
  ]);
});
