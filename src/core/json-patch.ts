/**
 * @module JSON Patch (RFC 6902) over JSON Pointers (RFC 6901): the form in which a
 * verdict's hints carry repairs. Pure: `applyPatch`
 * never mutates its input and returns a new document; an operation that cannot
 * apply (a path that does not exist, a failed `test`) throws a
 * `JsonPatchError` naming the operation and the pointer, and nothing is half
 * applied because the work happens on a copy.
 */
import { jsonEqual } from './json-equal.js';
import type { Json } from './types.js';

import type { RepairOperation } from './types.js';

/**
 * One RFC 6902 operation (the same type as a repair's operations).
 *
 * @example
 * ```ts
 * import type { JsonPatchOperation } from 'agent-output-verifier';
 *
 * const fix: JsonPatchOperation[] = [{ op: 'replace', path: '/currency', value: 'USD' }];
 * ```
 */
export type JsonPatchOperation = RepairOperation;

/**
 * Thrown by {@link applyPatch} when an operation does not apply; `index` is the operation's
 * place in the patch.
 *
 * @example
 * ```ts
 * import { applyPatch, JsonPatchError } from 'agent-output-verifier';
 *
 * try {
 *   applyPatch({ a: 1 }, [{ op: 'remove', path: '/b' }]);
 * } catch (e) {
 *   if (e instanceof JsonPatchError) console.log(e.index, e.message); // 0 'patch operation 0: …'
 * }
 * ```
 */
export class JsonPatchError extends Error {
  /** Index of the failing operation in the patch. */
  readonly index: number;
  constructor(index: number, message: string) {
    super(`patch operation ${index}: ${message}`);
    this.name = 'JsonPatchError';
    this.index = index;
  }
}

/** Builds a JSON Pointer from reference tokens (`~` → `~0`, `/` → `~1`). */
export function toJsonPointer(tokens: readonly (string | number)[]): string {
  let out = '';
  for (const t of tokens) {
    const s = String(t);
    out += s.includes('~') || s.includes('/') ? `/${s.replace(/~/g, '~0').replace(/\//g, '~1')}` : `/${s}`;
  }
  return out;
}

/** Splits a JSON Pointer into its unescaped reference tokens; `''` is the whole document. */
export function parseJsonPointer(pointer: string): string[] {
  if (pointer === '') return [];
  if (!pointer.startsWith('/')) throw new SyntaxError(`JSON Pointer ${JSON.stringify(pointer)} must be empty or start with "/"`);
  return pointer
    .slice(1)
    .split('/')
    .map((token) => {
      if (/~(?![01])/.test(token)) throw new SyntaxError(`JSON Pointer ${JSON.stringify(pointer)} has a "~" not followed by 0 or 1`);
      return token.replace(/~1/g, '/').replace(/~0/g, '~');
    });
}

type Container = Json[] | { [key: string]: Json };

const own = (obj: object, key: string): boolean => Object.prototype.hasOwnProperty.call(obj, key);

/** Sets an own data property, so keys like `__proto__` stay ordinary keys and never touch a prototype. */
function setKey(obj: { [key: string]: Json }, key: string, value: Json): void {
  Object.defineProperty(obj, key, { value, writable: true, enumerable: true, configurable: true });
}

function clone(value: unknown): Json {
  if (value === null || typeof value !== 'object') {
    if (value === undefined || typeof value === 'function' || typeof value === 'symbol' || typeof value === 'bigint') {
      throw new TypeError('value is not JSON');
    }
    if (typeof value === 'number' && !Number.isFinite(value)) throw new TypeError('value is not a finite number');
    return value as Json;
  }
  if (Array.isArray(value)) return value.map(clone);
  const out: { [key: string]: Json } = {};
  for (const key of Object.keys(value)) setKey(out, key, clone((value as Record<string, unknown>)[key]));
  return out;
}

/** An array index token: `0` or digits without a leading zero, within the array (or one past its end when `allowEnd`). */
function arrayIndex(arr: Json[], token: string, allowEnd: boolean): number {
  if (token === '-' && allowEnd) return arr.length;
  if (!/^(0|[1-9][0-9]*)$/.test(token)) throw new Error(`"${token}" is not an array index`);
  const index = Number(token);
  if (index > arr.length || (index === arr.length && !allowEnd)) throw new Error(`index ${token} is out of range (length ${arr.length})`);
  return index;
}

/** Walks to the parent of the pointer's last token. */
function parentOf(doc: Json, tokens: string[]): Container {
  let node: Json = doc;
  for (let i = 0; i < tokens.length - 1; i++) {
    const token = tokens[i];
    if (Array.isArray(node)) node = node[arrayIndex(node, token, false)];
    else if (node !== null && typeof node === 'object' && own(node, token)) node = node[token];
    else throw new Error(`${JSON.stringify(toJsonPointer(tokens.slice(0, i + 1)))} does not exist`);
  }
  if (node === null || typeof node !== 'object') throw new Error(`the parent of ${JSON.stringify(toJsonPointer(tokens))} is not an object or array`);
  return node;
}

function get(doc: Json, tokens: string[]): Json {
  if (tokens.length === 0) return doc;
  const parent = parentOf(doc, tokens);
  const last = tokens[tokens.length - 1];
  if (Array.isArray(parent)) return parent[arrayIndex(parent, last, false)];
  if (!own(parent, last)) throw new Error(`${JSON.stringify(toJsonPointer(tokens))} does not exist`);
  return parent[last];
}

function add(doc: Json, tokens: string[], value: Json): Json {
  if (tokens.length === 0) return value;
  const parent = parentOf(doc, tokens);
  const last = tokens[tokens.length - 1];
  if (Array.isArray(parent)) parent.splice(arrayIndex(parent, last, true), 0, value);
  else setKey(parent, last, value);
  return doc;
}

function remove(doc: Json, tokens: string[]): Json {
  if (tokens.length === 0) throw new Error('cannot remove the whole document');
  const parent = parentOf(doc, tokens);
  const last = tokens[tokens.length - 1];
  if (Array.isArray(parent)) parent.splice(arrayIndex(parent, last, false), 1);
  else if (own(parent, last)) delete parent[last];
  else throw new Error(`${JSON.stringify(toJsonPointer(tokens))} does not exist`);
  return doc;
}

function applyOne(doc: Json, op: JsonPatchOperation): Json {
  if (op === null || typeof op !== 'object') throw new Error('is not an object');
  if (typeof op.path !== 'string') throw new Error('has no string "path"');
  const tokens = parseJsonPointer(op.path);
  switch (op.op) {
    case 'add':
      return add(doc, tokens, clone(op.value));
    case 'remove':
      return remove(doc, tokens);
    case 'replace': {
      get(doc, tokens); // the target must exist
      if (tokens.length === 0) return clone(op.value);
      // In place, so an object member keeps its position among the keys.
      const parent = parentOf(doc, tokens);
      const last = tokens[tokens.length - 1];
      const value = clone(op.value);
      if (Array.isArray(parent)) parent[arrayIndex(parent, last, false)] = value;
      else setKey(parent, last, value);
      return doc;
    }
    case 'test':
      if (!jsonEqual(get(doc, tokens), clone(op.value))) throw new Error(`test failed: the value at ${JSON.stringify(op.path)} differs`);
      return doc;
    case 'move': {
      if (typeof op.from !== 'string') throw new Error('has no string "from"');
      const from = parseJsonPointer(op.from);
      if (from.length < tokens.length && from.every((t, i) => t === tokens[i])) throw new Error('cannot move a value into itself');
      const value = get(doc, from);
      return add(remove(doc, from), tokens, value);
    }
    case 'copy': {
      if (typeof op.from !== 'string') throw new Error('has no string "from"');
      return add(doc, tokens, clone(get(doc, parseJsonPointer(op.from))));
    }
    default:
      throw new Error(`unknown op ${JSON.stringify((op as { op?: unknown }).op)}`);
  }
}

/**
 * Applies an RFC 6902 patch and returns the new document; `document` is not
 * changed. Throws `JsonPatchError` (with the failing operation's index) when an
 * operation does not apply; no partial result is returned.
 *
 * @example
 * ```ts
 * import { applyPatch } from 'agent-output-verifier';
 *
 * applyPatch({ total: 10, items: [] }, [
 *   { op: 'replace', path: '/total', value: 12 },
 *   { op: 'add', path: '/items/-', value: { qty: 1 } },
 * ]); // { total: 12, items: [{ qty: 1 }] }
 * ```
 */
export function applyPatch(document: unknown, patch: readonly JsonPatchOperation[]): unknown {
  if (!Array.isArray(patch)) throw new JsonPatchError(0, 'the patch is not an array of operations');
  let doc: Json;
  try {
    doc = clone(document);
  } catch (e) {
    throw new JsonPatchError(0, `the document is not JSON: ${(e as Error).message}`);
  }
  patch.forEach((op, index) => {
    try {
      doc = applyOne(doc, op);
    } catch (e) {
      throw new JsonPatchError(index, `${(op as { op?: unknown })?.op ?? '?'} ${JSON.stringify((op as { path?: unknown })?.path)}: ${(e as Error).message}`);
    }
  });
  return doc;
}
