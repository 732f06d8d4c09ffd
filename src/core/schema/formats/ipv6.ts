/** @module `ipv6` format: RFC 4291 text form incl. `::` compression and an embedded dotted IPv4 tail; no zone id, no brackets. */
import { isIpv4 } from './ipv4.js';

const HEX_GROUP = /^[0-9a-fA-F]{1,4}$/;

function groups(part: string, allowIpv4Tail: boolean): number {
  // Returns the number of 16-bit groups `part` stands for, or -1 when malformed.
  if (part === '') return 0;
  const items = part.split(':');
  let count = 0;
  for (let i = 0; i < items.length; i++) {
    const item = items[i];
    if (HEX_GROUP.test(item)) count += 1;
    else if (allowIpv4Tail && i === items.length - 1 && isIpv4(item)) count += 2;
    else return -1;
  }
  return count;
}

export function isIpv6(value: string): boolean {
  const halves = value.split('::');
  if (halves.length > 2) return false;
  if (halves.length === 1) return groups(value, true) === 8;
  const head = groups(halves[0], false);
  const tail = groups(halves[1], true);
  return head >= 0 && tail >= 0 && head + tail <= 7;
}
