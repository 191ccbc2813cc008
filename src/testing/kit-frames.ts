/**
 * What a test sees of the kit's errors: the stack starts at the test's own call. The kit's frames
 * (runBot, ask, the sandbox's checks) say nothing about what to change in the test, and a test
 * runner prints them all above the test's line. A JavaScript error of the kit's own (a TypeError,
 * a RangeError…) is a bug of the kit's, and keeps its whole stack for the report.
 */
import { fileURLToPath } from "node:url";
import { BothostError } from "../errors/bothost-error.ts";
import type { Sandbox } from "../sandbox/types.ts";

/**
 * The folders of bothost's code: dist/, and src/, where a test runner's source maps point the
 * frames of dist/ when the package ships them.
 */
const CODE_MARKS = ["dist/", "src/"].flatMap((folder) => {
  const url = new URL(`../../${folder}`, import.meta.url);
  return [url.href, fileURLToPath(url)];
});

const BUGS = [TypeError, RangeError, ReferenceError, SyntaxError, EvalError, URIError];

/** A stack line (a frame) in bothost's own code. */
function kitFrame(line: string): boolean {
  return CODE_MARKS.some((mark) => line.includes(mark));
}

/** `err` with its stack's kit frames taken out (the error itself, changed), when it is a test's mistake or an outcome. */
export function withoutKitFrames(err: unknown): unknown {
  if (!(err instanceof Error) || BUGS.some((kind) => err.constructor === kind)) return err;
  // A cause of bothost's own (a setup's misuse of the bot API, told where the bot's code made it).
  if (err.cause instanceof BothostError && err.cause !== err) withoutKitFrames(err.cause);
  else if (err.cause instanceof Error && err.cause !== err) withoutKitCallers(err.cause);
  const lines = (err.stack ?? "").split("\n");
  // The kit's frames, and the built-ins they called (`Array.map`, `node:…`) above the test's.
  let outside = false;
  const kept = lines.filter((line) => {
    if (!/^\s+at /.test(line)) return true;
    if (kitFrame(line) || (!outside && /\((<anonymous>|node:[^)]*)\)$|at node:/.test(line))) return false;
    outside = true;
    return true;
  });
  // Nothing of the test's left (a timer's error): the kit's frames are all there is to show.
  if (kept.length === lines.length || !outside) return err;
  err.stack = kept.join("\n");
  return err;
}

/**
 * An error of the test's own code kept as a cause (what a bot's setup threw), with the kit's frames
 * that called that code taken off the end of its stack: a test runner prints a cause's stack, and
 * how bothost came to run the setup says nothing about what to change. One thrown in the kit itself
 * (its top frame the kit's) keeps its stack.
 */
function withoutKitCallers(err: Error): void {
  const lines = (err.stack ?? "").split("\n");
  const first = lines.findIndex((line) => /^\s+at /.test(line));
  if (first < 0 || kitFrame(lines[first]!)) return;
  let end = lines.length;
  while (end > first + 1 && (kitFrame(lines[end - 1]!) || /\(node:[^)]*\)$|at node:/.test(lines[end - 1]!)))
    end--;
  err.stack = lines.slice(0, end).join("\n");
}

/** `object` with each of its functions' errors (thrown, or the promise's rejection) trimmed as {@link withoutKitFrames}. */
export function kitFacing<T extends object>(object: T): T {
  const facing = { ...object } as Record<string, unknown>;
  for (const [key, value] of Object.entries(object)) {
    if (typeof value === "function") facing[key] = trimmed(value, object);
  }
  return facing as T;
}

/**
 * `sandbox` as a test's fixture hands it out: its `control`'s calls trimmed as {@link kitFacing}
 * (a control call's mistake, an email the org lacks, is shown at the test's line, not among the
 * sandbox's frames); its other members, and `control`'s values (`requests`), are the sandbox's own.
 */
export function kitFacingSandbox(sandbox: Sandbox): Sandbox {
  const control = new Proxy(sandbox.control, {
    get: (target, key) => {
      const value = Reflect.get(target, key, target);
      return typeof value === "function" ? trimmed(value, target) : value;
    },
  });
  return new Proxy(sandbox, {
    get: (target, key) => {
      if (key === "control") return control;
      const value = Reflect.get(target, key, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

/** `fn` called on `self`, its errors (thrown, or the promise's rejection) trimmed as {@link withoutKitFrames}. */
function trimmed(fn: (...args: unknown[]) => unknown, self: object) {
  return (...args: unknown[]) => {
    try {
      const result = fn.apply(self, args);
      return result instanceof Promise
        ? result.catch((err: unknown) => {
            throw withoutKitFrames(err);
          })
        : result;
    } catch (err) {
      throw withoutKitFrames(err);
    }
  };
}
