/**
 * @module Configuration: defaults, flags over variables, and a clear error
 * naming the bad variable or flag; `aov serve` exits 2 on a bad setting.
 */
import { describe, expect, it } from 'vitest';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { ConfigError, loadConfig } from '../src/config.js';
import { parsePaymentConfig } from '../src/payments/config.js';
import { applyHeapGrowth, applyNoPretenuring, parseServeFlags, run } from '../src/cli/serve.js';

function errorOf(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (e) {
    if (e instanceof ConfigError) return e;
    throw e;
  }
  throw new Error('no error');
}

describe('config', () => {
  it('has the documented defaults', () => {
    const c = loadConfig({});
    expect(c).toMatchObject({
      host: '127.0.0.1',
      port: 8080,
      dataDir: path.resolve('./data'),
      databaseUrl: '',
      databaseSchema: 'public',
      serviceName: 'agent-output-verifier',
      publicBaseUrl: 'http://127.0.0.1:8080',
      freeAllowancePerDay: 1000,
      trustProxy: false,
      bodyLimitBytes: 1048576,
      maxJsonDepth: 64,
      listCap: 100,
      schemaCacheSize: 500,
      schemaCacheBytes: 64 * 1024 * 1024,
      workLimits: { maxExpandedSchemaSize: 100_000, maxPatternSize: 5_000, maxCompiledSize: 200_000, maxEvaluationSteps: 20_000_000 },
      sqliteSynchronous: 'FULL',
      logLevel: 'info',
    });
    expect(c.allowedHosts).toEqual(['localhost', '127.0.0.1', '::1']);
    expect(c.payments.enabled).toBe(false);
  });

  it('reads the work limits and the cache budget, refusing nonsense', () => {
    const c = loadConfig({ SCHEMA_MAX_EVALUATION_STEPS: '5000', SCHEMA_MAX_PATTERN_SIZE: '100', SCHEMA_CACHE_BYTES: '1048576' });
    expect(c.workLimits).toMatchObject({ maxEvaluationSteps: 5000, maxPatternSize: 100, maxExpandedSchemaSize: 100_000 });
    expect(c.schemaCacheBytes).toBe(1048576);
    expect(() => loadConfig({ SCHEMA_MAX_EVALUATION_STEPS: '0' })).toThrow(/SCHEMA_MAX_EVALUATION_STEPS/);
    expect(() => loadConfig({ SCHEMA_MAX_COMPILED_SIZE: 'lots' })).toThrow(/SCHEMA_MAX_COMPILED_SIZE/);
  });

  it('reads the heap growth cap (default 100%, 0 leaves V8 its own); serve hands it, and pretenuring off, to V8', () => {
    expect(loadConfig({}).heapGrowthPercent).toBe(100);
    expect(loadConfig({ HEAP_GROWTH_PERCENT: '0' }).heapGrowthPercent).toBe(0);
    expect(loadConfig({ HEAP_GROWTH_PERCENT: '50' }).heapGrowthPercent).toBe(50);
    expect(errorOf(() => loadConfig({ HEAP_GROWTH_PERCENT: '-1' })).message).toMatch(/HEAP_GROWTH_PERCENT/);
    expect(errorOf(() => loadConfig({ HEAP_GROWTH_PERCENT: 'small' })).message).toMatch(/HEAP_GROWTH_PERCENT/);
    const set: string[] = [];
    applyHeapGrowth(30, (f) => set.push(f));
    applyHeapGrowth(0, (f) => set.push(f));
    expect(set).toEqual(['--heap-growing-percent=30']);
    const v8: string[] = [];
    applyNoPretenuring((f) => v8.push(f));
    expect(v8).toEqual(['--no-allocation-site-pretenuring']);
  });

  it('flags win over variables; the public URL host joins the allowed hosts', () => {
    const c = loadConfig(
      { PORT: '9000', TRUST_PROXY: 'false', PUBLIC_BASE_URL: 'https://verifier.example.com/' },
      parseServeFlags(['--port', '9100', '--trust-proxy', '--free-allowance=5', '--host', '0.0.0.0']),
    );
    expect(c.port).toBe(9100);
    expect(c.trustProxy).toBe(1);
    expect(c.freeAllowancePerDay).toBe(5);
    expect(c.publicBaseUrl).toBe('https://verifier.example.com');
    expect(c.allowedHosts).toContain('verifier.example.com');
    expect(loadConfig({ HOST: '0.0.0.0', PORT: '81' }).publicBaseUrl).toBe('http://127.0.0.1:81');
  });

  it('TRUST_PROXY: off, a hop count, or trusted addresses/CIDRs', () => {
    expect(loadConfig({}).trustProxy).toBe(false);
    expect(loadConfig({ TRUST_PROXY: 'false' }).trustProxy).toBe(false);
    expect(loadConfig({ TRUST_PROXY: '0' }).trustProxy).toBe(false);
    expect(loadConfig({ TRUST_PROXY: 'true' }).trustProxy).toBe(1);
    expect(loadConfig({ TRUST_PROXY: '2' }).trustProxy).toBe(2);
    expect(loadConfig({ TRUST_PROXY: '127.0.0.1, 10.0.0.0/8,::1' }).trustProxy).toEqual(['127.0.0.1', '10.0.0.0/8', '::1']);
    expect(loadConfig({}, parseServeFlags(['--trust-proxy', '10.1.2.3'])).trustProxy).toEqual(['10.1.2.3']);
  });

  it('names the bad variable or flag', () => {
    expect(errorOf(() => loadConfig({ PORT: '70000' })).setting).toBe('PORT');
    expect(errorOf(() => loadConfig({ PORT: 'abc' })).message).toContain("PORT: must be a whole number, got 'abc'");
    expect(errorOf(() => loadConfig({}, { port: '-1' })).setting).toBe('--port');
    expect(errorOf(() => loadConfig({ TRUST_PROXY: 'maybe' })).setting).toBe('TRUST_PROXY');
    expect(errorOf(() => loadConfig({ TRUST_PROXY: '10.0.0.0/99' })).setting).toBe('TRUST_PROXY');
    expect(errorOf(() => loadConfig({ DATABASE_URL: 'mysql://x' })).setting).toBe('DATABASE_URL');
    expect(errorOf(() => loadConfig({ DATABASE_SCHEMA: 'Bad-Name' })).setting).toBe('DATABASE_SCHEMA');
    expect(errorOf(() => loadConfig({ DATABASE_POOL_SIZE: '1' })).setting).toBe('DATABASE_POOL_SIZE');
    expect(loadConfig({}).databasePoolSize).toBe(10);
    expect(loadConfig({ DATABASE_POOL_SIZE: '4' }).databasePoolSize).toBe(4);
    expect(errorOf(() => loadConfig({ PUBLIC_BASE_URL: 'ftp://x' })).setting).toBe('PUBLIC_BASE_URL');
    expect(errorOf(() => loadConfig({ LOG_LEVEL: 'loud' })).setting).toBe('LOG_LEVEL');
    expect(errorOf(() => loadConfig({ SQLITE_SYNCHRONOUS: 'OFF' })).setting).toBe('SQLITE_SYNCHRONOUS');
    expect(loadConfig({ SQLITE_SYNCHRONOUS: 'normal' }).sqliteSynchronous).toBe('NORMAL');
    expect(errorOf(() => loadConfig({ BODY_LIMIT_BYTES: '10' })).setting).toBe('BODY_LIMIT_BYTES');
    expect(errorOf(() => loadConfig({ X402_ENABLED: 'perhaps' })).setting).toBe('X402_ENABLED');
    expect(errorOf(() => parseServeFlags(['--colour', 'red'])).setting).toBe('--colour');
    expect(errorOf(() => parseServeFlags(['--port'])).setting).toBe('--port');
  });

  it('payment settings fail with the same ConfigError, name and problem apart', () => {
    const direct = errorOf(() => parsePaymentConfig({ X402_ENABLED: 'true', X402_FACILITATOR_URL: 'ftp://x' }));
    expect(direct.setting).toBe('X402_FACILITATOR_URL');
    expect(direct.problem).toBe("must be an http(s) URL or 'local', got 'ftp://x'");
    expect(direct.message).toBe(`X402_FACILITATOR_URL: ${direct.problem}`);
    const viaLoad = errorOf(() => loadConfig({ X402_ENABLED: 'true', X402_FACILITATOR_URL: 'local', X402_NETWORKS: 'base', X402_LOCAL_EVM_RPC_URL: 'http://127.0.0.1:8545' }));
    expect(viaLoad.setting).toBe('X402_LOCAL_EVM_PRIVATE_KEY');
    expect(errorOf(() => loadConfig({ X402_MAX_TIMEOUT_SECONDS: 'soon' })).problem).toBe("must be a whole number, got 'soon'");
  });

  it('only src/config.ts reads the environment', () => {
    const root = path.resolve(import.meta.dirname, '../src');
    const readers = (readdirSync(root, { recursive: true }) as string[])
      .filter((f) => /\.tsx?$/.test(f) && !/\.test\.tsx?$/.test(f))
      .filter((f) => /\bprocess\.env\b/.test(readFileSync(path.join(root, f), 'utf8')))
      .map((f) => f.split(path.sep).join('/'));
    expect(readers).toEqual(['config.ts']);
  });

  it('aov serve exits 2 with the message on a bad setting', async () => {
    let err = '';
    const code = await run(['--port', 'x'], { stdout: () => undefined, stderr: (t) => void (err += t), readFile: () => '' });
    expect(code).toBe(2);
    expect(err).toBe("aov serve: invalid configuration: --port: must be a whole number, got 'x'\n");
  });
});
