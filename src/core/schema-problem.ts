/**
 * @module Turns a SchemaCompileError into the 422 field problem a caller can
 * act on: the schema is part of the request, so a schema that cannot be used
 * is an invalid request naming `expected_schema` (docs/protocol.md#schema-checks: unresolved
 * `$ref`s are named, never fetched).
 */
import type { FieldProblem } from '../errors.js';
import type { SchemaCompileError, SchemaWarning } from './schema/engine.js';
import { warningText } from './schema/unknown.js';
import { requestField } from './request.js';

/** The reference tokens of a schema location (`#/properties/a~1b/type` → `properties`, `a/b`, `type`). */
export function schemaPointerTokens(pointer: string): string[] {
  const p = pointer.replace(/^#/, '');
  if (p === '' || p === '/') return [];
  return p
    .slice(1)
    .split('/')
    .map((s) => {
      let d = s;
      try {
        d = decodeURIComponent(s);
      } catch {
        // not percent-encoded: keep as is
      }
      return d.replace(/~1/g, '/').replace(/~0/g, '~');
    });
}

/** `#/properties/a~1b/type` → `expected_schema.properties['a/b'].type`. */
export function schemaPointerField(pointer: string): string {
  return requestField(['expected_schema', ...schemaPointerTokens(pointer)]);
}

export function schemaCompileProblem(e: SchemaCompileError): FieldProblem {
  const p = e.problem;
  switch (p.kind) {
    case 'unresolved_ref':
      return {
        field: 'expected_schema',
        problem: `references '${p.ref}' which is not in the request`,
        fix: 'Inline the referenced schema under $defs and point $ref at it (e.g. "#/$defs/item"); references outside the request are never fetched.',
      };
    case 'unsupported_dialect':
      return {
        field: 'expected_schema.$schema',
        problem: 'names a dialect that is not supported',
        fix: 'Use draft 2020-12 (the default when $schema is absent), 2019-09 or draft-07.',
      };
    case 'too_complex':
      return tooComplexProblem(p);
    case 'invalid_pattern':
      return {
        field: schemaPointerField(p.path),
        problem: `is not a usable regular expression (${p.reason})`,
        fix: 'Write a valid ECMA-262 regular expression (escape literal brackets, parentheses and backslashes).',
      };
    default:
      return {
        field: schemaPointerField(p.path),
        problem: `is not a valid schema (${p.reason})`,
        fix: 'Correct the schema so it validates against its meta-schema.',
      };
  }
}

/** The limit's configuration name, for the operator reading the error alongside the docs. */
const LIMIT_SETTINGS: Record<string, string> = {
  maxExpandedSchemaSize: 'SCHEMA_MAX_EXPANDED_SIZE',
  maxPatternSize: 'SCHEMA_MAX_PATTERN_SIZE',
  maxCompiledSize: 'SCHEMA_MAX_COMPILED_SIZE',
  maxEvaluationSteps: 'SCHEMA_MAX_EVALUATION_STEPS',
  maxPropertyTables: 'SCHEMA_MAX_PROPERTY_TABLES',
};

const LIMIT_FIXES: Record<string, string> = {
  maxExpandedSchemaSize:
    'Reference shared definitions fewer times: a definition that applies the next one twice (allOf/anyOf/oneOf of two $refs) doubles the work at every level. Flatten such chains into one schema.',
  maxPatternSize:
    'Use smaller repetition counts in the pattern ({0,1000} nested in {100} is compiled 100,000 times); check lengths with minLength/maxLength instead of counted repetition.',
  maxCompiledSize: 'Send a smaller schema: fewer or shorter patterns and enum/const values, or split the check into several requests.',
  maxEvaluationSteps:
    'Make the check cheaper: avoid applying the same subschemas many times (allOf/anyOf/oneOf over $refs), use simpler patterns on long strings, or send a smaller output.',
  maxPropertyTables:
    'Use fewer distinct Unicode property classes (\\p{…}) across the schema\'s patterns: one class such as \\p{L} or \\p{Script=Latin} covers what several narrower ones do, and an explicit range ([A-Za-z\\u00C0-\\u024F]) needs no table.',
  backreferencePaths:
    'Remove the backreference (e.g. list the alternatives explicitly, or compare the two fields with a rule), or bound the repetition it follows ({0,20} instead of + or *). Backreferences need a backtracking matcher, which is only used when it provably finishes quickly.',
};

function tooComplexProblem(p: Extract<SchemaCompileError['problem'], { kind: 'too_complex' }>): FieldProblem {
  const setting = LIMIT_SETTINGS[p.limit];
  const limit = setting === undefined ? `limit ${p.max}` : `limit ${setting} = ${p.max}`;
  return {
    field: schemaPointerField(p.path),
    problem: `is too complex to check within the work limits: ${p.reason} (${limit})`,
    fix: LIMIT_FIXES[p.limit] ?? 'Simplify the schema.',
  };
}

/**
 * The 422 field problems of `strict_schema: true`: one per unknown keyword or format, at
 * its schema location, with the closest known name when there is one.
 */
export function schemaWarningProblems(warnings: readonly SchemaWarning[]): FieldProblem[] {
  return warnings.map((w) => ({
    field: schemaPointerField(w.schemaPath),
    problem: warningText(w),
    fix:
      w.suggestion !== null
        ? `Write ${JSON.stringify(w.suggestion)} if that is what was meant; otherwise remove it, or send strict_schema false to accept it as a warning.`
        : w.kind === 'unknown_keyword'
          ? 'Remove it or use a keyword of the schema dialect (names starting with "x-" are accepted as annotations), or send strict_schema false to accept it as a warning.'
          : 'Use a format the verifier knows (date, date-time, email, uri, uuid, ...) or a pattern, or send strict_schema false to accept it as a warning.',
  }));
}
