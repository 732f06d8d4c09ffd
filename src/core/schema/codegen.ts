/**
 * @module Fast path: turns an already compiled schema into one generated
 * JavaScript function for the common keywords (type, enum, const, required,
 * properties, items, numeric/string/array bounds, pattern, format), so that
 * property reads are static and counting is a local increment. Everything else
 * is delegated to the keyword's closure, and a failing check is reported by
 * its keyword's reporter (see Reporter in runtime.ts) or re-run through its
 * closure, which reports it; so failures and counts are identical to the
 * closure path by construction. Used only where no annotations are collected
 * (no unevaluated* at the generated locations, no dynamic scope).
 *
 * Steps are charged exactly as the closures charge them, but compared with the
 * budget only at a function's entry, at each item of a loop and before a
 * pattern runs. An evaluation that goes over is then caught a little later
 * than the closures would catch it, and evaluate() runs it again on the
 * closures, which name the exact location: the too_complex error is the same,
 * and a request inside the budget never pays for a comparison per subschema.
 */
import type { Json, JsonObject } from '../types.js';
import type { KeywordGroup } from './keyword.js';
import { multipleOfTest } from './keywords/number.js';
import { formatSteps, patternOf } from './keywords/string.js';
import { BoundedPattern } from './keywords/bounded-pattern.js';
import { simplePatternMatcher } from './simple-pattern.js';
import { getFormat } from './formats/index.js';
import type { Dialect } from './dialects.js';
import {
  missingCheckOf, PATTERN_CALL_STEPS, PathSegment, PROTO_KEYS, reporterOf, reportMissing, StepLimitError, stringLength, type EvalContext, type MissingCheck,
  type Validate,
} from './runtime.js';

/** One compiled keyword of a schema object, as the compiler recorded it. */
export interface CompiledKeyword {
  keyword: string;
  group: KeywordGroup;
  fn: Validate;
  /** For `$ref`: the schema it resolves to (inlined when possible). */
  target?: Json;
}

export interface CodegenSource {
  /** Compiled keywords of a schema object, or undefined if it was not compiled as an object schema. */
  keywordsOf(node: JsonObject): CompiledKeyword[] | undefined;
  /** The compiled validator of a subschema (object or boolean). */
  validatorOf(node: Json, parent: JsonObject, keyword: string, key?: string | number): Validate;
  dialectOf(node: JsonObject): Dialect;
  /** Evaluation steps charged on entering the schema (see WorkLimits). */
  weightOf(node: JsonObject): number;
  /** Schema path of a compiled schema object. */
  pathOf(node: JsonObject): string;
  assertFormats: boolean;
  /**
   * Inlined schemas left for all generated functions of one compiled schema:
   * shared, so generated code stays linear in the schema's size however many
   * reference targets get a function of their own.
   */
  budget: { left: number };
}

const MAX_INLINED_NODES = 150;

/** Inline checks that charge steps beyond the node's own weight (see check()). */
const CHARGING: ReadonlySet<string> = new Set(['minLength', 'maxLength', 'pattern', 'format']);

function stepLimit(schemaPath: string): never {
  throw new StepLimitError(schemaPath);
}
const MAX_DEPTH = 8;
/** The names generated code gives loop indices (see id('i')); every other segment is a constant `v<n>`. */
const LOOP_INDEX = /^i\d+$/;

const hasOwn = Object.prototype.hasOwnProperty;

function pops(n: number): string {
  return 'ctx.path.pop(); '.repeat(n).trim();
}

type Group = 'number' | 'string' | 'array' | 'object';
const GROUPS: readonly Group[] = ['number', 'string', 'array', 'object'];
/** The keyword group that applies to an instance of a JSON type, if any. */
const GROUP_OF_TYPE: Record<string, Group | undefined> = { integer: 'number', number: 'number', string: 'string', array: 'array', object: 'object' };

function groupTest(g: Group, d: string): string {
  switch (g) {
    case 'number':
      return `typeof ${d} === "number"`;
    case 'string':
      return `typeof ${d} === "string"`;
    case 'array':
      return `Array.isArray(${d})`;
    default:
      return `typeof ${d} === "object" && ${d} !== null && !Array.isArray(${d})`;
  }
}

/** The one type a `type` keyword names, if it names exactly one. */
function singleType(value: Json | undefined): string | undefined {
  if (typeof value === 'string') return value;
  if (Array.isArray(value) && value.length === 1 && typeof value[0] === 'string') return value[0];
  return undefined;
}

interface Env {
  values: unknown[];
}

class Generator {
  private readonly lines: string[] = [];
  /** Functions of the factory beside the generated one (see required()). */
  private readonly helpers: string[] = [];
  private n = 0;
  private inlined = 0;
  /** Schemas being inlined (a recursive `$ref` is called, not inlined). */
  private readonly stack: JsonObject[] = [];
  readonly env: Env = { values: [] };
  /** Open blocks of checks (see open()): where their count goes, and how many so far. */
  private readonly blocks: Array<{ line: number; checks: number }> = [];
  /** Constants holding properties of the object `d` in the group being emitted (see group()). */
  private loads: { d: string; names: Map<string, string> } | null = null;

  constructor(private readonly src: CodegenSource) {}

  /** A value the generated code uses, bound once to a constant of the enclosing factory (`v0`, `v1`…). */
  private v(value: unknown): string {
    this.env.values.push(value);
    return `v${this.env.values.length - 1}`;
  }

  private id(prefix: string): string {
    return `${prefix}${this.n++}`;
  }

  private emit(line: string): void {
    this.lines.push(line);
  }

  /** Read of an own property, static when the key cannot hit Object.prototype. */
  private prop(obj: string, key: string): string {
    const k = JSON.stringify(key);
    if (PROTO_KEYS.has(key)) return `(H.call(${obj}, ${k}) ? ${obj}[${k}] : undefined)`;
    return `${obj}[${k}]`;
  }

  /** Call a closure at the location `segs` below the function's root, stopping on failure in silent mode. */
  private callAt(fn: Validate, data: string, segs: string[]): void {
    const f = this.v(fn);
    // the closure charges ctx.steps itself: hand it the local count and take it back
    if (segs.length === 0) {
      this.emit(`ctx.steps = st; r = ${f}(${data}, ctx, null); st = ctx.steps;`);
    } else {
      this.emit(`ctx.steps = st; ctx.path.push(${segs.join(', ')});`);
      this.emit(`r = ${f}(${data}, ctx, null); ${pops(segs.length)} st = ctx.steps;`);
    }
    this.emit(`if (!r) { if (!s) return false; ok = false; }`);
  }

  /**
   * An inline check: counted locally when it passes; when it fails, recorded by
   * the keyword's reporter (which charges only the failure, the inline test
   * having charged the test) or re-run through the closure (which reports, its
   * charge replacing the inline test's). Either way both paths charge exactly
   * the same steps, and a request is over or under the work limit whether or
   * not its schema was already accelerated.
   */
  private check(cond: string, charges: boolean, fn: Validate, data: string, segs: string[], marked = false): void {
    if (charges && !marked) this.emit(`S = st;`);
    // counted as passed with its block (see open()); a failure takes it back
    this.blocks[this.blocks.length - 1].checks++;
    this.emit(`if (!(${cond})) {`);
    this.failure(charges, fn, data, segs);
    this.emit(`  P--;`);
    this.emit(`}`);
  }

  /**
   * Starts a block of checks that are all reached once the block is: its checks
   * are counted as passed with one addition at its start (a failure subtracts
   * its own), rather than one increment per passing check. `extra` counts a
   * check that passed just before (a type test that selected the block).
   */
  private open(extra = 0): void {
    this.blocks.push({ line: this.lines.length, checks: extra });
    this.emit('');
  }

  private close(): void {
    const b = this.blocks.pop()!;
    this.lines[b.line] = b.checks > 0 ? `P += ${b.checks};` : '';
  }

  /**
   * The failure branch of check(): stop when silent, else re-run the check
   * through its closure, which reports. An assertion reports at the location it
   * is given, so its instance path is handed over as a new array (to its
   * reporter, or in ctx.at) rather than pushed onto ctx.path and copied from there.
   */
  private failure(charges: boolean, fn: Validate, data: string, segs: string[]): void {
    // an assertion with a reporter records its failure without testing again (and
    // without charging the test again: the inline test charged it)
    const reporter = reporterOf(fn);
    const f = this.v(reporter ?? fn);
    // silent: stop with the charges made so far; else the closure re-charges from before the test
    this.emit(`  if (!s) { ctx.steps = st; return false; } ok = false; ctx.steps = ${charges && reporter === undefined ? 'S' : 'st'};`);
    if (segs.length > 0 && reporter !== undefined) {
      this.emit(`  ${f}(${data}, ctx, ${this.recordedPath(segs)});`);
    } else if (segs.length > 0) {
      // a closure reads it from ctx.at
      const list = segs.join(', ');
      this.emit(`  ctx.at = ctx.path.length === 0 ? [${list}] : ctx.path.concat([${list}]); ${f}(${data}, ctx, null); ctx.at = null;`);
    } else {
      this.emit(`  ${f}(${data}, ctx, null, -1);`);
    }
    this.emit(`  st = ctx.steps;`);
  }

  /**
   * The instance path a reporter is given, as its two arguments: the path below
   * ctx.path as a constant, with a hole for the index of the loop it is in (see
   * RecordedPath), and that index; a new array only inside nested loops.
   */
  private recordedPath(segs: string[]): string {
    if (segs.length === 0) return 'null, -1';
    const loops = segs.filter((x) => LOOP_INDEX.test(x));
    if (loops.length > 1) return `[${segs.join(', ')}], -1`;
    const template = segs.map((x) => (LOOP_INDEX.test(x) ? null : this.env.values[Number(x.slice(1))]));
    return `${this.v(template)}, ${loops.length === 1 ? loops[0] : -1}`;
  }

  /**
   * `required`: a failure is recorded by a function of the generated factory that
   * reads the properties again with static reads, as the closure's reporter would
   * find them missing (its read per name, with the name a variable, costs more
   * than the rest of the failure). The failure branch stays one call with the
   * object: handing it the values read already made the code around it slower
   * (1,000 valid items: +10%).
   */
  private required(keys: string[], check: MissingCheck, d: string, segs: string[]): void {
    this.blocks[this.blocks.length - 1].checks++;
    const f = this.id('m');
    const body = keys.map((k) => `if (${this.prop('o', k)} === undefined) m.push(${JSON.stringify(k)});`).join(' ');
    this.helpers.push(`function ${f}(o, ctx, path, index) { const m = []; ${body} ${this.v(reportMissing)}(ctx, ${this.v(check)}, m, path, index); }`);
    this.emit(`if (!(${keys.map((k) => `${this.load(d, k)} !== undefined`).join(' && ')})) {`);
    this.emit(`  if (!s) { ctx.steps = st; return false; } ok = false; ctx.steps = st;`);
    this.emit(`  ${f}(${d}, ctx, ${this.recordedPath(segs)});`);
    this.emit(`  st = ctx.steps;`);
    this.emit(`  P--;`);
    this.emit(`}`);
  }

  private typeCond(t: string, d: string): string {
    switch (t) {
      case 'string':
        return `typeof ${d} === "string"`;
      case 'number':
        return `typeof ${d} === "number"`;
      case 'integer':
        return `(typeof ${d} === "number" && Number.isInteger(${d}))`;
      case 'boolean':
        return `typeof ${d} === "boolean"`;
      case 'null':
        return `${d} === null`;
      case 'array':
        return `Array.isArray(${d})`;
      default:
        return `(typeof ${d} === "object" && ${d} !== null && !Array.isArray(${d}))`;
    }
  }

  /** The inline condition of an assertion, or null when it must be delegated. */
  private cond(kw: string, value: Json, d: string, dialect: Dialect, at: string): string | null {
    switch (kw) {
      case 'type': {
        const list = Array.isArray(value) ? value : [value];
        return list.map((t) => this.typeCond(t as string, d)).join(' || ');
      }
      case 'enum': {
        const vals = value as Json[];
        if (vals.some((x) => typeof x === 'object' && x !== null)) return null;
        if (vals.length <= 4) return vals.length === 0 ? 'false' : vals.map((x) => `${d} === ${JSON.stringify(x)}`).join(' || ');
        return `${this.v(new Set(vals))}.has(${d})`;
      }
      case 'const':
        if (typeof value === 'object' && value !== null) return null;
        return `${d} === ${JSON.stringify(value)}`;
      case 'minimum':
        return `${d} >= ${value}`;
      case 'maximum':
        return `${d} <= ${value}`;
      case 'exclusiveMinimum':
        return `${d} > ${value}`;
      case 'exclusiveMaximum':
        return `${d} < ${value}`;
      case 'multipleOf':
        return `${this.v(multipleOfTest(value as number))}(${d})`;
      // countedLength(), matchCounted() and the format keyword's charge, on the local step count
      case 'minLength':
        return `(${d}.length >= ${value} && (${d}.length >= ${2 * (value as number)} || ((st += ${d}.length >> 4), ${this.v(stringLength)}(${d})) >= ${value}))`;
      case 'maxLength':
        return `(${d}.length <= ${value} || ((st += ${d}.length >> 4), ${this.v(stringLength)}(${d})) <= ${value})`;
      case 'pattern': {
        const path = `${at}/pattern`;
        const p = patternOf(value as string, path);
        const charge = `(st += ${PATTERN_CALL_STEPS} + ${p.weight} * (${d}.length + 1)) > M`;
        // a fixed-shape pattern is a loop over char codes; another native pattern's RegExp is called directly
        const simple = p instanceof BoundedPattern ? simplePatternMatcher(value as string) : null;
        const test =
          simple !== null ? `${this.v(simple)}(${d})` : p instanceof BoundedPattern ? `${this.v(p.regexp)}.test(${d})` : `${this.v(p)}.test(${d})`;
        return `(${charge} ? ${this.v(stepLimit)}(${JSON.stringify(path)}) : ${test})`;
      }
      case 'format': {
        const f = getFormat(value as string, dialect.standard);
        return f === undefined ? null : `((st += ${this.v(formatSteps)}(${d})), ${this.v(f)}(${d}))`;
      }
      case 'minItems':
        return `${d}.length >= ${value}`;
      case 'maxItems':
        return `${d}.length <= ${value}`;
      case 'required': {
        const keys = value as string[];
        return keys.map((k) => `${this.load(d, k)} !== undefined`).join(' && ');
      }
      default:
        return null;
    }
  }

  /** Whether a subschema can be inlined (otherwise it is called as a closure). */
  private inlinable(node: Json, depth: number): node is JsonObject {
    if (typeof node !== 'object' || node === null || Array.isArray(node)) return false;
    if (depth >= MAX_DEPTH || this.inlined >= MAX_INLINED_NODES || this.src.budget.left <= 0) return false;
    const kws = this.src.keywordsOf(node);
    if (kws === undefined) return false;
    if (node.$id !== undefined && depth > 0) return false;
    return kws.every((k) => k.group !== 'last');
  }

  /**
   * Emit the code of an object schema applied to `d`, at path `segs` below the
   * function's root. Entering it charges its weight; only `checked` entries
   * (a function's root, an item of a loop) compare the count with the budget
   * at once: elsewhere the charge is compared at the next checked point, and
   * going over anywhere makes evaluate() ask the closures where exactly (see
   * the module comment). Straight-line code between checked points is bounded
   * by the inlining limits, so going over never lets much work run.
   */
  node(schema: JsonObject, d: string, segs: string[], depth: number, checked: boolean): void {
    this.inlined++;
    this.src.budget.left--;
    this.stack.push(schema);
    const kws = this.src.keywordsOf(schema)!;
    const dialect = this.src.dialectOf(schema);
    const at = this.src.pathOf(schema);
    // the same step charge as the closure of this schema (see buildNode in compiler.ts)
    const weight = this.src.weightOf(schema);
    if (checked) this.emit(`if ((st += ${weight}) > M) { ctx.steps = st; ctx.enter(0, ${JSON.stringify(at)}); }`);
    else this.emit(`st += ${weight};`);
    const any: CompiledKeyword[] = [];
    const byGroup: Record<Group, CompiledKeyword[]> = { number: [], string: [], array: [], object: [] };
    for (const k of kws) {
      if (k.group === 'any') any.push(k);
      else if (k.group !== 'last') byGroup[k.group].push(k);
    }
    const last = any.length > 0 ? any[any.length - 1] : undefined;
    const t = last !== undefined && last.keyword === 'type' ? singleType(schema.type) : undefined;
    const emitAny = (list: CompiledKeyword[]) => {
      for (const k of list) this.keyword(schema, k, d, segs, depth, dialect, at);
    };
    this.open();
    if (last === undefined || t === undefined) {
      emitAny(any);
      this.close();
      this.dispatch(schema, byGroup, GROUPS, d, segs, depth, dialect, at);
    } else {
      // `type` last of the type-independent keywords: its test also selects the
      // keywords that apply, so a passing instance is tested for its type once
      emitAny(any.slice(0, -1));
      this.close();
      const g = GROUP_OF_TYPE[t];
      this.emit(`if (${this.typeCond(t, d)}) {`);
      if (g !== undefined) this.group(schema, g, byGroup[g], d, segs, depth, dialect, at, 1);
      else this.emit('P++;');
      this.emit('} else {');
      this.failure(false, last.fn, d, segs);
      // a number that is not an integer still gets the number keywords
      this.dispatch(schema, byGroup, GROUPS.filter((x) => x !== g || t === 'integer'), d, segs, depth, dialect, at);
      this.emit('}');
    }
    this.stack.pop();
  }

  /** The keywords of each group in `groups`, each under the test of its instance type. */
  private dispatch(
    schema: JsonObject, byGroup: Record<Group, CompiledKeyword[]>, groups: readonly Group[], d: string, segs: string[], depth: number, dialect: Dialect, at: string,
  ): void {
    let first = true;
    for (const g of groups) {
      const list = byGroup[g];
      if (list.length === 0) continue;
      this.emit(`${first ? '' : 'else '}if (${groupTest(g, d)}) {`);
      this.group(schema, g, list, d, segs, depth, dialect, at);
      this.emit('}');
      first = false;
    }
  }

  /**
   * The keywords of one group, the instance known to be of its type. For an
   * object, the properties named by `required` and `properties` are read once
   * into constants that both use.
   */
  private group(schema: JsonObject, g: Group, list: CompiledKeyword[], d: string, segs: string[], depth: number, dialect: Dialect, at: string, passed = 0): void {
    const outer = this.loads;
    this.open(passed);
    if (g === 'object') {
      const names = new Map<string, string>();
      for (const k of list) {
        const value = schema[k.keyword];
        let keys: string[] = [];
        if (k.keyword === 'required') keys = value as string[];
        else if (k.keyword === 'properties') keys = Object.keys(value as JsonObject).filter((key) => (value as JsonObject)[key] !== true);
        for (const key of keys) {
          if (names.has(key)) continue;
          const c = this.id('d');
          names.set(key, c);
          this.emit(`const ${c} = ${this.prop(d, key)};`);
        }
      }
      this.loads = { d, names };
    }
    for (const k of list) this.keyword(schema, k, d, segs, depth, dialect, at);
    this.close();
    this.loads = outer;
  }

  /** The constant group() read own property `key` of `d` into, if any. */
  private hoisted(d: string, key: string): string | undefined {
    return this.loads !== null && this.loads.d === d ? this.loads.names.get(key) : undefined;
  }

  /** The value of own property `key` of `d`: a constant read once by group(), or a read. */
  private load(d: string, key: string): string {
    return this.hoisted(d, key) ?? this.prop(d, key);
  }

  private keyword(schema: JsonObject, k: CompiledKeyword, d: string, segs: string[], depth: number, dialect: Dialect, at: string): void {
    const value = schema[k.keyword];
    if (k.keyword === 'properties') {
      const props = value as JsonObject;
      const keys = Object.keys(props);
      if (keys.length > 0) {
        this.emit(`if (D) ctx.declareKeys(${d}, ${this.v(keys)});`);
      }
      for (const key of Object.keys(props)) {
        const sub = props[key];
        if (sub === true) continue;
        let c = this.hoisted(d, key);
        if (c === undefined) {
          c = this.id('d');
          this.emit(`const ${c} = ${this.prop(d, key)};`);
        }
        this.emit(`if (${c} !== undefined) {`);
        this.child(sub, schema, 'properties', key, c, [...segs, this.v(new PathSegment(key))], depth, false);
        this.emit('}');
      }
      return;
    }
    if (k.keyword === 'items' && !Array.isArray(value) && !(dialect.version === 2020 && schema.prefixItems !== undefined) && value !== false) {
      if (value === true) return;
      const i = this.id('i');
      const c = this.id('d');
      this.emit(`for (let ${i} = 0; ${i} < ${d}.length; ${i}++) {`);
      this.emit(`const ${c} = ${d}[${i}];`);
      this.child(value, schema, 'items', undefined, c, [...segs, i], depth, true);
      this.emit('}');
      return;
    }
    if (k.keyword === '$ref') {
      if (k.target !== undefined && this.inlinable(k.target, depth + 1) && !this.stack.includes(k.target)) {
        this.node(k.target, d, segs, depth + 1, false);
      } else {
        this.callAt(k.fn, d, segs);
      }
      return;
    }
    if (k.keyword === 'additionalProperties' && value === false && schema.patternProperties === undefined) {
      // the shape strict structured-output schemas use everywhere: an inline key scan
      const props = schema.properties;
      const declared =
        dialect.keywords.has('properties') && typeof props === 'object' && props !== null && !Array.isArray(props) ? Object.keys(props) : [];
      const key = this.id('k');
      const extra = this.id('x');
      const test =
        declared.length === 0 ? 'true' : declared.length <= 8 ? declared.map((p) => `${key} !== ${JSON.stringify(p)}`).join(' && ') : `!${this.v(new Set(declared))}.has(${key})`;
      this.emit(`let ${extra} = false; S = st;`);
      // one step per own key examined, as the closure's key scan charges
      this.emit(`for (const ${key} in ${d}) { if (H.call(${d}, ${key})) { st++; if (${test}) { ${extra} = true; break; } } }`);
      this.check(`!${extra}`, true, k.fn, d, segs, true);
      return;
    }
    const missing = k.keyword === 'required' ? missingCheckOf(k.fn) : undefined;
    if (missing !== undefined) {
      this.required(value as string[], missing, d, segs);
      return;
    }
    const c = this.cond(k.keyword, value, d, dialect, at);
    if (c === null) this.callAt(k.fn, d, segs);
    else this.check(c, CHARGING.has(k.keyword), k.fn, d, segs);
  }

  private child(sub: Json, parent: JsonObject, keyword: string, key: string | undefined, d: string, segs: string[], depth: number, checked: boolean): void {
    if (this.inlinable(sub, depth + 1) && !this.stack.includes(sub)) {
      this.node(sub, d, segs, depth + 1, checked);
      return;
    }
    this.callAt(this.src.validatorOf(sub, parent, keyword, key), d, segs);
  }

  build(root: JsonObject): Validate | null {
    if (!this.inlinable(root, 0)) return null;
    this.node(root, 'd', [], 0, true);
    const body = [
      'const s = ctx.silent === 0;',
      'const D = ctx.declared !== null;',
      // steps are counted in a local and written back before any call that reads or charges them
      'let ok = true; let P = 0; let r = true; let S = 0; let st = ctx.steps; const M = ctx.maxSteps;',
      ...this.lines,
      'ctx.steps = st;',
      'if (s) { ctx.passed += P; ctx.total += P; }',
      'return ok;',
    ].join('\n');
    let factory: (v: unknown[], h: typeof hasOwn) => (d: Json, ctx: EvalContext) => boolean;
    const consts = [...this.env.values.map((_, i) => `const v${i} = V[${i}];`), ...this.helpers].join('\n');
    try {
      // `ev` unused (always null here), declared so the arity matches every call
      factory = new Function('V', 'H', `"use strict";\n${consts}\nreturn function generated(d, ctx, ev) {\n${body}\n};`) as typeof factory;
    } catch {
      // Never a reason to fail a request: the closures answer the same, only slower.
      return null;
    }
    return factory(this.env.values, hasOwn) as Validate;
  }
}

/**
 * A generated validator for `root` (used when no annotations are needed), or
 * null when the schema's top level is not a plain object schema.
 */
export function generate(root: JsonObject, src: CodegenSource): Validate | null {
  return new Generator(src).build(root);
}
