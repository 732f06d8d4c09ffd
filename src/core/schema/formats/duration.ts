/** @module `duration` format: RFC 3339 Appendix A (ISO 8601 subset; no fractions, no signs, weeks alone). */

const SEC = '[0-9]+S';
const MIN = `[0-9]+M(?:${SEC})?`;
const HOUR = `[0-9]+H(?:${MIN})?`;
const TIME = `T(?:${HOUR}|${MIN}|${SEC})`;
const DAY = '[0-9]+D';
const MONTH = `[0-9]+M(?:${DAY})?`;
const YEAR = `[0-9]+Y(?:${MONTH})?`;
const DURATION = new RegExp(`^P(?:(?:${DAY}|${MONTH}|${YEAR})(?:${TIME})?|${TIME}|[0-9]+W)$`);

export function isDuration(value: string): boolean {
  return DURATION.test(value);
}
