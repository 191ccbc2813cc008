/**
 * What a schema (zod 4's `_zod.def`, zod 3's `_def`) allows where a value is wrong: the keys of
 * the object at a path, through optional, default, pipe and union wrappers. The config's
 * problems and the sandbox's org file name a misspelt key's likely meaning from these.
 */

/** A zod 4 (`_zod.def`) or zod 3 (`_def`) schema's definition, as far as the messages need it. */
export interface SchemaDef {
  type?: string;
  shape?: Record<string, unknown> | (() => Record<string, unknown>);
  innerType?: unknown;
  in?: unknown;
  out?: unknown;
  valueType?: unknown;
  element?: unknown;
  catchall?: unknown;
  unknownKeys?: string;
  options?: unknown[];
}

/** Through optional/default/pipe wrappers to the schema inside, in zod 4 (`_zod.def`) or 3 (`_def`). */
export function unwrapSchema(node: unknown): SchemaDef | undefined {
  let current = node;
  for (let i = 0; i < 20 && current; i++) {
    const holder = current as { _zod?: { def?: SchemaDef }; _def?: SchemaDef };
    const def = holder._zod?.def ?? holder._def;
    if (def === undefined) return undefined;
    const inner = innerOf(def);
    if (def.options !== undefined) return def.options.map(unwrapSchema).find((o) => o?.shape) ?? def;
    if (def.shape !== undefined || inner === undefined) return def;
    current = inner;
  }
  return undefined;
}

/** The schema a wrapper holds: a pipe's input, or its output after a `z.preprocess` step. */
export function innerOf(def: SchemaDef): unknown {
  if (def.innerType !== undefined) return def.innerType;
  const first = def.in as { _zod?: { def?: SchemaDef } } | undefined;
  return first?._zod?.def?.type === "transform" ? def.out : def.in;
}

/** An object schema's fields (a function in zod 3). */
export function shapeOf(def: SchemaDef | undefined): Record<string, unknown> | undefined {
  return typeof def?.shape === "function" ? def.shape() : def?.shape;
}

/** The keys an object schema allows at `at`, to list them where an unknown one is found. */
export function keysAt(schema: unknown, at: readonly (string | number)[]): string[] {
  let node = schema;
  for (const segment of at) node = childAt(node, segment);
  return Object.keys(shapeOf(unwrapSchema(node)) ?? {});
}

/** The schema of a field or item of `node`; in a union, of the first form that has it. */
function childAt(node: unknown, segment: string | number, depth = 0): unknown {
  const holder = node as { _zod?: { def?: SchemaDef }; _def?: SchemaDef } | undefined;
  const def = holder?._zod?.def ?? holder?._def;
  if (def === undefined || depth > 20) return undefined;
  if (def.options !== undefined) {
    for (const option of def.options) {
      const child = childAt(option, segment, depth + 1);
      if (child !== undefined) return child;
    }
    return undefined;
  }
  const shape = shapeOf(def);
  if (shape !== undefined) return Object.hasOwn(shape, segment) ? shape[segment] : undefined;
  if (def.valueType !== undefined || def.element !== undefined) return def.valueType ?? def.element;
  const inner = innerOf(def);
  return inner === undefined ? undefined : childAt(inner, segment, depth + 1);
}
