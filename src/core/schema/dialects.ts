/**
 * @module Dialect definitions: which `$schema` URIs are supported, which keywords
 * each draft (and each `$vocabulary`) enables, and where subschemas sit (for
 * finding `$id`/`$anchor` without mistaking data inside `enum`/`const` or an
 * unknown keyword for an identifier).
 */
export type DraftVersion = 7 | 2019 | 2020;

const DRAFT_2020_12 = 'https://json-schema.org/draft/2020-12/schema';
const DRAFT_2019_09 = 'https://json-schema.org/draft/2019-09/schema';
const DRAFT_07 = 'http://json-schema.org/draft-07/schema#';

export interface Dialect {
  /** The meta-schema URI this dialect was selected by. */
  readonly id: string;
  readonly version: DraftVersion;
  /** Keywords that take effect (core keywords are always handled). */
  readonly keywords: ReadonlySet<string>;
  /** `format` asserts by vocabulary (2020-12 format-assertion), regardless of options. */
  readonly formatAssertion: boolean;
  /** The standard meta-schema this dialect builds on (what format checks are selected by). */
  readonly standard: string;
}

const VALIDATION = [
  'type', 'enum', 'const', 'multipleOf', 'maximum', 'exclusiveMaximum', 'minimum', 'exclusiveMinimum',
  'maxLength', 'minLength', 'pattern', 'maxItems', 'minItems', 'uniqueItems', 'maxProperties',
  'minProperties', 'required',
];
const APPLICATOR_COMMON = [
  'properties', 'patternProperties', 'additionalProperties', 'propertyNames', 'allOf', 'anyOf', 'oneOf',
  'not', 'if', 'then', 'else', 'contains', 'items',
];

const DRAFT7_KEYWORDS = new Set([...VALIDATION, ...APPLICATOR_COMMON, 'additionalItems', 'dependencies', 'format']);

const VOCAB_2020: Record<string, string[]> = {
  'https://json-schema.org/draft/2020-12/vocab/core': [],
  'https://json-schema.org/draft/2020-12/vocab/applicator': [...APPLICATOR_COMMON, 'prefixItems', 'dependentSchemas'],
  'https://json-schema.org/draft/2020-12/vocab/unevaluated': ['unevaluatedItems', 'unevaluatedProperties'],
  'https://json-schema.org/draft/2020-12/vocab/validation': [...VALIDATION, 'maxContains', 'minContains', 'dependentRequired'],
  'https://json-schema.org/draft/2020-12/vocab/meta-data': [],
  'https://json-schema.org/draft/2020-12/vocab/format-annotation': ['format'],
  'https://json-schema.org/draft/2020-12/vocab/format-assertion': ['format'],
  'https://json-schema.org/draft/2020-12/vocab/content': [],
};
const VOCAB_2019: Record<string, string[]> = {
  'https://json-schema.org/draft/2019-09/vocab/core': [],
  'https://json-schema.org/draft/2019-09/vocab/applicator': [
    ...APPLICATOR_COMMON, 'additionalItems', 'dependentSchemas', 'unevaluatedItems', 'unevaluatedProperties',
  ],
  'https://json-schema.org/draft/2019-09/vocab/validation': [...VALIDATION, 'maxContains', 'minContains', 'dependentRequired'],
  'https://json-schema.org/draft/2019-09/vocab/meta-data': [],
  'https://json-schema.org/draft/2019-09/vocab/format': ['format'],
  'https://json-schema.org/draft/2019-09/vocab/content': [],
};

function allOf(v: Record<string, string[]>): Set<string> {
  return new Set(Object.values(v).flat());
}

export const DIALECT_2020: Dialect = { id: DRAFT_2020_12, version: 2020, keywords: allOf(VOCAB_2020), formatAssertion: false, standard: DRAFT_2020_12 };
const DIALECT_2019: Dialect = { id: DRAFT_2019_09, version: 2019, keywords: allOf(VOCAB_2019), formatAssertion: false, standard: DRAFT_2019_09 };
const DIALECT_07: Dialect = { id: DRAFT_07, version: 7, keywords: DRAFT7_KEYWORDS, formatAssertion: false, standard: DRAFT_07 };

/** The standard dialect for a `$schema` value, or undefined when it is not one we know. */
export function standardDialect(uri: string): Dialect | undefined {
  const u = uri.replace(/#$/, '');
  switch (u) {
    case 'https://json-schema.org/draft/2020-12/schema':
    case 'http://json-schema.org/draft/2020-12/schema':
      return DIALECT_2020;
    case 'https://json-schema.org/draft/2019-09/schema':
    case 'http://json-schema.org/draft/2019-09/schema':
      return DIALECT_2019;
    case 'http://json-schema.org/draft-07/schema':
    case 'https://json-schema.org/draft-07/schema':
      return DIALECT_07;
    default:
      return undefined;
  }
}

/**
 * A dialect from a custom meta-schema's `$vocabulary`. Returns a string naming
 * the problem when a required vocabulary is unknown.
 */
export function vocabularyDialect(id: string, base: Dialect, vocabulary: Record<string, unknown>): Dialect | string {
  const table = base.version === 2020 ? VOCAB_2020 : base.version === 2019 ? VOCAB_2019 : null;
  if (table === null) return base;
  const keywords = new Set<string>();
  let formatAssertion = false;
  for (const [vocab, required] of Object.entries(vocabulary)) {
    const kws = table[vocab];
    if (kws === undefined) {
      if (required === true) return `unknown required vocabulary ${vocab}`;
      continue;
    }
    for (const k of kws) keywords.add(k);
    if (vocab.endsWith('/format-assertion')) formatAssertion = true;
  }
  return { id, version: base.version, keywords, formatAssertion, standard: base.standard };
}

/** Keywords whose value is one subschema. */
export const SCHEMA_KEYWORDS = new Set([
  'additionalProperties', 'propertyNames', 'not', 'if', 'then', 'else', 'contains', 'unevaluatedProperties',
  'unevaluatedItems', 'additionalItems', 'items',
]);
/** Keywords whose value is an array of subschemas. */
export const ARRAY_KEYWORDS = new Set(['allOf', 'anyOf', 'oneOf', 'prefixItems', 'items']);
/** Keywords whose value maps names to subschemas. */
export const MAP_KEYWORDS = new Set(['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas', 'dependencies']);
