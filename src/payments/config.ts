/**
 * @module Payment (x402 v2) configuration: parsed and validated once from an
 * environment map handed over by src/config.ts (the only module that reads the
 * environment). Payments are off unless X402_ENABLED is set; when on, every
 * setting is checked at start so a misconfigured operator learns it before the
 * first buyer does.
 */
import { boolSetting, ConfigError, intSetting } from '../config-values.js';

/** A CAIP-2 network id, the shape @x402/core uses. */
export type Network = `${string}:${string}`;

const BASE_MAINNET: Network = 'eip155:8453';
export const SOLANA_MAINNET: Network = 'solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp';
export const BASE_USDC = '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913';
export const SOLANA_USDC = 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v';

/** Routes that can be paid for. */
export type PaidRoute = 'verify' | 'score';

export interface PaymentNetworkConfig {
  network: Network;
  family: 'evm' | 'svm';
  /** Recipient of the funds on this network. */
  payTo: string;
  /** Token contract (EVM) or mint (Solana) the price is paid in. */
  asset: string;
}

export type FacilitatorConfig =
  | {
      mode: 'remote';
      url: string;
      timeoutMs: number;
      /** Value of the Authorization header sent to the facilitator (hosted facilitators with API keys). */
      authorization: string | null;
    }
  | {
      mode: 'local';
      /** JSON-RPC endpoint of the EVM chain the built-in facilitator settles on. */
      evmRpcUrl: string | null;
      /** Private key of the account that submits settlement transactions (pays gas). */
      evmPrivateKey: `0x${string}` | null;
      /** JSON-RPC endpoint of the Solana cluster the built-in facilitator settles on. */
      svmRpcUrl: string | null;
      /**
       * File holding the Solana fee payer's key (a Solana CLI keypair file or an Ed25519 PKCS#8 PEM):
       * it co-signs every payment transaction and pays its fees. Read when payments start; never logged.
       */
      svmKeyFile: string | null;
      /** Longest wait for a settlement transaction to be confirmed before it is reported pending. */
      confirmationTimeoutMs: number;
      /**
       * Bearer token of the built-in facilitator's HTTP routes (`/facilitator/*`); null keeps
       * them off (the default). They make the settlement key pay gas, so they are never open.
       */
      routesToken: string | null;
    };

export interface PaymentConfig {
  enabled: boolean;
  facilitator: FacilitatorConfig;
  networks: PaymentNetworkConfig[];
  /** Dollar prices as "$d.dd" strings, converted to atomic units by the x402 scheme. */
  prices: Record<PaidRoute, string>;
  /** Longest authorization validity window accepted, and the window buyers are asked for. */
  maxTimeoutSeconds: number;
  /**
   * Shortest validity an authorization must have left when it arrives: the work and the
   * settlement must fit before it expires, or the buyer would be refused after the work.
   */
  minValiditySeconds: number;
  /** Bodies larger than this are never free: they always go to payment. */
  freeMaxBodyBytes: number;
}

const DEFAULT_PRICES: Record<PaidRoute, string> = { verify: '$0.02', score: '$0.01' };

const NETWORK_ALIASES: Record<string, Network> = {
  base: BASE_MAINNET,
  [BASE_MAINNET]: BASE_MAINNET,
  solana: SOLANA_MAINNET,
  [SOLANA_MAINNET]: SOLANA_MAINNET,
};

const DEFAULT_ASSETS: Record<string, string> = { [BASE_MAINNET]: BASE_USDC, [SOLANA_MAINNET]: SOLANA_USDC };

const EVM_ADDRESS_RE = /^0x[0-9a-fA-F]{40}$/;
const SOLANA_ADDRESS_RE = /^[1-9A-HJ-NP-Za-km-z]{32,44}$/;
const PRICE_RE = /^\$?(\d{1,6})(?:\.(\d{1,6}))?$/;
const PRIVATE_KEY_RE = /^0x[0-9a-fA-F]{64}$/;

/** "$0.02", "0.02" or "2" → "$0.02"-style money string; strictly positive, at most 6 decimals (USDC precision). */
export function parsePrice(name: string, raw: string | undefined, fallback: string): string {
  const v = (raw ?? '').trim();
  if (v === '') return fallback;
  const m = PRICE_RE.exec(v);
  if (!m) throw new ConfigError(name, `must be a dollar amount like $0.02 (at most 6 decimals), got '${raw}'`);
  const whole = m[1];
  const frac = m[2] ?? '';
  if (/^0+$/.test(whole) && /^0*$/.test(frac)) throw new ConfigError(name, 'must be greater than zero');
  return frac ? `$${whole}.${frac}` : `$${whole}`;
}

function parseNetworks(raw: string | undefined): Network[] {
  const v = (raw ?? '').trim();
  const items = v === '' ? [BASE_MAINNET, SOLANA_MAINNET] : v.split(',').map((s) => s.trim()).filter(Boolean);
  const out: Network[] = [];
  for (const item of items) {
    const network = NETWORK_ALIASES[item] ?? NETWORK_ALIASES[item.toLowerCase()];
    if (!network) {
      throw new ConfigError('X402_NETWORKS', `unknown network '${item}' (supported: base or ${BASE_MAINNET}, solana or ${SOLANA_MAINNET})`);
    }
    if (!out.includes(network)) out.push(network);
  }
  if (out.length === 0) throw new ConfigError('X402_NETWORKS', 'must list at least one network');
  return out;
}

const ROUTES_TOKEN_RE = /^[\x21-\x7e]{32,512}$/;

/** X402_FACILITATOR_ROUTES=true serves the built-in facilitator over HTTP, only with a token. */
function parseRoutesToken(env: Record<string, string | undefined>): string | null {
  const on = boolSetting('X402_FACILITATOR_ROUTES', env.X402_FACILITATOR_ROUTES);
  const token = (env.X402_FACILITATOR_ROUTES_TOKEN ?? '').trim();
  if (!on) return null;
  if (token === '') throw new ConfigError('X402_FACILITATOR_ROUTES_TOKEN', 'is required with X402_FACILITATOR_ROUTES=true (the routes make the settlement key pay gas)');
  if (!ROUTES_TOKEN_RE.test(token)) throw new ConfigError('X402_FACILITATOR_ROUTES_TOKEN', 'must be 32 to 512 printable characters without spaces (e.g. openssl rand -hex 32)');
  return token;
}

/** An RPC endpoint setting: empty, or an http(s) URL. */
function rpcUrlSetting(name: string, raw: string | undefined): string {
  const rpc = (raw ?? '').trim();
  if (rpc === '') return rpc;
  let u: URL;
  try {
    u = new URL(rpc);
  } catch {
    throw new ConfigError(name, `must be an http(s) URL, got '${rpc}'`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new ConfigError(name, `must be an http(s) URL, got '${rpc}'`);
  return rpc;
}

function parseFacilitator(env: Record<string, string | undefined>): FacilitatorConfig {
  const raw = (env.X402_FACILITATOR_URL ?? '').trim();
  if (raw === '') throw new ConfigError('X402_FACILITATOR_URL', "is required when payments are on: a facilitator URL or 'local'");
  if (raw.toLowerCase() === 'local') {
    const rpc = rpcUrlSetting('X402_LOCAL_EVM_RPC_URL', env.X402_LOCAL_EVM_RPC_URL);
    const key = (env.X402_LOCAL_EVM_PRIVATE_KEY ?? '').trim();
    if (key !== '' && !PRIVATE_KEY_RE.test(key)) throw new ConfigError('X402_LOCAL_EVM_PRIVATE_KEY', 'must be 0x followed by 64 hex digits');
    if ((rpc === '') !== (key === '')) {
      throw new ConfigError(rpc === '' ? 'X402_LOCAL_EVM_RPC_URL' : 'X402_LOCAL_EVM_PRIVATE_KEY', 'the local facilitator needs both X402_LOCAL_EVM_RPC_URL and X402_LOCAL_EVM_PRIVATE_KEY');
    }
    const svmRpc = rpcUrlSetting('X402_LOCAL_SVM_RPC_URL', env.X402_LOCAL_SVM_RPC_URL);
    const svmKeyFile = (env.X402_LOCAL_SVM_KEY_FILE ?? '').trim();
    if ((svmRpc === '') !== (svmKeyFile === '')) {
      throw new ConfigError(svmRpc === '' ? 'X402_LOCAL_SVM_RPC_URL' : 'X402_LOCAL_SVM_KEY_FILE', 'the local facilitator on Solana needs both X402_LOCAL_SVM_RPC_URL and X402_LOCAL_SVM_KEY_FILE');
    }
    const confirmationTimeoutMs = intSetting('X402_LOCAL_CONFIRMATION_TIMEOUT_MS', env.X402_LOCAL_CONFIRMATION_TIMEOUT_MS, 30_000, 500, 600_000);
    return {
      mode: 'local',
      evmRpcUrl: rpc || null,
      evmPrivateKey: (key || null) as `0x${string}` | null,
      svmRpcUrl: svmRpc || null,
      svmKeyFile: svmKeyFile || null,
      confirmationTimeoutMs,
      routesToken: parseRoutesToken(env),
    };
  }
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError('X402_FACILITATOR_URL', `must be an http(s) URL or 'local', got '${raw}'`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new ConfigError('X402_FACILITATOR_URL', `must be an http(s) URL or 'local', got '${raw}'`);
  if (url.search || url.hash) throw new ConfigError('X402_FACILITATOR_URL', 'must not carry a query or fragment');
  const timeoutMs = intSetting('X402_FACILITATOR_TIMEOUT_MS', env.X402_FACILITATOR_TIMEOUT_MS, 30_000, 100, 600_000);
  const authorization = (env.X402_FACILITATOR_AUTHORIZATION ?? '').trim();
  if (/[\r\n]/.test(authorization)) throw new ConfigError('X402_FACILITATOR_AUTHORIZATION', 'must be a single header value');
  return { mode: 'remote', url: raw.replace(/\/+$/, ''), timeoutMs, authorization: authorization || null };
}

/** Parse payment settings from an env-like map. Throws a ConfigError naming the bad variable. */
export function parsePaymentConfig(env: Record<string, string | undefined>): PaymentConfig {
  const enabled = boolSetting('X402_ENABLED', env.X402_ENABLED);
  const prices: Record<PaidRoute, string> = {
    verify: parsePrice('X402_PRICE_VERIFY', env.X402_PRICE_VERIFY, DEFAULT_PRICES.verify),
    score: parsePrice('X402_PRICE_SCORE', env.X402_PRICE_SCORE, DEFAULT_PRICES.score),
  };
  const maxTimeoutSeconds = intSetting('X402_MAX_TIMEOUT_SECONDS', env.X402_MAX_TIMEOUT_SECONDS, 300, 10, 3600);
  const freeMaxBodyBytes = intSetting('X402_FREE_MAX_BODY_BYTES', env.X402_FREE_MAX_BODY_BYTES, 64 * 1024, 0, 100 * 1024 * 1024);
  const minValiditySeconds = intSetting('X402_MIN_VALIDITY_SECONDS', env.X402_MIN_VALIDITY_SECONDS, 60, 10, 3600);
  if (minValiditySeconds >= maxTimeoutSeconds) {
    throw new ConfigError('X402_MIN_VALIDITY_SECONDS', `must be less than X402_MAX_TIMEOUT_SECONDS (${maxTimeoutSeconds}), got ${minValiditySeconds}`);
  }
  if (!enabled) {
    return {
      enabled: false,
      facilitator: { mode: 'local', evmRpcUrl: null, evmPrivateKey: null, svmRpcUrl: null, svmKeyFile: null, confirmationTimeoutMs: 30_000, routesToken: null },
      networks: [],
      prices,
      maxTimeoutSeconds,
      minValiditySeconds,
      freeMaxBodyBytes,
    };
  }

  const facilitator = parseFacilitator(env);
  const networks: PaymentNetworkConfig[] = parseNetworks(env.X402_NETWORKS).map((network) => {
    if (network.startsWith('eip155:')) {
      const payTo = (env.X402_PAY_TO_EVM ?? '').trim();
      if (payTo === '') throw new ConfigError('X402_PAY_TO_EVM', `is required for ${network}`);
      if (!EVM_ADDRESS_RE.test(payTo)) throw new ConfigError('X402_PAY_TO_EVM', 'must be a 0x-prefixed 20-byte hex address');
      if (/^0x0{40}$/.test(payTo)) throw new ConfigError('X402_PAY_TO_EVM', 'must not be the zero address');
      return { network, family: 'evm', payTo, asset: DEFAULT_ASSETS[network] } satisfies PaymentNetworkConfig;
    }
    const payTo = (env.X402_PAY_TO_SOLANA ?? '').trim();
    if (payTo === '') throw new ConfigError('X402_PAY_TO_SOLANA', `is required for ${network}`);
    if (!SOLANA_ADDRESS_RE.test(payTo)) throw new ConfigError('X402_PAY_TO_SOLANA', 'must be a base58 Solana address');
    if (facilitator.mode === 'local' && facilitator.svmRpcUrl === null) {
      throw new ConfigError(
        'X402_NETWORKS',
        `${network} with the built-in facilitator needs X402_LOCAL_SVM_RPC_URL and X402_LOCAL_SVM_KEY_FILE (the cluster it settles on and the fee payer), or leave it out`,
      );
    }
    return { network, family: 'svm', payTo, asset: DEFAULT_ASSETS[network] } satisfies PaymentNetworkConfig;
  });
  if (facilitator.mode === 'local' && facilitator.evmRpcUrl === null && networks.some((n) => n.family === 'evm')) {
    throw new ConfigError('X402_LOCAL_EVM_RPC_URL', 'is required with X402_FACILITATOR_URL=local on Base (the chain the built-in facilitator settles on)');
  }
  if (facilitator.mode === 'remote' && boolSetting('X402_FACILITATOR_ROUTES', env.X402_FACILITATOR_ROUTES)) {
    throw new ConfigError('X402_FACILITATOR_ROUTES', 'serves the built-in facilitator; it needs X402_FACILITATOR_URL=local');
  }
  return { enabled, facilitator, networks, prices, maxTimeoutSeconds, minValiditySeconds, freeMaxBodyBytes };
}
