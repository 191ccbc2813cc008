/**
 * Request parameters, read the way the server's typed_endpoint reads them: body first, then the
 * query string; `Json[...]` values parsed strictly; every name read counts as consumed so the
 * rest can be reported in `ignored_parameters_unsupported`.
 */
import { ApiError, badRequest, missingArgument } from "./api-error.ts";

type Source = Map<string, string>;

export class Params {
  private readonly consumed = new Set<string>();

  constructor(
    private readonly body: Source,
    private readonly query: Source,
  ) {}

  /** Mark a name consumed without reading it (the `client` parameter, path overrides). */
  consume(name: string): void {
    this.consumed.add(name);
  }

  /** Names sent but never read, sorted: the `ignored_parameters_unsupported` value. */
  ignored(): string[] {
    return [...new Set([...this.body.keys(), ...this.query.keys()])]
      .filter((n) => !this.consumed.has(n))
      .sort();
  }

  /** Raw text of a parameter (or one of its aliases); sending two aliases is REQUEST_CONFUSING_VAR. */
  raw(name: string, aliases: string[] = []): { value: string; as: string } | undefined {
    let found: { value: string; as: string } | undefined;
    for (const alias of [name, ...aliases]) {
      const value = this.body.get(alias) ?? this.query.get(alias);
      if (value === undefined) continue;
      if (found) {
        throw new ApiError(
          400,
          "REQUEST_CONFUSING_VAR",
          `Can't decide between '${found.as}' and '${alias}' arguments`,
          { var_name1: found.as, var_name2: alias },
        );
      }
      found = { value, as: alias };
    }
    if (found) this.consumed.add(found.as);
    return found;
  }

  /** A plain (non-JSON) string parameter. */
  str(name: string, opts: { aliases?: string[] } = {}): string | undefined {
    return this.raw(name, opts.aliases)?.value;
  }

  requiredStr(name: string, opts: { aliases?: string[] } = {}): string {
    const v = this.str(name, opts);
    if (v === undefined) throw missingArgument(name);
    return v;
  }

  /** A string that must be one of `allowed` (a Literal): otherwise "Invalid <name>". */
  literal<T extends string>(name: string, allowed: readonly T[]): T | undefined {
    const v = this.str(name);
    if (v === undefined) return undefined;
    if (!(allowed as readonly string[]).includes(v)) throw badRequest(`Invalid ${name}`);
    return v as T;
  }

  /**
   * A string the server checks with a validator of allowed values (check_string_in_validator, not
   * a Literal): its wording is the validator's ValueError, "Invalid <name>: Value error, …".
   */
  oneOf<T extends string>(name: string, allowed: readonly T[]): T | undefined {
    const v = this.str(name);
    if (v === undefined) return undefined;
    if (!(allowed as readonly string[]).includes(v)) {
      throw badRequest(`Invalid ${name}: Value error, Not in the list of possible values`);
    }
    return v as T;
  }

  /**
   * A `Json[...]` parameter's parsed value (no type check), with `intLiterals`: for each number
   * literal of its text, in order, whether it is written as an integer (`1`, `-0`), not with a
   * fraction or an exponent (`1.0`, `1e3`), which strict validation takes as a float.
   */
  json(name: string): JsonParam | undefined {
    const found = this.raw(name);
    if (!found) return undefined;
    let value: unknown;
    try {
      value = JSON.parse(found.value);
    } catch {
      throw badRequest(`${found.as} is not valid JSON`);
    }
    return { value, as: found.as, intLiterals: intLiterals(found.value) };
  }

  /** A `Json[bool]`; with `nullable`, JSON `null` reads as absent (`Json[bool] | None`). */
  bool(name: string, opts: { nullable?: boolean } = {}): boolean | undefined {
    const found = this.json(name);
    if (!found || (opts.nullable && found.value === null)) return undefined;
    if (typeof found.value !== "boolean") throw badRequest(`${name} is not a boolean`);
    return found.value;
  }

  /**
   * A `Json[int]`: a JSON integer literal; `1.0`, `1e3`, `true`, `"1"` are "not an integer".
   * `min: 0` for the server's NonNegativeInt (below it, "… is too small").
   */
  int(name: string, opts: { min?: number } = {}): number | undefined {
    const found = this.json(name);
    return found && checkInt(found.value, name, found.intLiterals[0], opts.min);
  }

  requiredInt(name: string): number {
    const v = this.int(name);
    if (v === undefined) throw missingArgument(name);
    return v;
  }

  intList(name: string, opts: { min?: number } = {}): number[] | undefined {
    const found = this.json(name);
    return found && checkIntList(found.value, name, found.intLiterals, opts.min);
  }

  stringList(name: string, opts: { nullable?: boolean } = {}): string[] | undefined {
    const found = this.json(name);
    if (!found || (opts.nullable && found.value === null)) return undefined;
    if (!Array.isArray(found.value)) throw badRequest(`${name} is not a list`);
    found.value.forEach((v, i) => {
      if (typeof v !== "string") throw badRequest(`${name}[${i}] is not a string`);
    });
    return found.value as string[];
  }
}

export type JsonParam = { value: unknown; as: string; intLiterals: boolean[] };

/**
 * A strict int: a number written as an integer literal (`literal`, from `intLiterals`); the
 * server's strict validation refuses a float even when whole (`1.0`, `1e3`). `-0` reads as 0.
 * Below `min` (a bounded type such as NonNegativeInt) the server says the parameter "is too
 * small", a BAD_REQUEST without `var_name`.
 */
export function checkInt(value: unknown, name: string, literal = true, min?: number): number {
  if (typeof value !== "number" || !Number.isInteger(value) || !literal) {
    throw badRequest(`${name} is not an integer`);
  }
  if (min !== undefined && value < min) throw badRequest(`${name} is too small`);
  return value + 0;
}

/** A list of strict ints; `literals` and `min` as in `checkInt`, each element checked in order. */
export function checkIntList(value: unknown, name: string, literals: boolean[] = [], min?: number): number[] {
  if (!Array.isArray(value)) throw badRequest(`${name} is not a list`);
  // Elements are checked in order and the first non-number throws, so element i is number literal i.
  return value.map((v, i) => checkInt(v, `${name}[${i}]`, literals[i] ?? true, min));
}

/** For each number literal of a JSON text (strings skipped), whether it has no fraction or exponent. */
function intLiterals(text: string): boolean[] {
  const out: boolean[] = [];
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === '"') {
      for (i++; i < text.length && text[i] !== '"'; i++) if (text[i] === "\\") i++;
    } else if (c === "-" || (c >= "0" && c <= "9")) {
      const start = i;
      while (i + 1 < text.length && /[-+0-9.eE]/.test(text[i + 1]!)) i++;
      out.push(/^-?\d+$/.test(text.slice(start, i + 1)));
    }
  }
  return out;
}
