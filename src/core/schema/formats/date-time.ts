/** @module `date-time` format: RFC 3339 date-time (`T`/`Z` case-insensitive, offset required, leap seconds in UTC 23:59). */
import { isDate } from './date.js';
import { isTime } from './time.js';

export function isDateTime(value: string): boolean {
  const t = value.search(/[tT]/);
  if (t !== 10) return false;
  return isDate(value.slice(0, t)) && isTime(value.slice(t + 1));
}
