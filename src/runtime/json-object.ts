/**
 * A JSON object's fields, or undefined for text that is not JSON or not an object: records in the
 * shared store may hold anything, and a reader checks each field it uses itself.
 */
export function parseJsonObject(text: string): Record<string, unknown> | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  return asJsonObject(value);
}

/** `value`'s fields when it is a JSON object (not null, not an array), else undefined. */
export function asJsonObject(value: unknown): Record<string, unknown> | undefined {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

/**
 * An empty object to fill with keys that come from the store or the config (remote names, URI
 * keys): without a prototype, a key such as `__proto__` is a field like any other instead of
 * reaching Object.prototype, which every object in the process shares.
 */
export function keyedRecord<T>(): Record<string, T> {
  return Object.create(null) as Record<string, T>;
}
