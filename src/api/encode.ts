/**
 * Wire encoding of request parameters (see
 * docs/internals/server-behaviour.md#requests-and-authentication): strings go raw; numbers,
 * booleans, null, arrays and objects go as JSON text ("true", "42", '["a"]'); undefined is left
 * out. The server validates JSON parameters strictly, so `True` or `1` for a boolean is an error
 * there.
 */

/** Parameter values as a caller passes them; `undefined` means "not sent". */
export type ParamValue = string | number | boolean | null | undefined | readonly unknown[] | object;
export type Params = Readonly<Record<string, ParamValue>>;

/** Encode parameters as form fields (also used as the query string of a GET). */
export function encodeParams(params: Params | undefined): URLSearchParams {
  const out = new URLSearchParams();
  if (!params) return out;
  for (const [name, value] of Object.entries(params)) {
    if (value === undefined) continue;
    out.append(name, typeof value === "string" ? value : JSON.stringify(value));
  }
  return out;
}

/**
 * A path with each interpolated value URL-encoded as one segment, e.g.
 * path`/users/${"a b@x.org"}` → `/users/a%20b%40x.org`.
 */
export function path(strings: TemplateStringsArray, ...values: ReadonlyArray<string | number>): string {
  return strings.reduce((out, s, i) => out + encodeURIComponent(String(values[i - 1])) + s);
}
