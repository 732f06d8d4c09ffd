/**
 * @module RFC 8785 (JCS) canonicalization, the byte form every hash and
 * signature of a receipt covers (SPEC §5.1). Delegates to `canonicalize` and
 * only narrows what it accepts: JCS is defined over I-JSON, so values that
 * have no I-JSON form (lone surrogates, NaN, ±Infinity, undefined, functions,
 * non-plain objects) are rejected with a clear error instead of being
 * silently dropped or coerced — a receipt must never cover a value a
 * third-party verifier would canonicalize differently.
 */
import canonicalizeLib from 'canonicalize';

/** A value that has no RFC 8785 canonical form. */
export class JcsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'JcsError';
  }
}

const canonicalizeImpl = canonicalizeLib as unknown as (value: unknown) => string | undefined;

// ES2024 String.prototype.isWellFormed (Node 20+); the project's lib setting predates it.
const isWellFormed = (s: string): boolean => (s as unknown as { isWellFormed(): boolean }).isWellFormed();

function describe(path: string): string {
  return path === '' ? 'the value' : `the value at ${path}`;
}

/**
 * Rejects what canonicalize would coerce (toJSON, boxed primitives, undefined,
 * functions, symbols, bigint, sparse arrays, non-plain objects). Lone
 * surrogates and non-finite numbers are also caught here so that the error can
 * name where they are.
 */
function assertIJson(value: unknown, path: string, depth: number): void {
  if (depth > 10_000) throw new JcsError('JCS: value is nested too deeply');
  switch (typeof value) {
    case 'string':
      if (!isWellFormed(value)) throw new JcsError(`JCS: ${describe(path)} holds a lone surrogate`);
      return;
    case 'number':
      if (!Number.isFinite(value)) throw new JcsError(`JCS: ${describe(path)} is not a finite number`);
      return;
    case 'boolean':
      return;
    case 'object': {
      if (value === null) return;
      if (Array.isArray(value)) {
        for (let i = 0; i < value.length; i++) {
          if (!(i in value)) throw new JcsError(`JCS: ${describe(`${path}[${i}]`)} is a hole in an array`);
          assertIJson(value[i], `${path}[${i}]`, depth + 1);
        }
        return;
      }
      const proto = Object.getPrototypeOf(value);
      if (proto !== Object.prototype && proto !== null) {
        throw new JcsError(`JCS: ${describe(path)} is not a plain JSON object`);
      }
      for (const key of Object.keys(value)) {
        if (!isWellFormed(key)) throw new JcsError(`JCS: a key in ${describe(path)} holds a lone surrogate`);
        assertIJson((value as Record<string, unknown>)[key], `${path}.${key}`, depth + 1);
      }
      return;
    }
    default:
      throw new JcsError(`JCS: ${describe(path)} has type ${typeof value}, which JSON cannot represent`);
  }
}

/**
 * The RFC 8785 canonical form of a JSON value, as a string (hash its UTF-8
 * bytes). Throws JcsError for any value without an I-JSON form.
 */
export function canonicalize(value: unknown): string {
  assertIJson(value, '', 0);
  const out = canonicalizeImpl(value);
  if (typeof out !== 'string') throw new JcsError('JCS: the value has no JSON representation');
  return out;
}

/**
 * A number as JCS prints it (ECMAScript Number::toString: `10.0` → `10`,
 * `1e21` → `1e+21`, `-0` → `0`). Throws JcsError for NaN and ±Infinity.
 */
export function serializeNumber(value: number): string {
  if (typeof value !== 'number' || !Number.isFinite(value)) {
    throw new JcsError('JCS: NaN and Infinity have no JSON form');
  }
  return canonicalizeImpl(value) as string;
}
