/**
 * A reload from the config file: read and validate the new config and every changed module in
 * full first (any problem rejects the reload, located at its file:line:column, and the daemon
 * keeps running the old config), then apply only what changed.
 */
import { botFingerprints, loadBots } from "../bot/load-bots.ts";
import { loadConfigWithSource } from "../config/load-config.ts";
import { BothostError } from "../errors/bothost-error.ts";
import type { Daemon } from "./daemon.ts";
import { type BotIdentity, entryHash, planReload, type ReloadReport } from "./reload-plan.ts";

export async function reloadFromFile(daemon: Daemon, configPath: string): Promise<ReloadReport> {
  const { config, source } = await loadConfigWithSource(configPath);
  const prints = await botFingerprints(config, source);
  const next = new Map<string, BotIdentity>(
    Object.entries(config.bots).map(([name, bot]) => [
      name,
      { entry: entryHash(bot), module: prints.get(name)! },
    ]),
  );
  const plan = planReload({ config: daemon.config, bots: daemon.identities }, { config, bots: next });
  if (daemon.clustered && (plan.add.length > 0 || plan.remove.length > 0)) {
    throw new BothostError(
      "RELOAD_REFUSED",
      `bots added (${plan.add.join(", ") || "none"}) or removed (${plan.remove.join(", ") || "none"}): ` +
        "instances sharing bots through Redis take such changes by a rolling restart, one instance after another",
    );
  }
  for (const name of plan.restart) {
    const before = daemon.config.bots[name]?.outgoing_webhook?.path;
    const after = config.bots[name]?.outgoing_webhook?.path;
    if (before !== after) plan.needRestart.push(`bots.${name}.outgoing_webhook.path`);
  }
  for (const name of plan.add) {
    if (config.bots[name]?.outgoing_webhook) plan.needRestart.push(`bots.${name}.outgoing_webhook.path`);
  }
  const changed = new Set([...plan.add, ...plan.restart]);
  const loaded = changed.size === 0 ? [] : await loadBots(config, source, { only: changed, fresh: true });
  return daemon.applyReload(
    config,
    plan,
    loaded.map((b) => ({
      name: b.name,
      definition: b.definition as never,
      settings: b.settings,
      fingerprint: b.fingerprint,
    })),
  );
}
