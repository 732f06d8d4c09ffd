/**
 * @module Turns a SchemaCompileError into the 422 field problem a caller can
 * act on: the schema is part of the request, so a schema that cannot be used
 * is an invalid request naming `expected_schema` (SPEC §2.1: unresolved
 * `$ref`s are named, never fetched).
 */
import type { FieldProblem } from '../errors.js';
import type { SchemaCompileError } from './schema/engine.js';
import { requestField } from './request.js';

/** `#/properties/a~1b/type` → `expected_schema.properties['a/b'].type`. */
export function schemaPointerField(pointer: string): string {
  const p = pointer.replace(/^#/, '');
  if (p === '' || p === '/') return 'expected_schema';
  const segments = p
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
  return requestField(['expected_schema', ...segments]);
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
