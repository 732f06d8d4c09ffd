/**
 * @module Fast path: turns an already compiled schema into one generated
 * JavaScript function, so that property reads are static and counting is a
 * local increment. This is the driver: it walks the compiled schemas, inlines
 * subschemas, selects keywords by the instance's type and hands each keyword
 * a CodeContext (keyword.ts); the keywords that can (type, enum, const,
 * required, properties, items, numeric/string/array bounds, pattern, format,
 * `$ref`) write their own code in their own module, every other keyword's
 * closure is called. A failing check is reported by its keyword's reporter
 * (see Reporter in runtime.ts) or re-run through its closure, which reports
 * it; so failures and counts are identical to the closure path by
 * construction. Used only where no annotations are collected (no unevaluated*
 * at the generated locations, no dynamic scope).
 *
 * Steps are charged exactly as the closures charge them, but compared with the
 * budget only at a function's entry, at each item of a loop and before a
 * pattern runs. An evaluation that goes over is then caught a little later
 * than the closures would catch it, and evaluate() runs it again on the
 * closures, which name the exact location: the too_complex error is the same,
 * and a request inside the budget never pays for a comparison per subschema.
 */
import type { Json, JsonObject } from '../types.js';
import type { CheckOptions, CodeContext, KeywordCode, KeywordGroup } from './keyword.js';
import { typeCode } from './keywords/type.js';
import type { Dialect } from './dialects.js';
import { PROTO_KEYS, reporterOf, type EvalContext, type Validate } from './runtime.js';
import { escapePointerSegment } from './uri.js';

/** One compiled keyword of a schema object, as the compiler recorded it. */
export interface CompiledKeyword {
  keyword: string;
  group: KeywordGroup;
  fn: Validate;
  /** For `$ref`: the schema it resolves to (inlined when possible). */
  target?: Json;
  /** How the keyword writes its generated code; none: the closure is called. */
  code?: KeywordCode;
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
  /** Functions of the factory beside the generated one (see CodeContext.helper()). */
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
  private check(cond: string, options: CheckOptions, fn: Validate, data: string, segs: string[]): void {
    const charges = options.charges !== undefined && options.charges !== false;
    if (options.charges === true) this.emit(`S = st;`);
    // counted as passed with its block (see open()); a failure takes it back
    this.blocks[this.blocks.length - 1].checks++;
    this.emit(`if (!(${cond})) {`);
    this.failure(charges, fn, data, segs, options.reporter);
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
  private failure(charges: boolean, fn: Validate, data: string, segs: string[], reporter?: string): void {
    // an assertion with a reporter records its failure without testing again (and
    // without charging the test again: the inline test charged it)
    const registered = reporter === undefined ? reporterOf(fn) : undefined;
    const reports = reporter !== undefined || registered !== undefined;
    const f = reporter ?? this.v(registered ?? fn);
    // silent: stop with the charges made so far; else the closure re-charges from before the test
    this.emit(`  if (!s) { ctx.steps = st; return false; } ok = false; ctx.steps = ${charges && !reports ? 'S' : 'st'};`);
    if (segs.length > 0 && reports) {
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
      this.emit(`if (${typeCode(t, d)}) {`);
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
      this.emit(`${first ? '' : 'else '}if (${typeCode(g, d)}) {`);
      this.group(schema, g, list, d, segs, depth, dialect, at);
      this.emit('}');
      first = false;
    }
  }

  /**
   * The keywords of one group, the instance known to be of its type. For an
   * object, the properties its keywords read (KeywordCode.reads) are read once
   * into constants that all of them use.
   */
  private group(schema: JsonObject, g: Group, list: CompiledKeyword[], d: string, segs: string[], depth: number, dialect: Dialect, at: string, passed = 0): void {
    const outer = this.loads;
    this.open(passed);
    if (g === 'object') {
      const names = new Map<string, string>();
      for (const k of list) {
        for (const key of k.code?.reads?.(schema[k.keyword]) ?? []) {
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

  /** A constant holding own property `key` of `d`: the one group() read, or a new one. */
  private own(d: string, key: string): string {
    const hoisted = this.loads !== null && this.loads.d === d ? this.loads.names.get(key) : undefined;
    if (hoisted !== undefined) return hoisted;
    const c = this.id('d');
    this.emit(`const ${c} = ${this.prop(d, key)};`);
    return c;
  }

  /** One keyword: its own code (KeywordCode), or a call of its closure. */
  private keyword(schema: JsonObject, k: CompiledKeyword, d: string, segs: string[], depth: number, dialect: Dialect, at: string): void {
    if (k.code === undefined) {
      this.callAt(k.fn, d, segs);
      return;
    }
    const fn = k.fn;
    const c: CodeContext = {
      keyword: k.keyword,
      value: schema[k.keyword],
      schema,
      dialect,
      schemaPath: `${at}/${escapePointerSegment(k.keyword)}`,
      data: d,
      fn,
      target: k.target,
      constant: (value) => this.v(value),
      name: (prefix) => this.id(prefix),
      emit: (line) => this.emit(line),
      helper: (source) => this.helpers.push(source),
      read: (obj, key) => this.prop(obj, key),
      own: (key) => this.own(d, key),
      check: (cond, options = {}) => this.check(cond, options, fn, d, segs),
      closure: () => this.callAt(fn, d, segs),
      inline: (node) => {
        if (node !== undefined && this.inlinable(node, depth + 1) && !this.stack.includes(node)) this.node(node, d, segs, depth + 1, false);
        else this.callAt(fn, d, segs);
      },
      sub: (node, data, segment, key, loop) => {
        const at = [...segs, segment];
        if (this.inlinable(node, depth + 1) && !this.stack.includes(node)) this.node(node, data, at, depth + 1, loop);
        else this.callAt(this.src.validatorOf(node, schema, k.keyword, key), data, at);
      },
    };
    k.code.emit(c);
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
