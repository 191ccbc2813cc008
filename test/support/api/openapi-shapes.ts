/**
 * Reading parameter definitions out of the server's OpenAPI spec, and checking a wire value
 * against one. Only what the shape test needs: $ref, allOf/oneOf/anyOf, type, items, enum,
 * nullable, object properties.
 */

// biome-ignore lint/suspicious/noExplicitAny: the spec is untyped YAML
type Json = any;

export interface SpecParam {
  name: string;
  in: "query" | "path" | "body";
  required: boolean;
  /** The spec marks the value as JSON (content or encoding application/json). */
  declaredJson: boolean;
  /** The value travels as JSON text: declared so, or of a type other than string. */
  json: boolean;
  schema: Json;
}

export class Spec {
  constructor(private readonly doc: Json) {}

  deref(node: Json): Json {
    let current = node;
    while (current && typeof current.$ref === "string") {
      current = current.$ref
        .slice(2)
        .split("/")
        .reduce((at: Json, key: string) => at?.[key.replaceAll("~1", "/").replaceAll("~0", "~")], this.doc);
    }
    return current;
  }

  operation(method: string, template: string): Json | undefined {
    return this.doc.paths?.[template]?.[method.toLowerCase()];
  }

  /** Query, path and form-body parameters of an operation. */
  params(method: string, template: string): SpecParam[] {
    const op = this.operation(method, template);
    if (!op) return [];
    const out: SpecParam[] = [];
    const pathLevel = this.doc.paths[template].parameters ?? [];
    for (const raw of [...pathLevel, ...(op.parameters ?? [])]) {
      const p = this.deref(raw);
      const jsonContent = p.content?.["application/json"];
      const schema = this.deref(p.schema ?? jsonContent?.schema ?? {});
      const declaredJson = !!jsonContent;
      out.push({
        name: p.name,
        in: p.in,
        required: p.required === true,
        declaredJson,
        json: declaredJson || !this.isString(schema),
        schema,
      });
    }
    const form = this.deref(op.requestBody)?.content?.["application/x-www-form-urlencoded"];
    if (form) {
      const body = this.merge(this.deref(form.schema));
      const required: string[] = body.required ?? [];
      for (const [name, raw] of Object.entries<Json>(body.properties ?? {})) {
        const schema = this.deref(raw);
        const declaredJson = form.encoding?.[name]?.contentType === "application/json";
        out.push({
          name,
          in: "body",
          required: required.includes(name),
          declaredJson,
          json: declaredJson || !this.isString(schema),
          schema,
        });
      }
    }
    return out;
  }

  /** Flatten allOf into one object schema. */
  private merge(schema: Json): Json {
    if (!schema?.allOf) return schema;
    const parts = schema.allOf.map((s: Json) => this.merge(this.deref(s)));
    return {
      properties: Object.assign({}, ...parts.map((p: Json) => p.properties ?? {})),
      required: parts.flatMap((p: Json) => p.required ?? []),
    };
  }

  /** True when every alternative of the schema is a plain string. */
  isString(schema: Json): boolean {
    const s = this.deref(schema);
    const alternatives = s?.oneOf ?? s?.anyOf;
    if (alternatives) return alternatives.every((a: Json) => this.isString(a));
    return s?.type === "string";
  }

  /** True when some alternative of the schema is a plain string. */
  allowsString(schema: Json): boolean {
    const s = this.deref(schema);
    const alternatives = s?.oneOf ?? s?.anyOf;
    if (alternatives) return alternatives.some((a: Json) => this.allowsString(a));
    return s?.type === "string";
  }

  /** Problems with `value` against `schema`, as `where: problem` strings (empty when it fits). */
  check(schema: Json, value: unknown, where: string): string[] {
    const s = this.merge(this.deref(schema));
    if (value === null) return s.nullable ? [] : [`${where}: null not allowed`];
    const alternatives = s.oneOf ?? s.anyOf;
    if (alternatives) {
      const results = alternatives.map((a: Json) => this.check(a, value, where));
      return results.some((r: string[]) => r.length === 0)
        ? []
        : [`${where}: fits none of oneOf/anyOf (${results.flat().join("; ")})`];
    }
    if (s.enum && !s.enum.includes(value))
      return [`${where}: ${JSON.stringify(value)} not in ${JSON.stringify(s.enum)}`];
    const kind = Array.isArray(value) ? "array" : Number.isInteger(value) ? "integer" : typeof value;
    const type = s.type ?? (s.properties ? "object" : s.items ? "array" : undefined);
    if (type === undefined) return [];
    const fits = type === kind || (type === "number" && kind === "integer");
    if (!fits) return [`${where}: expected ${type}, got ${kind}`];
    if (kind === "array" && s.items)
      return (value as unknown[]).flatMap((v, i) => this.check(s.items, v, `${where}[${i}]`));
    if (kind === "object" && s.properties) {
      const obj = value as Record<string, unknown>;
      const problems: string[] = [];
      for (const key of s.required ?? [])
        if (!(key in obj)) problems.push(`${where}.${key}: required, missing`);
      for (const [key, v] of Object.entries(obj)) {
        if (key in s.properties) problems.push(...this.check(s.properties[key], v, `${where}.${key}`));
        else if (s.additionalProperties === false) problems.push(`${where}.${key}: not in the spec`);
      }
      return problems;
    }
    return [];
  }
}
