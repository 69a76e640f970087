/**
 * Input keys name properties of plain objects, and `obj[key] = value` with the key `__proto__`
 * would replace the prototype instead of adding a key. (Reads use `Object.hasOwn`, never `in`,
 * for the same reason: `constructor` is "in" every object.)
 */
export function setOwnKey<T>(target: Record<string, T>, key: string, value: T): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}
