/**
 * Freezing a loaded config so nothing changes it after validation.
 */

/**
 * Freezes `value` and every object and array inside it; returns it.
 *
 * @example
 * ```ts
 * const config = deepFreeze({ bots: { a: { events: ["message"] } } });
 * Object.isFrozen(config.bots.a.events); // true
 * ```
 */
export function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === "object" && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const item of Object.values(value)) deepFreeze(item);
  }
  return value;
}
