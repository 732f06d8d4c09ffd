/**
 * @module The schema compiler: finds every resource and anchor (`$id`, `$anchor`,
 * `$dynamicAnchor`, `$recursiveAnchor`), resolves every `$ref` at compile time
 * (built-in meta-schemas and caller-supplied resources only: never the network),
 * and turns each subschema into one closure that runs its keywords grouped by
 * instance type.
 */
import type { Json, JsonObject } from '../types.js';
import { SchemaCompileError, type SchemaWarning, type WorkLimits } from './engine.js';
import { compiledSizeExceeded } from './keywords/string.js';
import { unknownKeywordWarning } from './unknown.js';
import {
  ARRAY_KEYWORDS, DIALECT_2020, MAP_KEYWORDS, SCHEMA_KEYWORDS, standardDialect, vocabularyDialect,
  type Dialect,
} from './dialects.js';
import { isObject, runAll, type CompileState, type KeywordContext, type KeywordDefinition, type KeywordGroup, type RefTarget } from './keyword.js';
import { KEYWORDS } from './keywords/index.js';
import { generate, type CodegenSource, type CompiledKeyword } from './codegen.js';
import { compileRefKeyword, refCode } from './keywords/ref.js';
import { META_SCHEMAS } from './meta/index.js';
import { Annotations, foundType, report, jsonType, type Holder, type ResourceRecord, type Validate } from './runtime.js';
import { DEFAULT_BASE, escapePointerSegment, normalizeUri, pointerSegments, resolveUri, splitRef } from './uri.js';

interface NodeInfo {
  base: string;
  resource: ResourceEntry;
  /** Schema path of the node for failures, e.g. `#/properties/a`. */
  path: string;
  dialect: Dialect;
}

interface ResourceEntry {
  record: ResourceRecord;
  root: Json;
  anchors: Map<string, Json>;
  dynamicAnchors: Set<string>;
  info: NodeInfo | null;
}

const BUILT_IN = new Map<string, Json>();
for (const m of META_SCHEMAS) {
  const id = (m as JsonObject).$id as string;
  BUILT_IN.set(normalizeUri(id), m);
}

const NOT_COMPILED: Validate = () => {
  throw new Error('schema used before it was compiled');
};

const TRUE: Validate = () => true;

export interface CompilerOptions {
  resources?: ReadonlyMap<string, Json>;
  /**
   * Called with the root schema and the standard meta-schema URI of its dialect
   * before anything is compiled; throws when the schema is invalid against it.
   */
  checkMeta?: (schema: Json, standard: string) => void;
  assertFormats: boolean;
  defaultDialect: Dialect;
  /** Put generated code in front of the closures (see codegen.ts). */
  generatedCode: boolean;
  limits: WorkLimits;
}

export interface CompiledRoot {
  validate: Validate;
  /**
   * Generate code for the common keywords (worth it once a schema is evaluated
   * more than once). Returns the root's generated validator (valid for `ev === null`), if any.
   */
  accelerate(): Validate | null;
  dialect: Dialect;
  rootResource: ResourceRecord;
  state: CompileState;
}

export class Compiler {
  private readonly resources = new Map<string, ResourceEntry>();
  private readonly infos = new Map<object, NodeInfo>();
  private readonly memo = new Map<object, Holder>();
  private readonly compiled = new Map<object, { keywords: CompiledKeyword[]; info: NodeInfo; weight: number }>();
  private readonly refTargets: Array<{ node: Json; holder: Holder }> = [];
  private readonly extra = new Map<string, Json>();
  private readonly pendingDynamic: ResourceEntry[] = [];
  /** Schemas all generated functions may still inline (see CodegenSource.budget). */
  private inlineBudget: { left: number } | undefined;
  readonly state: CompileState;

  constructor(private readonly options: CompilerOptions) {
    this.state = { dynamic: false, assertFormats: options.assertFormats, limits: options.limits, compiledSize: 0, warnings: [] as SchemaWarning[], propertyTables: new Set<string>() };
    if (options.resources) for (const [k, v] of options.resources) this.extra.set(normalizeUri(k), v);
  }

  compileRoot(schema: Json): CompiledRoot {
    const dialect = this.rootDialect(schema, this.options.defaultDialect);
    this.options.checkMeta?.(schema, dialect.standard);
    const entry = this.scanDocument(schema, DEFAULT_BASE, dialect, '#');
    const rootInfo = entry.info ?? this.infoFor(schema, entry);
    this.checkExpandedSize(schema, rootInfo);
    const holder = this.compileAt(schema, rootInfo);
    this.finishDynamic();
    const root = holder;
    const accelerate = (): Validate | null => {
      if (this.state.dynamic || !this.options.generatedCode) return null;
      const fast = this.accelerate(schema, root);
      for (const t of this.refTargets) this.accelerate(t.node, t.holder);
      return fast;
    };
    return { validate: root.fn, accelerate, dialect, rootResource: entry.record, state: this.state };
  }

  /** Put a generated fast path in front of a compiled object schema (see codegen.ts). */
  private accelerate(node: Json, holder: Holder): Validate | null {
    if (!isObject(node) || (holder as { fast?: boolean }).fast) return null;
    const src: CodegenSource = {
      budget: (this.inlineBudget ??= { left: 4 * this.compiled.size + 1000 }),
      assertFormats: this.state.assertFormats,
      keywordsOf: (n) => this.compiled.get(n)?.keywords,
      weightOf: (n) => this.compiled.get(n)!.weight,
      pathOf: (n) => this.compiled.get(n)!.info.path,
      dialectOf: (n) => this.compiled.get(n)!.info.dialect,
      validatorOf: (sub, parent, keyword, key) => {
        const pinfo = this.compiled.get(parent)!.info;
        let path = `${pinfo.path}/${escapePointerSegment(keyword)}`;
        if (key !== undefined) path += '/' + escapePointerSegment(key);
        return this.compileAt(sub, { ...pinfo, path }).fn;
      },
    };
    const fast = generate(node, src);
    if (fast === null) return null;
    const slow = holder.fn;
    // ctx.fast is off when evaluate() re-runs an evaluation that went over its step budget on the closures
    holder.fn = (data, ctx, ev) => (ev === null && ctx.fast ? fast(data, ctx, null) : slow(data, ctx, ev));
    (holder as { fast?: boolean }).fast = true;
    return fast;
  }

  // ---------------------------------------------------------------- dialects

  private dialectFromUri(uri: string, seen: Set<string> = new Set()): Dialect {
    const std = standardDialect(uri);
    if (std) return std;
    const key = normalizeUri(uri);
    const meta = this.extra.get(key);
    if (!isObject(meta) || seen.has(key)) {
      throw new SchemaCompileError({ kind: 'unsupported_dialect', dialect: uri }, `unsupported schema dialect ${uri}`);
    }
    seen.add(key);
    const baseUri = typeof meta.$schema === 'string' ? meta.$schema : DIALECT_2020.id;
    const base = this.dialectFromUri(baseUri, seen);
    if (!isObject(meta.$vocabulary)) return { ...base, id: uri };
    const d = vocabularyDialect(uri, base, meta.$vocabulary);
    if (typeof d === 'string') {
      throw new SchemaCompileError({ kind: 'unsupported_dialect', dialect: uri }, `unsupported schema dialect ${uri}: ${d}`);
    }
    return d;
  }

  private rootDialect(schema: Json, fallback: Dialect): Dialect {
    if (isObject(schema) && schema.$schema !== undefined) {
      if (typeof schema.$schema !== 'string') this.invalid('#/$schema', '$schema must be a string');
      return this.dialectFromUri(schema.$schema);
    }
    return fallback;
  }

  // ---------------------------------------------------------------- scanning

  private newResource(uri: string, root: Json): ResourceEntry {
    const entry: ResourceEntry = {
      record: { uri, dynamicHolders: new Map(), recursiveAnchor: false, rootHolder: null },
      root,
      anchors: new Map(),
      dynamicAnchors: new Set(),
      info: null,
    };
    if (!this.resources.has(uri)) this.resources.set(uri, entry);
    return entry;
  }

  /** Register every resource and anchor of a document. */
  private scanDocument(doc: Json, retrievalUri: string, dialect: Dialect, pathPrefix: string): ResourceEntry {
    const docEntry = this.newResource(normalizeUri(retrievalUri), doc);
    this.walk(doc, retrievalUri, docEntry, pathPrefix, dialect, true);
    // boolean documents have no node info of their own
    docEntry.info ??= { base: docEntry.record.uri, resource: docEntry, path: pathPrefix, dialect };
    return docEntry;
  }

  private walk(node: Json, base: string, resource: ResourceEntry, path: string, dialect: Dialect, isDocRoot: boolean): void {
    if (!isObject(node) || this.infos.has(node)) return;
    let d = dialect;
    const idKeyIgnored = d.version === 7 && node.$ref !== undefined;
    const hasId = typeof node.$id === 'string' && !idKeyIgnored;
    if ((isDocRoot || hasId) && typeof node.$schema === 'string' && !isDocRoot) d = this.dialectFromUri(node.$schema);
    let res = resource;
    let b = base;
    if (hasId) {
      const id = node.$id as string;
      if (d.version === 7 && id.startsWith('#')) {
        res.anchors.set(id.slice(1), node);
      } else {
        const { uri, fragment } = splitRef(id);
        const abs = resolveUri(uri, base);
        if (abs === undefined) this.invalid(path + '/$id', `$id ${id} is not a valid URI`);
        b = abs;
        if (isDocRoot) {
          // the document root's own $id names the same resource as its retrieval URI
          if (!this.resources.has(abs)) this.resources.set(abs, resource);
        } else {
          res = this.newResource(abs, node);
        }
        if (d.version === 7 && fragment !== '') res.anchors.set(fragment, node);
      }
    }
    if (d.version !== 7) {
      if (typeof node.$anchor === 'string') res.anchors.set(node.$anchor, node);
      if (d.version === 2020 && typeof node.$dynamicAnchor === 'string') {
        res.anchors.set(node.$dynamicAnchor, node);
        res.dynamicAnchors.add(node.$dynamicAnchor);
      }
      if (d.version === 2019 && node.$recursiveAnchor === true && res.root === node) res.record.recursiveAnchor = true;
    }
    const info: NodeInfo = { base: b, resource: res, path, dialect: d };
    this.infos.set(node, info);
    if (res.root === node) res.info = info;
    for (const k of Object.keys(node)) {
      const v = node[k];
      if (typeof v !== 'object' || v === null) continue;
      if (Array.isArray(v)) {
        if (ARRAY_KEYWORDS.has(k)) v.forEach((s, i) => this.walk(s, b, res, `${path}/${k}/${i}`, d, false));
      } else if (SCHEMA_KEYWORDS.has(k)) {
        this.walk(v, b, res, `${path}/${k}`, d, false);
      } else if (MAP_KEYWORDS.has(k)) {
        for (const name of Object.keys(v)) this.walk(v[name], b, res, `${path}/${k}/${escapePointerSegment(name)}`, d, false);
      }
    }
  }

  private infoFor(node: Json, entry: ResourceEntry): NodeInfo {
    if (isObject(node)) {
      const i = this.infos.get(node);
      if (i) return i;
    }
    return entry.info ?? { base: entry.record.uri, resource: entry, path: entry.record.uri + '#', dialect: this.options.defaultDialect };
  }

  /** The resource registered under `uri`, loading a built-in meta-schema or a supplied resource on first use. */
  private resourceFor(uri: string): ResourceEntry | undefined {
    const known = this.resources.get(uri);
    if (known) return known;
    const doc = this.extra.get(uri) ?? BUILT_IN.get(uri);
    if (doc === undefined) return undefined;
    const dialect = isObject(doc) && typeof doc.$schema === 'string' ? this.dialectFromUri(doc.$schema) : this.options.defaultDialect;
    this.scanDocument(doc, uri, dialect, `${uri}#`);
    return this.resources.get(uri);
  }

  // ---------------------------------------------------------------- references

  resolveRef(ref: string, from: NodeInfo): { node: Json; info: NodeInfo } {
    const { uri, fragment } = splitRef(ref);
    const abs = uri === '' ? from.base : resolveUri(uri, from.base);
    const unresolved = (): never => {
      throw new SchemaCompileError({ kind: 'unresolved_ref', ref }, `cannot resolve reference ${ref}`);
    };
    if (abs === undefined) return unresolved();
    const entry = this.resourceFor(abs);
    if (entry === undefined) return unresolved();
    const rootInfo = this.infoFor(entry.root, entry);
    if (fragment === '') return { node: entry.root, info: rootInfo };
    if (!fragment.startsWith('/')) {
      const node = entry.anchors.get(fragment);
      if (node === undefined) return unresolved();
      return { node, info: this.infoFor(node, entry) };
    }
    let cur: Json = entry.root;
    let info = rootInfo;
    let tail = '';
    for (const seg of pointerSegments(fragment)) {
      let next: Json | undefined;
      if (Array.isArray(cur)) next = /^(0|[1-9][0-9]*)$/.test(seg) ? cur[Number(seg)] : undefined;
      else if (isObject(cur)) next = Object.prototype.hasOwnProperty.call(cur, seg) ? cur[seg] : undefined;
      if (next === undefined) return unresolved();
      cur = next;
      const known = isObject(cur) ? this.infos.get(cur) : undefined;
      if (known) {
        info = known;
        tail = '';
      } else {
        tail += '/' + escapePointerSegment(seg);
      }
    }
    if (tail === '') return { node: cur, info };
    return { node: cur, info: { ...info, path: info.path + tail } };
  }

  // ---------------------------------------------------------------- compiling

  compileAt(node: Json, info: NodeInfo): Holder {
    if (typeof node === 'boolean') return { fn: node ? TRUE : falseSchema(info.path) };
    if (!isObject(node)) this.invalid(info.path, `a schema must be an object or a boolean, found ${jsonType(node)}`);
    const memo = this.memo.get(node);
    if (memo) return memo;
    const holder: Holder = { fn: NOT_COMPILED };
    this.memo.set(node, holder);
    holder.fn = this.compileObject(node, this.infos.get(node) ?? info);
    return holder;
  }

  private compileObject(schema: JsonObject, info: NodeInfo): Validate {
    const d = info.dialect;
    const groups: Record<KeywordGroup, Validate[]> = { any: [], number: [], string: [], array: [], object: [], last: [] };
    const isResourceRoot = info.resource.root === schema;
    const refOnly = d.version === 7 && schema.$ref !== undefined;
    const recorded: CompiledKeyword[] = [];
    const entry = { keywords: recorded, info, weight: NODE_STEPS };
    this.compiled.set(schema, entry);
    let size = 1;
    for (const keyword of Object.keys(schema)) {
      if (refOnly && keyword !== '$ref') continue;
      const value = schema[keyword];
      const w = keywordSteps(keyword, value);
      entry.weight += w;
      size += 1 + ((w - KEYWORD_STEPS) >> 2);
      const ctx = this.keywordContext(schema, keyword, value, info);
      if (keyword === '$ref' || keyword === '$dynamicRef' || keyword === '$recursiveRef') {
        if (keyword === '$dynamicRef' && d.version !== 2020) continue;
        if (keyword === '$recursiveRef' && d.version !== 2019) continue;
        const fn = compileRefKeyword(ctx);
        groups.any.push(fn);
        if (keyword === '$ref') recorded.push({ keyword, group: 'any', fn, target: this.resolveRef(value as string, info).node, code: refCode });
        else recorded.push({ keyword, group: 'any', fn });
        continue;
      }
      if (!d.keywords.has(keyword)) {
        const warning = unknownKeywordWarning(keyword, d, `${info.path}/${escapePointerSegment(keyword)}`);
        if (warning !== null) this.state.warnings.push(warning);
        continue;
      }
      const def: KeywordDefinition | undefined = KEYWORDS.get(keyword);
      if (def === undefined) continue;
      const fn = def.compile(ctx);
      if (fn !== null) {
        groups[def.group].push(fn);
        recorded.push({ keyword, group: def.group, fn, code: def.code });
      }
    }
    this.state.compiledSize += size;
    if (this.state.compiledSize > this.state.limits.maxCompiledSize) compiledSizeExceeded(this.state, info.path);
    const resource = isResourceRoot ? info.resource.record : null;
    if (isResourceRoot) {
      this.pendingDynamic.push(info.resource);
    }
    return buildNode(groups, resource, this.state, entry.weight, info.path);
  }

  /**
   * Refuses a schema whose subschemas, with every reference expanded in place,
   * outnumber WorkLimits.maxExpandedSchemaSize (a recursive reference counts
   * once: its depth is bounded by the instance). Memoized, so linear in the
   * schema even when the expansion is exponential (`allOf` of two `$ref`s to
   * the next level, 32 levels deep); names the first location that is too large.
   */
  private checkExpandedSize(root: Json, rootInfo: NodeInfo): void {
    const max = this.state.limits.maxExpandedSchemaSize;
    const memo = new Map<object, number>();
    const visiting = new Set<object>();
    const size = (node: Json, info: NodeInfo): number => {
      if (!isObject(node)) return 1;
      const known = memo.get(node);
      if (known !== undefined) return known;
      if (visiting.has(node)) return 1;
      visiting.add(node);
      const ni = this.infos.get(node) ?? info;
      let total = 1;
      const child = (v: Json, at: string): void => {
        total += size(v, this.infos.get(v as object) ?? { ...ni, path: at });
      };
      for (const k of Object.keys(node)) {
        const v = node[k];
        if (k === '$ref' || k === '$dynamicRef' || k === '$recursiveRef') {
          if (typeof v !== 'string') continue;
          let t: { node: Json; info: NodeInfo } | undefined;
          try {
            t = this.resolveRef(v, ni);
          } catch {
            continue; // reported when compiled
          }
          total += size(t.node, t.info);
        } else if (typeof v !== 'object' || v === null) {
          continue;
        } else if (Array.isArray(v)) {
          if (ARRAY_KEYWORDS.has(k)) for (let i = 0; i < v.length; i++) child(v[i], `${ni.path}/${k}/${i}`);
        } else if (SCHEMA_KEYWORDS.has(k)) {
          child(v, `${ni.path}/${escapePointerSegment(k)}`);
        } else if (MAP_KEYWORDS.has(k) && k !== '$defs' && k !== 'definitions') {
          for (const name of Object.keys(v)) child(v[name], `${ni.path}/${k}/${escapePointerSegment(name)}`);
        }
        if (total > max) {
          const reason = `expands to more than ${max} subschemas once its references are followed`;
          throw new SchemaCompileError(
            { kind: 'too_complex', path: ni.path, limit: 'maxExpandedSchemaSize', max, reason },
            `schema at ${ni.path} is too complex: ${reason}`,
          );
        }
      }
      visiting.delete(node);
      memo.set(node, total);
      return total;
    };
    size(root, rootInfo);
  }

  private keywordContext(schema: JsonObject, keyword: string, value: Json, info: NodeInfo): KeywordContext {
    const schemaPath = `${info.path}/${escapePointerSegment(keyword)}`;
    const pathOf = (segments: ReadonlyArray<string | number>, sibling?: string): string => {
      let p = sibling === undefined ? schemaPath : `${info.path}/${escapePointerSegment(sibling)}`;
      for (const s of segments) p += '/' + escapePointerSegment(s);
      return p;
    };
    return {
      keyword,
      value,
      schema,
      schemaPath,
      dialect: info.dialect,
      state: this.state,
      resource: info.resource.record,
      pathOf,
      sub: (v: Json, segments: ReadonlyArray<string | number>, sibling?: string): Validate => {
        const childInfo: NodeInfo = { ...info, path: pathOf(segments, sibling) };
        const h = this.compileAt(v, childInfo);
        if (h.fn !== NOT_COMPILED) return h.fn;
        return (data, ctx, ev) => h.fn(data, ctx, ev);
      },
      resolve: (ref: string): RefTarget => {
        const t = this.resolveRef(ref, info);
        const holder = this.compileAt(t.node, t.info);
        this.refTargets.push({ node: t.node, holder });
        this.pendingDynamic.push(t.info.resource);
        return { holder, resource: t.info.resource.record, node: t.node };
      },
      invalid: (reason: string): never => {
        return this.invalid(schemaPath, reason);
      },
    };
  }

  /** Compile the `$dynamicAnchor`s and roots of every resource entered, so the dynamic scope can find them. */
  private finishDynamic(): void {
    while (this.pendingDynamic.length > 0) {
      const entry = this.pendingDynamic.pop()!;
      const info = this.infoFor(entry.root, entry);
      if (entry.record.rootHolder === null && entry.record.recursiveAnchor) entry.record.rootHolder = this.compileAt(entry.root, info);
      for (const name of entry.dynamicAnchors) {
        if (entry.record.dynamicHolders.has(name)) continue;
        const node = entry.anchors.get(name)!;
        entry.record.dynamicHolders.set(name, this.compileAt(node, this.infoFor(node, entry)));
      }
    }
  }

  private invalid(path: string, reason: string): never {
    throw new SchemaCompileError({ kind: 'invalid_schema', path, reason }, `invalid schema at ${path}: ${reason}`);
  }
}

/** Steps charged for entering a subschema, and per keyword it holds (see WorkLimits). */
const NODE_STEPS = 4;
const KEYWORD_STEPS = 4;

/** Evaluation steps of one keyword: more for those whose work grows with their value. */
function keywordSteps(keyword: string, value: Json): number {
  switch (keyword) {
    case 'enum':
    case 'const':
      return typeof value === 'object' && value !== null ? KEYWORD_STEPS + (JSON.stringify(value).length >> 3) : KEYWORD_STEPS;
    case 'required':
      return KEYWORD_STEPS + (Array.isArray(value) ? value.length : 0);
    case 'properties':
    case 'dependentRequired':
    case 'dependentSchemas':
    case 'dependencies':
      return KEYWORD_STEPS + (isObject(value) ? Object.keys(value).length : 0);
    default:
      return KEYWORD_STEPS;
  }
}

/** `false` as a subschema: one failed check at the location it is applied to. */
function falseSchema(schemaPath: string): Validate {
  return (data, ctx) => {
    if (ctx.silent === 0) report(ctx, 'false', schemaPath, 'no value (schema false)', foundType(data), 'not be present');
    return false;
  };
}

/** One closure per subschema: type-independent keywords, then those for the instance's type, then unevaluated*. */
function buildNode(
  g: Record<KeywordGroup, Validate[]>,
  resource: ResourceRecord | null,
  state: CompileState,
  weight: number,
  path: string,
): Validate {
  const { any, number, string, array, object, last } = g;
  const typed = number.length + string.length + array.length + object.length > 0;
  const inner: Validate = (data, ctx, ev) => {
    if ((ctx.steps += weight) > ctx.maxSteps) ctx.enter(0, path);
    let ok = any.length === 0 ? true : runAll(any, data, ctx, ev);
    if (!ok && ctx.silent !== 0) return false;
    if (typed) {
      let list: Validate[] | null = null;
      switch (typeof data) {
        case 'number':
          list = number;
          break;
        case 'string':
          list = string;
          break;
        case 'object':
          if (data !== null) list = Array.isArray(data) ? array : object;
          break;
      }
      if (list !== null && list.length > 0 && !runAll(list, data, ctx, ev)) ok = false;
    }
    return ok;
  };
  let fn: Validate = inner;
  if (last.length > 0) {
    fn = (data, ctx, ev) => {
      const local = new Annotations();
      let ok = inner(data, ctx, local);
      if (!ok && ctx.silent !== 0) return false;
      if (!runAll(last, data, ctx, local)) ok = false;
      if (ev !== null) ctx.steps += ev.merge(local);
      return ok;
    };
  }
  if (resource !== null) {
    const body = fn;
    fn = (data, ctx, ev) => {
      if (!state.dynamic) return body(data, ctx, ev);
      ctx.dyn.push(resource);
      const ok = body(data, ctx, ev);
      ctx.dyn.pop();
      return ok;
    };
  }
  return fn;
}
