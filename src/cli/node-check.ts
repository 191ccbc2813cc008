/**
 * The Node.js lines bothost runs on, each from its oldest release, as package.json's `engines`
 * declares them (a test holds the two together). The CLI checks them before anything else runs:
 * an older Node.js (a distribution's own package, a unit's `/usr/bin/node`) would otherwise fail
 * deep in a command, on a global or an API it lacks, with a stack trace, and a service manager
 * would restart it in a loop.
 */
export const NODE_LINES: readonly { major: number; minor: number; later?: true }[] = [
  { major: 20, minor: 19 },
  { major: 22, minor: 12 },
  { major: 24, minor: 0, later: true },
];

/** The lines in words: "20.19 or a later 20, 22.12 or a later 22, or 24 and later". */
export function supportedLines(): string {
  const words = NODE_LINES.map((l) =>
    l.later ? `${l.major} and later` : `${l.major}.${l.minor} or a later ${l.major}`,
  );
  return `${words.slice(0, -1).join(", ")}, or ${words.at(-1)}`;
}

/** Why bothost does not run on Node.js `version` (as `process.versions.node` gives it), or undefined when it does. */
export function unsupportedNode(version: string, execPath = ""): string | undefined {
  const [major = Number.NaN, minor = Number.NaN] = version.split(".").map(Number);
  const line = NODE_LINES.find((l) => l.major === major || (l.later === true && major > l.major));
  if (line !== undefined && (major > line.major || minor >= line.minor)) return undefined;
  const where = execPath === "" ? "" : ` (${execPath})`;
  return `Node.js ${version}${where} is not supported: bothost runs on Node.js ${supportedLines()}`;
}
