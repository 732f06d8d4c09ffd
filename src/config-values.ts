/**
 * @module The one configuration error and the setting parsers shared by every
 * configuration module (src/config.ts and src/payments/config.ts). Kept apart from
 * src/config.ts so the payment parser can use them without an import cycle; neither
 * reads the environment itself: src/config.ts hands over the values.
 */

/**
 * A setting (environment variable or command-line flag) that cannot be used.
 * Every configuration parser throws this, so callers tell it apart by type.
 */
export class ConfigError extends Error {
  /** The environment variable or flag that is wrong, e.g. `PORT`, `--port`, `X402_PAY_TO_EVM`. */
  readonly setting: string;
  /** What is wrong with it, without the name (the message is `setting: problem`). */
  readonly problem: string;
  constructor(setting: string, problem: string) {
    super(`${setting}: ${problem}`);
    this.name = 'ConfigError';
    this.setting = setting;
    this.problem = problem;
  }
}

/** A whole number in [min, max]; unset or blank gives `fallback`. */
export function intSetting(name: string, raw: string | undefined, fallback: number, min: number, max: number): number {
  if (raw === undefined || raw.trim() === '') return fallback;
  const s = raw.trim();
  if (!/^[0-9]+$/.test(s)) throw new ConfigError(name, `must be a whole number, got '${s}'`);
  const n = Number(s);
  if (!Number.isSafeInteger(n) || n < min || n > max) throw new ConfigError(name, `must be between ${min} and ${max}, got ${s}`);
  return n;
}

/** true/false (also 1/0, yes/no, on/off); unset or blank is false. */
export function boolSetting(name: string, raw: string | undefined): boolean {
  const v = (raw ?? '').trim().toLowerCase();
  if (v === '' || v === '0' || v === 'false' || v === 'no' || v === 'off') return false;
  if (v === '1' || v === 'true' || v === 'yes' || v === 'on') return true;
  throw new ConfigError(name, `must be true or false, got '${raw}'`);
}
