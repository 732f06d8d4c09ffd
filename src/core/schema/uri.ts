/**
 * @module URI handling for `$id`/`$ref`: resolution against a base, fragment
 * splitting and JSON Pointer decoding. Uses the WHATWG URL parser, which also
 * handles `urn:` and `file:` identifiers.
 */

/** Base URI for a root schema without `$id` (never fetched; only makes relative refs resolvable). */
export const DEFAULT_BASE = 'aov://schema.invalid/root.json';

/** Resolve `ref` against `base`; returns the absolute URI without fragment, or undefined when not resolvable. */
export function resolveUri(ref: string, base: string): string | undefined {
  try {
    return stripFragment(new URL(ref, base).href);
  } catch {
    return undefined;
  }
}

function stripFragment(uri: string): string {
  const i = uri.indexOf('#');
  return i < 0 ? uri : uri.slice(0, i);
}

/** Normalize an absolute URI used as a registry key. */
export function normalizeUri(uri: string): string {
  try {
    return stripFragment(new URL(uri).href);
  } catch {
    return stripFragment(uri);
  }
}

/** Split a reference into its URI part and its (percent-decoded) fragment. */
export function splitRef(ref: string): { uri: string; fragment: string } {
  const i = ref.indexOf('#');
  if (i < 0) return { uri: ref, fragment: '' };
  let fragment = ref.slice(i + 1);
  try {
    fragment = decodeURIComponent(fragment);
  } catch {
    // keep the raw fragment; it will simply not resolve
  }
  return { uri: ref.slice(0, i), fragment };
}

/** Segments of a JSON Pointer (`/a~1b/0` → ['a/b', '0']). */
export function pointerSegments(pointer: string): string[] {
  if (pointer === '') return [];
  return pointer
    .slice(1)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}

export function escapePointerSegment(seg: string | number): string {
  return typeof seg === 'number' ? String(seg) : seg.replace(/~/g, '~0').replace(/\//g, '~1');
}
