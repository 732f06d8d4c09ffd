/**
 * @module Schema typo detection. JSON Schema ignores unknown keywords and format
 * names by design, so `"requried": ["total"]` or `"minimun": 0` silently checks
 * nothing; a verifier that signs "pass" reports them (a warning, never a check)
 * with the closest known name.
 */
import type { Dialect } from './dialects.js';
import type { SchemaWarning } from './engine.js';
import { clipText } from './runtime.js';

/** Core keywords (identifiers, references, definitions) per draft. */
const CORE: Record<Dialect['version'], readonly string[]> = {
  2020: ['$schema', '$id', '$anchor', '$dynamicAnchor', '$ref', '$dynamicRef', '$vocabulary', '$comment', '$defs'],
  2019: ['$schema', '$id', '$anchor', '$recursiveAnchor', '$ref', '$recursiveRef', '$vocabulary', '$comment', '$defs'],
  7: ['$schema', '$id', '$ref', '$comment', 'definitions'],
};

/** Annotation keywords (meta-data and content vocabularies): never checks, never typos. */
const ANNOTATIONS = [
  'title', 'description', 'default', 'examples', 'deprecated', 'readOnly', 'writeOnly',
  'contentEncoding', 'contentMediaType', 'contentSchema',
];

/** Names in common use as definition containers in every draft. */
const CONTAINERS = ['$defs', 'definitions'];

/** Every format name any supported draft defines. */
const FORMATS = [
  'date-time', 'date', 'time', 'duration', 'email', 'idn-email', 'hostname', 'idn-hostname', 'ipv4', 'ipv6',
  'uri', 'uri-reference', 'iri', 'iri-reference', 'uuid', 'uri-template', 'json-pointer', 'relative-json-pointer', 'regex',
];

/** Optimal-string-alignment distance (a swap of two neighbours is one edit), capped at `max + 1`. */
export function editDistance(a: string, b: string, max: number): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  const rows: number[][] = [];
  for (let i = 0; i <= a.length; i++) {
    rows.push(new Array<number>(b.length + 1).fill(0));
    rows[i][0] = i;
  }
  for (let j = 0; j <= b.length; j++) rows[0][j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(rows[i - 1][j] + 1, rows[i][j - 1] + 1, rows[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, rows[i - 2][j - 2] + 1);
      rows[i][j] = d;
    }
  }
  return rows[a.length][b.length];
}

/** The closest candidate within a small distance (case differences count as close), or null. */
export function closest(name: string, candidates: Iterable<string>): string | null {
  if (name.length > 64) return null;
  const max = name.length <= 4 ? 1 : 2;
  let best: string | null = null;
  let bestD = max + 1;
  const lower = name.toLowerCase();
  for (const c of candidates) {
    const d = c.toLowerCase() === lower ? 0 : editDistance(name, c, max);
    if (d < bestD) {
      best = c;
      bestD = d;
    }
  }
  return best;
}

/** A warning for `keyword` when the dialect does not know it, or null when it is legitimate. */
export function unknownKeywordWarning(keyword: string, dialect: Dialect, schemaPath: string): SchemaWarning | null {
  if (keyword.startsWith('x-')) return null;
  const core = CORE[dialect.version];
  if (core.includes(keyword) || ANNOTATIONS.includes(keyword) || CONTAINERS.includes(keyword)) return null;
  const candidates = [...dialect.keywords, ...core, ...ANNOTATIONS];
  return { kind: 'unknown_keyword', schemaPath, name: keyword, suggestion: closest(keyword, candidates) };
}

/** A warning for a `format` name no supported draft defines, or null. */
export function unknownFormatWarning(name: string, schemaPath: string): SchemaWarning | null {
  if (FORMATS.includes(name)) return null;
  return { kind: 'unknown_format', schemaPath, name, suggestion: closest(name, FORMATS) };
}

/** `"requried" — did you mean "required"?` */
export function warningText(w: SchemaWarning): string {
  const what = w.kind === 'unknown_keyword' ? 'is not a keyword of this schema dialect and checks nothing' : 'is not a known format and checks nothing';
  const name = JSON.stringify(clipText(w.name, 80));
  return w.suggestion === null ? `${name} ${what}` : `${name} — did you mean ${JSON.stringify(w.suggestion)}? (${what})`;
}
