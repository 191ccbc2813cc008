// biome-ignore-all lint/suspicious/noTemplateCurlyInString: these strings show users the ${VAR} syntax.
/**
 * `${VAR}` and `${VAR:-default}` in config strings, read from the environment.
 */

/** The result of interpolating one string. */
export interface Interpolation {
  /** The string with every reference replaced. */
  readonly value: string;
  /** The variables it referenced, in order (names only: values are never kept here). */
  readonly variables: readonly string[];
  /** What went wrong, each message saying how to fix it. Empty when the string is fine. */
  readonly problems: readonly string[];
}

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const WITH_DEFAULT = /^([A-Za-z_][A-Za-z0-9_]*):-(.*)$/s;
const OTHER_FORM = /^[A-Za-z_][A-Za-z0-9_]*(?::?[-?+=])/;

/**
 * Replaces `${VAR}` and `${VAR:-default}` with values from `env`, in one pass.
 *
 * Substituted values are never scanned again, so a value that itself contains `${…}` stays as it
 * is. `$${` is a literal `${`. `:-` uses the default when the variable is unset or empty. Messages
 * name variables but never contain their values.
 *
 * @example
 * ```ts
 * interpolate("${HOST:-localhost}:${PORT}", { PORT: "8080" }).value; // "localhost:8080"
 * interpolate("cost: $${PRICE}", {}).value;                          // "cost: ${PRICE}"
 * ```
 */
export function interpolate(text: string, env: Readonly<Record<string, string | undefined>>): Interpolation {
  let value = "";
  const variables: string[] = [];
  const problems: string[] = [];
  let i = 0;
  while (i < text.length) {
    if (text.startsWith("$${", i)) {
      value += "${";
      i += 3;
      continue;
    }
    if (!text.startsWith("${", i)) {
      value += text[i];
      i += 1;
      continue;
    }
    const close = text.indexOf("}", i + 2);
    if (close === -1) {
      problems.push("has a ${ without a closing }: close it, or write $${ for a literal ${");
      value += text.slice(i);
      break;
    }
    const inner = text.slice(i + 2, close);
    i = close + 1;
    const withDefault = WITH_DEFAULT.exec(inner);
    const name = withDefault ? withDefault[1]! : inner;
    const fallback = withDefault ? withDefault[2]! : undefined;
    if (!NAME.test(name)) {
      problems.push(
        OTHER_FORM.test(inner)
          ? "uses an unsupported ${…} form: only ${NAME} and ${NAME:-default} are supported"
          : "has a ${…} that is not a variable name: names are letters, digits and _, not starting with a digit (write $${ for a literal ${)",
      );
      continue;
    }
    if (fallback?.includes("${")) {
      problems.push(`nests a \${…} inside the default of ${name}: defaults are plain text`);
      continue;
    }
    variables.push(name);
    const set = env[name];
    if (set !== undefined && !(set === "" && fallback !== undefined)) value += set;
    else if (fallback !== undefined) value += fallback;
    else
      problems.push(
        `environment variable ${name} is not set: set it before starting bothost, or write \${${name}:-default} to give a default`,
      );
  }
  return { value, variables, problems };
}
