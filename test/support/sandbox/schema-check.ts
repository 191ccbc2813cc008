/**
 * A small checker for the OpenAPI 3.0 schema subset the API description uses: type, properties,
 * required, items, oneOf/anyOf/allOf, nullable, enum, additionalProperties, $ref.
 * Hand-written instead of adding ajv: the subset is small and OpenAPI's `nullable` is not JSON
 * Schema, so ajv would need a conversion pass anyway.
 */

export type Schema = Record<string, unknown>;

export interface SchemaIssue {
  path: string;
  message: string;
}

export class SchemaChecker {
  constructor(private readonly components: Record<string, Schema>) {}

  resolve(schema: Schema): Schema {
    let s = schema;
    for (let i = 0; i < 20 && typeof s.$ref === "string"; i++) {
      const name = (s.$ref as string).split("/").pop()!;
      s = this.components[name] ?? {};
    }
    return s;
  }

  check(value: unknown, schema: Schema, path = "$"): SchemaIssue[] {
    const s = this.resolve(schema);
    if (value === null) {
      if (s.nullable === true || Object.keys(s).length === 0) return [];
      if (s.allOf || s.oneOf || s.anyOf) return this.combinators(value, s, path);
      if (s.type === undefined && s.properties === undefined) return [];
      return [{ path, message: "is null but the schema is not nullable" }];
    }
    const issues: SchemaIssue[] = [];
    if (Array.isArray(s.enum) && !s.enum.some((e) => e === value)) {
      issues.push({ path, message: `${JSON.stringify(value)} is not one of ${JSON.stringify(s.enum)}` });
    }
    if (typeof s.type === "string" && !hasType(value, s.type)) {
      return [...issues, { path, message: `expected ${s.type}, got ${JSON.stringify(value)?.slice(0, 60)}` }];
    }
    if (Array.isArray(value) && s.items) {
      value.forEach((v, i) => {
        issues.push(...this.check(v, s.items as Schema, `${path}[${i}]`));
      });
    }
    if (typeof value === "object" && !Array.isArray(value))
      issues.push(...this.object(value as Record<string, unknown>, s, path));
    issues.push(...this.combinators(value, s, path));
    return issues;
  }

  private object(value: Record<string, unknown>, s: Schema, path: string): SchemaIssue[] {
    const issues: SchemaIssue[] = [];
    const props = (s.properties ?? {}) as Record<string, Schema>;
    for (const key of (s.required ?? []) as string[]) {
      if (!(key in value)) issues.push({ path, message: `missing required field "${key}"` });
    }
    for (const [key, v] of Object.entries(value)) {
      const p = props[key];
      if (p) issues.push(...this.check(v, p, `${path}.${key}`));
      else if (s.additionalProperties === false) issues.push({ path, message: `unexpected field "${key}"` });
      else if (typeof s.additionalProperties === "object") {
        issues.push(...this.check(v, s.additionalProperties as Schema, `${path}.${key}`));
      }
    }
    return issues;
  }

  private combinators(value: unknown, s: Schema, path: string): SchemaIssue[] {
    const issues: SchemaIssue[] = [];
    for (const sub of (s.allOf ?? []) as Schema[]) issues.push(...this.check(value, sub, path));
    // oneOf is read as "at least one": the generated spec's alternatives overlap.
    for (const key of ["oneOf", "anyOf"] as const) {
      const alts = s[key] as Schema[] | undefined;
      if (!alts) continue;
      const results = alts.map((alt) => this.check(value, alt, path));
      if (results.some((r) => r.length === 0)) continue;
      const best = results.reduce((a, b) => (b.length < a.length ? b : a));
      issues.push({
        path,
        message: `matches none of ${alts.length} ${key} alternatives; closest: ${best[0]?.path} ${best[0]?.message}`,
      });
    }
    return issues;
  }
}

function hasType(value: unknown, type: string): boolean {
  switch (type) {
    case "integer":
      return typeof value === "number" && Number.isInteger(value);
    case "number":
      return typeof value === "number";
    case "string":
      return typeof value === "string";
    case "boolean":
      return typeof value === "boolean";
    case "array":
      return Array.isArray(value);
    case "object":
      return typeof value === "object" && value !== null && !Array.isArray(value);
    default:
      return true;
  }
}
