/**
 * The order test files start in: those that run whole processes and wait on them (the soak,
 * end-to-end, cluster and CLI files, the docs' type-check) first, then the rest as vitest orders
 * them (larger files first when it has no timings, as on a fresh clone). Started last, one of the
 * long files would run alone at the end while the other workers sat idle; started first, the many
 * short files fill the workers around them.
 */
import { BaseSequencer, type TestSpecification } from "vitest/node";

const LONG_FIRST = [
  /\/test\/soak\//,
  /\/test\/e2e\//,
  /\/test\/cluster\//,
  /\/test\/docs\/samples\.test\.ts$/,
  /\/test\/events\/busy-org\.test\.ts$/,
  /\/test\/cli\//,
];

const rank = (file: TestSpecification) => {
  const at = LONG_FIRST.findIndex((pattern) => pattern.test(file.moduleId.replaceAll("\\", "/")));
  return at < 0 ? LONG_FIRST.length : at;
};

export default class LongFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const order = new Map(sorted.map((file, i) => [file, i]));
    return sorted.sort((a, b) => rank(a) - rank(b) || order.get(a)! - order.get(b)!);
  }
}
